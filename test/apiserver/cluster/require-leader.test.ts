/**
 * etcd's read and watch options in cluster mode, with real `kvlog serve` members over real nats-servers
 * that are then all stopped (SIGSTOP), so no member knows a leader any more:
 * - a watch opened with `hasleader: true` metadata (clientv3.WithRequireLeader) ends with etcd's
 *   "no leader" error (UNAVAILABLE, `etcdserver: no leader`); one opened after that ends at once; a watch
 *   without it stays open;
 * - a `serializable` Range is answered from the member's copy, while a linearizable one fails UNAVAILABLE.
 */
import { expect } from 'chai'
import { Metadata, status, type ClientDuplexStream } from '@grpc/grpc-js'
import type { Message } from '../../../apiserver/etcd/proto.js'
import { putKey, startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { etcdGrpc, responses, type EtcdGrpc } from '../../support/etcd-grpc.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'

const b = (s: string) => Buffer.from(s)

/** The status a stream ended with, once it ends (its error's code and details). */
function ended(call: ClientDuplexStream<Message, Message>): Promise<{ code: number; details: string }> {
  return new Promise((resolve) => {
    call.on('error', (err: { code: number; details: string }) => resolve({ code: err.code, details: err.details }))
    call.on('end', () => resolve({ code: status.OK, details: '' }))
  })
}

describe('kvlog cluster: hasleader watches and serializable reads without a leader', function () {
  this.timeout(180_000)
  let nats: NatsCluster | undefined
  let cluster: ClusterProcesses | undefined
  let etcd: EtcdGrpc | undefined
  let paused = false

  after(async () => {
    etcd?.close()
    if (paused) for (let i = 0; i < 3; i++) nats?.resume(i)
    await cluster?.cleanup()
    await nats?.stop()
  })

  it('ends a hasleader watch with "no leader", keeps a plain one, and answers serializable reads', async () => {
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'reqleader', 2)
    for (const m of cluster.members) await waitReady(m)
    const member = cluster.members[1]
    await putKey(member, 'k', 'v')
    etcd = etcdGrpc(member.grpc)
    const requireLeader = new Metadata()
    requireLeader.set('hasleader', 'true')

    const leaderWatch = etcd.stream('Watch', 'Watch', requireLeader)
    const leaderEnd = ended(leaderWatch)
    leaderWatch.write({ create_request: { key: b('w') } })
    expect(await responses(leaderWatch).next(20_000)).to.include({ created: true })
    const plainWatch = etcd.stream('Watch', 'Watch')
    let plainEnded = false
    void ended(plainWatch).then(() => (plainEnded = true))
    plainWatch.write({ create_request: { key: b('w') } })
    expect(await responses(plainWatch).next(20_000)).to.include({ created: true })

    for (let i = 0; i < 3; i++) await nats.pause(i)
    paused = true
    const end = await leaderEnd
    expect(end).to.deep.equal({ code: status.UNAVAILABLE, details: 'etcdserver: no leader' })

    const late = etcd.stream('Watch', 'Watch', requireLeader)
    expect(await ended(late)).to.deep.equal({ code: status.UNAVAILABLE, details: 'etcdserver: no leader' })
    expect(plainEnded, 'the watch without hasleader').to.equal(false)

    const serializable = await etcd.call('KV', 'Range', { key: b('k'), serializable: true })
    expect((serializable.kvs as Message[]).map((kv) => String(kv.value))).to.deep.equal(['v'])
    const linearizable = await etcd.call('KV', 'Range', { key: b('k') }).then(
      () => status.OK,
      (err: { code: number }) => err.code,
    )
    expect(linearizable).to.equal(status.UNAVAILABLE)
    plainWatch.cancel()
    for (let i = 0; i < 3; i++) nats.resume(i)
    paused = false
  })
})
