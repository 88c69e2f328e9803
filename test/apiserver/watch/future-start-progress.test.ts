/**
 * A watch from a future revision gets no progress notification until the store reached the revision
 * before its start: neither the periodic ones (progress_notify) nor the answer to a progress request,
 * which waits until then. A notification earlier would claim a revision the watch never covered; etcd
 * stopped sending them in etcd-io/etcd#20229 (kube-apiserver's watch cache trusts them). Debian's etcd
 * 3.4.23 predates that change, so this runs against kvlog only.
 */
import { expect } from 'chai'
import { SCHEMA } from '../../../config/schema.js'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { connectEtcd3, openWatch } from '../../support/etcd3-proto.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'

const key = (s: string) => Buffer.from(s)
type Msg = Record<string, unknown>
const revisionOf = (r: Msg) => Number((r.header as { revision: string }).revision)

describe('etcd Watch: no progress for a watch from a future revision', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let g: EtcdGrpc

  before(async () => {
    server = await startServerProcess(['--watch-progress-interval', '100ms'])
    g = connectEtcd3(server.grpc)
  })

  after(async () => {
    g?.close()
    await server?.cleanup()
  })

  it('progress notifications come every 5 s by default, as kubeadm, k3s and kine run etcd', () => {
    expect(SCHEMA.watchProgressInterval.default).to.equal(5_000)
  })

  it('gets none, periodic or requested, until the store reached the revision before its start', async () => {
    const put = async () => revisionOf((await g.call('KV', 'Put', { key: key('a'), value: key('v') })) as Msg)
    const now = await put()
    const start = now + 3
    const future = openWatch(g)
    future.send({ create_request: { key: key('a'), start_revision: start, progress_notify: true } })
    await future.next((r) => r.created === true)
    future.send({ progress_request: {} })
    // A watch from now on another stream: once it got two periodic notifications, the ticks ran.
    const current = openWatch(g)
    current.send({ create_request: { key: key('b'), progress_notify: true } })
    await current.next((r) => r.created === true)
    await current.next((r) => r.created !== true, { from: 2 })
    while ((await put()) < start) {
      // writes up to and including the start revision
    }
    const event = await future.next((r) => ((r.events as unknown[]) ?? []).length > 0)
    const before = future.responses.slice(0, future.responses.indexOf(event))
    const progress = before.filter((r) => r.created !== true)
    for (const r of progress) expect(revisionOf(r), 'a progress notification before the watch started').to.be.at.least(start - 1)
    expect(Number(((event.events as Msg[])[0]!.kv as { mod_revision: string }).mod_revision)).to.equal(start)
    // The progress request was not dropped: answered (watch_id -1) once the watch got to its start.
    const answer = await future.next((r) => r.watch_id === '-1')
    expect(revisionOf(answer)).to.be.at.least(start - 1)
    future.end()
    current.end()
  })
})
