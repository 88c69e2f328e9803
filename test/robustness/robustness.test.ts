/**
 * Short robustness runs (run.ts) of every target and profile, each with one fault: kvlog's failpoints
 * panic inside the server (it is started again), etcd takes process and network faults. Every run must
 * end with a linearizable history, no watch violation and no acknowledged write lost, and must really
 * have hit its fault. `npm run robustness` runs longer ones (docs/robustness.md).
 */
import { expect } from 'chai'
import { isError } from './linearizability/types.js'
import { runRobustness, type RunOptions } from './run.js'
import { verdict, type Recorded } from './verdict.js'

const SEED = Number(process.env.KVLOG_TEST_SEED ?? 20261128)

const RUNS: Array<Omit<RunOptions, 'seed' | 'durationSeconds'>> = [
  { target: 'etcd', profile: 'kubernetes', failpoint: 'kill' },
  { target: 'etcd', profile: 'etcd', failpoint: 'network' },
  { target: 'kvlog', profile: 'kubernetes', failpoint: 'beforeCommit' },
  { target: 'kvlog', profile: 'etcd', failpoint: 'afterCommit' },
  { target: 'cluster', profile: 'kubernetes', failpoint: 'applierAfterApply' },
  { target: 'cluster', profile: 'etcd', failpoint: 'beforePublish' },
]

describe('robustness: short runs against etcd, kvlog and a kvlog cluster', function () {
  this.timeout(120_000)
  const recordings = new Map<string, Recorded>()
  for (const run of RUNS) {
    it(`${run.target}, ${run.profile} traffic, ${run.failpoint}: linearizable, watches hold, nothing acknowledged lost`, async () => {
      const { report: r, recorded } = await runRobustness({ ...run, durationSeconds: 5, seed: SEED })
      recordings.set(`${run.target}/${run.profile}`, recorded)
      const { details, ...figures } = r
      console.log(`      ${JSON.stringify(figures)}`)
      expect(r.linearizability, details.join('\n')).to.equal('ok')
      expect(r.watchViolations, details.join('\n')).to.equal(0)
      expect(r.lostAckedWrites).to.equal(0)
      expect(r.operations).to.be.greaterThan(100)
      expect(r.watchEvents).to.be.greaterThan(0)
      if (run.failpoint === 'kill' || run.target !== 'etcd') expect(r.restarts, 'the fault restarted the server').to.be.at.least(1)
      if (run.target !== 'etcd') expect(r.failpointHits, 'the failpoint was hit').to.be.at.least(1)
    })
  }

  it("the same checks catch doctored copies of a real run's recording", () => {
    const real = recordings.get('kvlog/kubernetes')
    if (real === undefined) throw new Error('the kvlog kubernetes run recorded nothing')
    expect(verdict('kvlog', real).linearizability).to.equal('ok')

    const staleRead = structuredClone(real)
    const read = staleRead.history.find((op) => !isError(op.output) && 'range' in op.output && op.output.range.kvs.length > 0)!
    ;(read.output as { range: { kvs: Array<{ value: string }> } }).range.kvs[0]!.value = 'doctored'
    expect(verdict('kvlog', staleRead).linearizability).to.equal('illegal')

    const gap = structuredClone(real)
    const stream = gap.watches.find((w) => !w.id.startsWith('tap#') && w.responses.some((r) => r.events.length > 0))!
    stream.responses.find((r) => r.events.length > 0)!.events.shift()
    expect(verdict('kvlog', gap).watchViolations).to.be.at.least(1)

    const lost = structuredClone(real)
    const put = lost.history.find(
      (op) =>
        op.input.type === 'txn' &&
        !isError(op.output) &&
        'succeeded' in op.output &&
        op.output.succeeded &&
        op.input.success[0]?.type === 'put',
    )!
    const value = (put.input as { success: Array<{ value: string }> }).success[0]!.value
    for (const w of lost.watches)
      if (w.id.startsWith('tap#')) for (const r of w.responses) r.events = r.events.filter((e) => e.kv.value !== value)
    expect(verdict('kvlog', lost).lostAckedWrites).to.be.at.least(1)
  })
})
