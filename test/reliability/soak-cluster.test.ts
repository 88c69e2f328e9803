/**
 * The short cluster soak (the long one is `npm run soak -- --cluster`): three nats-servers and three
 * `kvlog serve` members, clients on every member over the etcd and native doors, watches that resume on
 * another member, compaction, and every kind of cluster fault once (a nats-server killed and paused, the
 * leader and a follower killed and paused, a member's NATS connection cut, every watch connection
 * moved). The history checker must find no violation, no acknowledged write may be lost, and every
 * member must end with the same history and state as the oracle (no fork).
 */
import { expect } from 'chai'
import { CLUSTER_FAULT_KINDS } from './soak/cluster-faults.js'
import { runClusterSoak, type ClusterSoakReport } from './soak/cluster-run.js'

const SEED = Number(process.env.KVLOG_TEST_SEED ?? 20261125)

describe('reliability: short cluster soak (3 nats-servers, 3 members, every cluster fault, history checker)', function () {
  this.timeout(400_000)
  let report: ClusterSoakReport

  before(async function () {
    this.timeout(400_000)
    ;({ report } = await runClusterSoak({ durationSeconds: 30, seed: SEED, faultEveryMs: [1000, 2500], everyFault: true }))
    console.log(`      ${JSON.stringify({ ...report, violationSamples: report.violationSamples.slice(0, 5) })}`)
  })

  it('finds no violation, loses no acknowledged write, and no member crashed', () => {
    expect(report.violationSamples, `seed ${SEED}`).to.deep.equal([])
    expect(report.violations).to.equal(0)
    expect(report.ackedWritesLost).to.equal(0)
    expect(report.failedButApplied).to.equal(0)
    expect(report.crashes).to.equal(0)
  })

  it('ends with one history on every member: same revision, same events, same state (no fork)', () => {
    expect(report.forks).to.equal(0)
    expect(new Set(Object.values(report.memberRevisions)).size).to.equal(1)
    expect(Object.keys(report.memberRevisions)).to.have.length(3)
  })

  it('really exercised the cluster: both doors, every fault kind, restarts, compactions, watches resumed on other members', () => {
    expect(report.operationsByDoor.native ?? 0, 'native').to.be.greaterThan(100)
    expect(report.operationsByDoor.grpc ?? 0, 'grpc').to.be.greaterThan(100)
    expect(report.ackedWrites).to.be.greaterThan(150)
    expect(report.watchEvents).to.be.greaterThan(500)
    expect(report.restarts).to.be.at.least(2)
    expect(report.compactions).to.be.at.least(1)
    expect(report.crossMemberResumes).to.be.at.least(3)
    for (const kind of CLUSTER_FAULT_KINDS) expect(report.faultsInjected[kind] ?? 0, kind).to.be.at.least(1)
  })
})
