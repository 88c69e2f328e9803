/**
 * Short robustness runs (run.ts) of every target and profile, each with one fault: kvlog's failpoints
 * panic inside the server (it is started again), etcd takes process and network faults. Every run must
 * end with a linearizable history, no watch violation and no acknowledged write lost, and must really
 * have hit its fault. `npm run robustness` runs longer ones (docs/robustness.md).
 */
import { expect } from 'chai'
import { runRobustness, type RunOptions } from './run.js'

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
  for (const run of RUNS) {
    it(`${run.target}, ${run.profile} traffic, ${run.failpoint}: linearizable, watches hold, nothing acknowledged lost`, async () => {
      const r = await runRobustness({ ...run, durationSeconds: 5, seed: SEED })
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
})
