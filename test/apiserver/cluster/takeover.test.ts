/**
 * Leader takeover of real processes (three nats-servers, three `kvlog serve` members) with a long leader
 * lease (30 s, renewed every 10 s), so that the lease's expiry cannot be what ends a leadership here:
 * - a leader that is stopped (SIGSTOP: its NATS connection stays up) keeps its lease: the members' probes
 *   find it subscribed and nobody takes over;
 * - a leader that is killed (its connection closes) is replaced long before its lease would expire: a
 *   write through a follower is accepted again within seconds;
 * - the killed member comes back as a follower with the same history as the others.
 */
import { expect } from 'chai'
import { listPrefix, putKey, startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { sleep } from '../../support/wait.js'

interface ClusterStatus {
  leader: string
  epoch: number
}

describe('kvlog cluster: leader takeover when the leader is gone (3 nats-servers, 3 kvlog serve processes)', function () {
  this.timeout(180_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'takeover', 3, ['--leader-lease', '30s'])
    for (const m of cluster.members) await waitReady(m)
  })
  after(async function () {
    this.timeout(60_000)
    for (const m of cluster?.members ?? []) m.proc?.child.kill('SIGCONT')
    await cluster?.cleanup()
    await nats?.stop()
  })

  const status = async (i: number): Promise<ClusterStatus> => {
    const res = await fetch(`${cluster.members[i].http}/v1/status`, { signal: AbortSignal.timeout(5000) })
    return ((await res.json()) as { cluster: ClusterStatus }).cluster
  }
  const leaderIndex = async (asked: number): Promise<number> => {
    const s = await status(asked)
    return cluster.members.findIndex((m) => m.name === s.leader)
  }

  it('leaves the lease with a leader that is stopped but still connected', async function () {
    const li = await leaderIndex(0)
    expect(li).to.be.at.least(0)
    const before = await status(li)
    const followers = [0, 1, 2].filter((i) => i !== li)
    cluster.members[li].proc!.child.kill('SIGSTOP')
    try {
      // Longer than a renewal period (every member probes the leader at least once), shorter than the lease.
      await sleep(12_000)
      for (const f of followers) {
        const s = await status(f)
        expect(s.leader, `leader seen by ${cluster.members[f].name}`).to.equal(cluster.members[li].name)
        expect(s.epoch).to.equal(before.epoch)
      }
    } finally {
      cluster.members[li].proc!.child.kill('SIGCONT')
    }
    expect(await putKey(cluster.members[followers[0]], 'takeover/stopped', 'v')).to.be.greaterThan(0)
    expect((await status(li)).epoch).to.equal(before.epoch)
  })

  it('replaces a killed leader long before its lease expires, and takes it back as a follower', async function () {
    const li = await leaderIndex(0)
    const before = await status(li)
    const followers = [0, 1, 2].filter((i) => i !== li)
    await cluster.stop(li, 'SIGKILL')
    const killed = Date.now()
    // Past the moment the servers drop the killed member's subscriptions (a write sent into that moment
    // may be delivered to nobody and waits out its outcome).
    await sleep(1000)
    let revision = 0
    while (revision === 0 && Date.now() - killed < 15_000) {
      revision = await putKey(cluster.members[followers[0]], 'takeover/killed', 'v').catch(() => 0)
      if (revision === 0) await sleep(100)
    }
    // The lease (30 s, renewed every 10 s) would have ended no earlier than 20 s after the kill.
    expect(revision, 'a write accepted within 15 s of the kill').to.be.greaterThan(0)
    // The other follower learns of the new leader at its next tick (every 10 s here).
    let after = await status(followers[1])
    for (const until = Date.now() + 20_000; after.epoch === before.epoch && Date.now() < until; after = await status(followers[1])) {
      await sleep(100)
    }
    expect(after.leader).to.not.equal(cluster.members[li].name)
    expect(after.leader).to.not.equal('')
    expect(after.epoch).to.be.greaterThan(before.epoch)

    await cluster.start(li)
    await waitReady(cluster.members[li], 60_000)
    expect(await putKey(cluster.members[li], 'takeover/back', 'v')).to.be.greaterThan(revision)
    const lists = await Promise.all(cluster.members.map((m) => listPrefix(m, 'takeover/')))
    for (const l of lists) expect(l.kvs).to.deep.equal(lists[0].kvs)
    expect(lists[0].kvs.map((kv) => kv.key)).to.deep.equal(['takeover/back', 'takeover/killed', 'takeover/stopped'])
    expect((await status(li)).leader).to.equal(after.leader)
  })
})
