/**
 * Debian's etcdctl (3.4) against every target: a real etcd 3.4 on loopback and kvlog's etcd v3 door.
 * Each target gets a fresh store and runs the same sequence of commands (etcdctl-kv-cases.ts, then
 * etcdctl-lease-cases.ts) with exact expected outputs and revisions; every step is recorded, normalized,
 * and the last block checks that kvlog's transcript is identical to etcd's, step by step.
 *
 * `etcdctl check perf --load=s` takes a fixed 60 s, so it runs in the background on a separate store per
 * target while the cases of all targets run, and its results are checked last.
 */
import { expect } from 'chai'
import { etcdctl, type EtcdctlRun } from '../../support/etcdctl.js'
import { kvCases } from './etcdctl-kv-cases.js'
import { leaseCases } from './etcdctl-lease-cases.js'
import { diffTranscripts, EtcdctlSession, type Step } from './etcdctl-session.js'
import { targets, type Started } from './targets.js'

const transcripts = new Map<string, Step[]>()

describe('etcdctl compatibility (etcd 3.4 and kvlog)', function () {
  this.timeout(120_000)
  const perfStores: Started[] = []
  const perfRuns = new Map<string, Promise<EtcdctlRun>>()

  before(async () => {
    for (const target of targets) {
      const store = await target.start()
      perfStores.push(store)
      perfRuns.set(target.name, etcdctl(store.endpoint, ['check', 'perf', '--load=s'], { timeoutMs: 110_000 }))
    }
  })

  after(async () => {
    await Promise.allSettled([...perfRuns.values()])
    await Promise.all(perfStores.map((s) => s.stop()))
  })

  for (const target of targets) {
    describe(target.name, () => {
      let store: Started
      let session: EtcdctlSession

      before(async () => {
        store = await target.start()
        session = new EtcdctlSession(store.endpoint)
        transcripts.set(target.name, session.transcript)
      })

      after(async () => {
        await store?.stop()
      })

      for (const c of [...kvCases, ...leaseCases]) {
        it(c.title, async () => {
          await c.run(session)
          const failures = session.takeFailures()
          if (failures.length > 0) expect.fail(`${failures.length} difference(s):\n  ${failures.join('\n  ')}`)
        })
      }
    })
  }

  // After the per-target runs (mocha runs a suite's own tests before its child suites, hence a suite).
  describe('identical results', () => {
    for (const target of targets.filter((t) => t.name !== 'etcd')) {
      it(`${target.name} printed exactly what etcd printed, step by step (ids normalized, revisions exact)`, () => {
        const reference = transcripts.get('etcd') ?? []
        const actual = transcripts.get(target.name) ?? []
        expect(reference.length, 'etcd transcript steps').to.be.above(50)
        const diffs = diffTranscripts(reference, actual)
        if (diffs.length > 0) expect.fail(`${diffs.length} of ${reference.length} steps differ:\n${diffs.join('\n')}`)
      })
    }
  })

  // Last, so that the cases of every target run while check perf does. Its pass marks are absolute
  // (throughput >= 90% of 150 writes/s, slowest request <= 0.5 s, stddev <= 0.1 s); on this shared 2-core
  // machine, with the cases of both targets running beside it, a run can miss one. Such a run is repeated
  // once with nothing of this suite beside it, and both verdicts are shown. Every target must run the check
  // to its verdict; the others must pass where etcd passed in the same run (a machine too busy for etcd to
  // meet the marks says nothing about the others).
  describe('check perf --load=s (60 s, started in the background by the first hook)', () => {
    const passed = new Map<string, boolean>()
    for (const target of targets) {
      it(`${target.name} runs it to a verdict${target.name === 'etcd' ? '' : ', and passes where etcd passed'}`, async function () {
        this.timeout(180_000)
        let verdict = perfVerdict(await perfRuns.get(target.name)!)
        if (!verdict.passed) {
          const store = perfStores[targets.indexOf(target)]!
          const retry = perfVerdict(
            await etcdctl(store.endpoint, ['check', 'perf', '--load=s', '--prefix', '/check-perf-again/'], { timeoutMs: 110_000 }),
          )
          verdict = { passed: retry.passed, lines: [...verdict.lines, '(run again alone)', ...retry.lines] }
        }
        expect(verdict.lines.join('\n'), 'a throughput and a final verdict').to.match(/Throughput is \d+ writes\/s[\s\S]*\n(PASS|FAIL)$/)
        passed.set(target.name, verdict.passed)
        if (target.name === 'etcd' || passed.get('etcd') === true) {
          if (target.name !== 'etcd') expect(verdict.passed, verdict.lines.join('\n')).to.equal(true)
        } else console.log(`      etcd missed the marks in this run too; ${target.name}: ${verdict.lines.join('; ')}`)
        if (!verdict.passed) console.log(`      ${target.name}: ${verdict.lines.join('; ')}`)
      })
    }
  })
})

/** The verdict lines of `etcdctl check perf` and whether all of them passed. */
function perfVerdict(r: EtcdctlRun): { passed: boolean; lines: string[] } {
  // etcdctl colours FAIL (ANSI escapes) and draws a progress bar with \r that a verdict may follow directly.
  // eslint-disable-next-line no-control-regex
  const plain = r.stdout.replace(/\x1b\[[0-9;]*m/g, '')
  const lines = [...plain.matchAll(/(PASS|FAIL): (Throughput|Slowest request|Stddev)[^\r\n]*/g)].map((m) => m[0])
  const final = /(?:^|[\r\n])(PASS|FAIL)\s*$/.exec(plain)?.[1]
  const passed = r.code === 0 && final === 'PASS' && lines.length === 3 && lines.every((l) => l.startsWith('PASS'))
  return { passed, lines: lines.length > 0 ? [...lines, final ?? '(no final verdict)'] : [plain.slice(-300) + r.stderr] }
}
