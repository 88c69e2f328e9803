/**
 * A cluster write is acknowledged once a majority of members has fsynced it: counted as fdatasync/fsync
 * calls on the members' data dirs by a real strace on real `kvlog serve` members (over a real NATS
 * cluster). Writes made one after the other cannot share a sync, so every acknowledged write adds at
 * least a majority's worth of syncs.
 */
import { expect } from 'chai'
import { putKey, startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { traceSyncs } from '../../support/strace.js'

const WRITES = 20
const MEMBERS = 3

describe('cluster members: acknowledged writes are synced by a majority (strace)', function () {
  this.timeout(180_000)
  let nats: NatsCluster | undefined
  let cluster: ClusterProcesses | undefined

  after(async () => {
    await cluster?.cleanup()
    await nats?.stop()
  })

  it('adds at least a majority of member syncs per acknowledged write', async () => {
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'synced', MEMBERS)
    for (const m of cluster.members) await waitReady(m)
    await putKey(cluster.members[0], '/synced/warm', 'x')
    const traces = await Promise.all(cluster.members.map((m) => traceSyncs(m.proc!.child.pid!)))
    for (let i = 0; i < WRITES; i++) await putKey(cluster.members[i % MEMBERS], `/synced/${i}`, `v${i}`)
    const syncs = await Promise.all(traces.map((t, i) => t.stop(cluster!.members[i].dir)))
    const counts = syncs.map((s) => s.length)
    const majority = Math.floor(MEMBERS / 2) + 1
    expect(
      counts.reduce((a, b) => a + b, 0),
      `syncs per member ${counts.join(', ')}`,
    ).to.be.at.least(majority * WRITES)
  })
})
