/**
 * Moving from etcd into a cluster: `kvlog import --from-etcd` once, a copy of the imported data dir in
 * every member's data dir, then the members start over a new JetStream stream (real etcd 3.4, real
 * nats-server, real `kvlog serve --nats-url` members). Every member serves etcd's revisions and state; the
 * first write through either member gets etcd's head + 1 and reaches the other. A member started with an
 * empty data dir (before any snapshot exists) refuses the stream instead of numbering its writes anew.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { importFromEtcd } from '../../../apiserver/etcd-follow/import-etcd.js'
import { eventually } from '../../clients/informer/helpers.js'
import { listPrefix, putKey, startMembers, type ClusterProcesses } from '../../support/cluster-processes.js'
import { startServerProcess } from '../../support/server-process.js'
import { rangeAll, revisionOf } from '../../support/etcd-compare.js'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { startEtcd, type EtcdProcess } from '../../support/etcd-process.js'
import { connectEtcd3 } from '../../support/etcd3-proto.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'

const b = (s: string) => Buffer.from(s)

describe('kvlog import --from-etcd into a cluster (every member starts from the imported store)', function () {
  this.timeout(180_000)
  let tmp: string
  let etcd: EtcdProcess
  let source: EtcdGrpc
  let nats: NatsCluster | undefined
  let cluster: ClusterProcesses | undefined

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-import-cluster-'))
    etcd = await startEtcd()
    source = connectEtcd3(etcd.endpoint)
  })

  after(async () => {
    await cluster?.cleanup()
    await nats?.stop()
    source?.close()
    await etcd?.stop()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it('serves etcd’s revisions on every member and continues them', async () => {
    await source.call('KV', 'Put', { key: b('/x/a'), value: b('1') })
    await source.call('KV', 'Put', { key: b('/x/b'), value: b('2') })
    await source.call('KV', 'DeleteRange', { key: b('/x/a') })
    const head = revisionOf(await source.call('KV', 'Put', { key: b('/x/b'), value: b('3') }))
    const imported = join(tmp, 'imported')
    expect(await importFromEtcd(etcd.endpoint, imported)).to.include({ revision: head })

    nats = await startNatsCluster(3)
    cluster = await startMembers(nats, 'imported', 2, [], (dir) => cp(imported, dir, { recursive: true }))
    for (const m of cluster.members) {
      const kvlog = connectEtcd3(m.grpc)
      try {
        for (let rev = 2; rev <= head; rev++)
          expect(await rangeAll(kvlog, rev), `${m.name} at ${rev}`).to.deep.equal(await rangeAll(source, rev))
      } finally {
        kvlog.close()
      }
    }
    expect(await putKey(cluster.members[1], '/x/c', '4')).to.equal(head + 1)
    expect(await putKey(cluster.members[0], '/x/d', '5')).to.equal(head + 2)
    for (const m of cluster.members) {
      await eventually(`${m.name} has both writes`, async () => (await listPrefix(m, '/x/')).revision === head + 2, 30_000)
      const { kvs } = await listPrefix(m, '/x/')
      expect(kvs.map((kv) => [kv.key, kv.modRevision])).to.deep.equal([
        ['/x/b', head],
        ['/x/c', head + 1],
        ['/x/d', head + 2],
      ])
    }
  })

  it('a member with an empty data dir refuses to start on the seeded stream rather than renumber its writes', async () => {
    expect(cluster, 'the cluster of the test before').to.not.equal(undefined)
    const args = ['--nats-url', nats!.urls, '--cluster-name', 'imported', '--member-name', 'm-empty']
    const refused = await startServerProcess(args, join(tmp, 'm-empty'), { readyTimeoutMs: 30_000 }).then(
      () => undefined,
      (err: Error) => err,
    )
    expect(refused?.message).to.match(/exited with 1/)
    expect(refused?.message).to.match(/stream message 1 does not follow this member's copy/)
    // The seeded members go on with etcd's revisions.
    const { revision } = await listPrefix(cluster!.members[0], '/x/')
    expect(await putKey(cluster!.members[0], '/x/e', '6')).to.equal(revision + 1)
  })
})
