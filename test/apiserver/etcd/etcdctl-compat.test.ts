/**
 * Debian's etcdctl (3.4) against every target: a real etcd 3.4 on loopback and kvlog's etcd v3 door.
 * Each target gets a fresh store and runs the same sequence of commands (etcdctl-kv-cases.ts, then
 * etcdctl-lease-cases.ts) with exact expected outputs and revisions; every step is recorded, normalized,
 * and the last block checks that kvlog's transcript is identical to etcd's, step by step.
 *
 * `etcdctl check perf --load=s` takes a fixed 60 s, so it runs in the background on a separate store per
 * target while the other cases run, and its result is checked at the end.
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
        it(c.title, () => c.run(session))
      }

      it('check perf --load=s passes (60 s, run in the background)', async () => {
        const r = await perfRuns.get(target.name)!
        const verdicts = r.stdout.split(/[\r\n]+/).filter((l) => /^(PASS|FAIL)/.test(l))
        const summary = verdicts.map((l) => l.replace(/ (is|took) .*$/, ''))
        expect(summary, verdicts.join('\n') + r.stderr).to.deep.equal(['PASS: Throughput', 'PASS: Slowest request', 'PASS: Stddev', 'PASS'])
        expect(r.code).to.equal(0)
      })
    })
  }

  for (const target of targets.filter((t) => t.name !== 'etcd')) {
    it(`${target.name} printed exactly what etcd printed, step by step (ids normalized, revisions exact)`, () => {
      const reference = transcripts.get('etcd')
      const actual = transcripts.get(target.name)
      expect(reference?.length ?? 0, 'etcd transcript steps').to.be.above(0)
      expect(actual?.length ?? 0, `${target.name} transcript steps`).to.be.above(0)
      expect(diffTranscripts(reference!, actual!), 'steps that differ').to.deep.equal([])
    })
  }
})
