/**
 * A dead member, as etcdctl sees it (real nats-servers, real `kvlog serve` members, Debian's etcdctl):
 * MemberList keeps its client URLs, so `etcdctl endpoint status --cluster` reports it unreachable and
 * exits non-zero, as against etcd; and one failover moves the term (RAFT TERM) by the leaderships won
 * since, not by the lease bucket's revisions.
 */
import { expect } from 'chai'
import { etcdctl } from '../../support/etcdctl.js'
import { clusterPerBlock, putKey, type Member } from '../../support/cluster-processes.js'
import { waitUntil } from '../../support/wait.js'

interface ClusterStatus {
  cluster: { leader: string; term: number; epoch: number }
}

async function clusterStatus(m: Member): Promise<ClusterStatus['cluster']> {
  return ((await (await fetch(`${m.http}/v1/status`)).json()) as ClusterStatus).cluster
}

/** Leaderships member m has won (kvlog_cluster_leader_changes). */
async function leadershipsWon(m: Member): Promise<number> {
  const text = await (await fetch(`${m.http}/metrics`)).text()
  return Number(/^kvlog_cluster_leader_changes (\d+)$/m.exec(text)?.[1] ?? NaN)
}

describe('a dead cluster member in etcdctl endpoint status --cluster', function () {
  this.timeout(90_000)
  const processes = clusterPerBlock('dead')

  it('lists the killed leader with its URL (an error row, exit non-zero) and moves the term once per leadership', async () => {
    const cluster = processes()
    const { members } = cluster
    await putKey(members[0], 'dead/a', '1')
    let before = await clusterStatus(members[0])
    await waitUntil('a leader with a term', async () => (before = await clusterStatus(members[0])).term > 0, 30_000)
    const li = members.findIndex((m) => m.name === before.leader)
    expect(li).to.be.at.least(0)
    const deadUrl = members[li].grpc
    const survivors = members.filter((_, i) => i !== li)
    // Every survivor has read the leader's record (its URLs) once its own record is renewed.
    await waitUntil(
      'every member listed with its URL',
      async () => {
        const list = await etcdctl(survivors[0].grpc, ['member', 'list', '-w', 'json'])
        const parsed = JSON.parse(list.stdout) as { members: Array<{ clientURLs?: string[] }> }
        return parsed.members.length === 3 && parsed.members.every((m) => m.clientURLs?.length === 1)
      },
      30_000,
    )
    const wonBefore = await Promise.all(survivors.map(leadershipsWon))

    await cluster.stop(li, 'SIGKILL')
    await waitUntil(
      'a write after the failover',
      () =>
        putKey(survivors[0], 'dead/b', '2').then(
          () => true,
          () => false,
        ),
      60_000,
    )

    const status = await etcdctl(survivors[0].grpc, ['endpoint', 'status', '--cluster', '-w', 'json'], { timeoutMs: 60_000 })
    expect(status.code, 'exit status with a member down').to.not.equal(0)
    expect(status.stderr).to.include(deadUrl)
    const rows = JSON.parse(status.stdout) as Array<{ Endpoint: string; Status: { raftTerm: number } }>
    expect(rows.map((r) => r.Endpoint).sort()).to.deep.equal(survivors.map((m) => m.grpc).sort())

    const after = await clusterStatus(survivors[0])
    const won = (await Promise.all(survivors.map(leadershipsWon))).reduce((n, w, i) => n + w - wonBefore[i], 0)
    expect(after.leader).to.not.equal(before.leader)
    expect(won, 'leaderships won since the kill').to.be.at.least(1)
    expect(after.term - before.term, `term ${before.term} → ${after.term}`).to.be.within(1, won)
    for (const r of rows) expect(r.Status.raftTerm).to.equal(after.term)
  })
})
