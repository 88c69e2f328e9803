/**
 * The cluster engine behind Maintenance.Snapshot: a write history (txns, a delete, a lease, a compaction)
 * goes through one member of a two-member kvlog cluster (three nats-servers), `etcdctl snapshot save` is
 * taken from the other member, and a real etcd 3.4 restored from it serves the same Range at every retained
 * revision and the same history as the cluster.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { rangeAll, revisionOf, watchAll } from '../../support/etcd-compare.js'
import { startEtcd, type EtcdProcess } from '../../support/etcd-process.js'
import { connectEtcd3 } from '../../support/etcd3-proto.js'
import { etcdctl } from '../../support/etcdctl.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'

const b = (s: string) => Buffer.from(s)

describe('etcd snapshots: from a kvlog cluster member', function () {
  this.timeout(180_000)
  let nats: NatsCluster | undefined
  let cluster: ClusterProcesses | undefined
  let etcd: EtcdProcess | undefined
  let tmp: string

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-cluster-snap-'))
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'snap', 2)
    for (const m of cluster.members) await waitReady(m)
  })

  after(async () => {
    await etcd?.stop()
    await cluster?.cleanup()
    await nats?.stop()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it("a member's snapshot restores into an etcd with the cluster's revisions, states and history", async () => {
    const [m0, m1] = cluster!.members
    const writer = connectEtcd3(m0.grpc)
    const reader = connectEtcd3(m1.grpc)
    try {
      const put = (key: string, value: string) => ({ request_put: { key: b(key), value: b(value) } })
      await writer.call('KV', 'Txn', { compare: [], success: [put('/a', 'a1'), put('/b', 'b1'), put('/c', 'c1')] })
      await writer.call('KV', 'Put', { key: b('/a'), value: b('a2') })
      const floor = revisionOf(await writer.call('KV', 'DeleteRange', { key: b('/b') }))
      await writer.call('KV', 'Compact', { revision: floor, physical: true })
      const lease = String((await writer.call('Lease', 'LeaseGrant', { TTL: 600 })).ID)
      await writer.call('KV', 'Put', { key: b('/l'), value: b('held'), lease })
      await writer.call('KV', 'Txn', { compare: [], success: [put('/c', 'c2'), put('/d', 'd1')] })
      const head = revisionOf(await writer.call('KV', 'Put', { key: b('/a'), value: b('a3') }))
      // A linearizable read on the other member: it has applied everything up to head.
      expect(revisionOf(await reader.call('KV', 'Range', { key: b('/a') }))).to.be.at.least(head)

      const file = join(tmp, 'member.db')
      const saved = await etcdctl(m1.grpc, ['snapshot', 'save', file])
      expect(saved.code, saved.stderr).to.equal(0)
      const status = JSON.parse((await etcdctl(m1.grpc, ['snapshot', 'status', file, '-w', 'json'])).stdout) as { revision: number }
      expect(status.revision).to.equal(head)
      etcd = await startEtcd({ restoreFrom: file })
      const restored = connectEtcd3(etcd.endpoint)
      try {
        for (let rev = floor; rev <= head; rev++)
          expect(await rangeAll(restored, rev), `Range at ${rev}`).to.deep.equal(await rangeAll(writer, rev))
        expect(await watchAll(restored, floor + 1, head)).to.deep.equal(await watchAll(writer, floor + 1, head))
        const leases = await restored.call('Lease', 'LeaseLeases', {})
        expect((leases.leases as Array<{ ID: unknown }>).map((l) => String(l.ID))).to.deep.equal([lease])
      } finally {
        restored.close()
      }
    } finally {
      writer.close()
      reader.close()
    }
  })
})
