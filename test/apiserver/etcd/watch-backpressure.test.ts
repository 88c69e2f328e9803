/**
 * A gRPC watch stream whose client stops reading (apiserver/etcd/watch-outbox.ts): its backlog coalesces
 * into fewer, larger responses; past the queue limit its watches pause and catch up later. Either way the
 * client gets every event once, in order, with each response's header at its last event's revision.
 */
import { expect } from 'chai'
import type { Message } from '../../../apiserver/etcd/proto.js'
import { etcdGrpc, type EtcdGrpc } from '../../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'

const b = (s: string) => Buffer.from(s)
const PUTS = 3000
const VALUE = Buffer.alloc(1024, 'v')

describe('apiserver/etcd: watch backpressure', function () {
  this.timeout(120_000)
  let server: ServerProcess
  let etcd: EtcdGrpc
  before(async () => {
    server = await startServerProcess(['--grpc-max-queued-bytes', '1MiB', '--fsync', 'never'])
    etcd = etcdGrpc(server.grpc)
  })
  after(async () => {
    etcd?.close()
    await server?.cleanup()
  })

  it('a client that stops reading gets its backlog coalesced, then every event once and in order', async () => {
    const call = etcd.stream('Watch', 'Watch')
    const got: Message[] = []
    let created!: () => void
    const isCreated = new Promise<void>((resolve) => (created = resolve))
    call.on('data', (m: Message) => {
      if (m.created === true) created()
      else got.push(m)
    })
    call.on('error', () => undefined)
    call.write({ create_request: { key: b('slow/'), range_end: b('slow0') } })
    await isCreated
    call.pause() // stop reading: HTTP/2 flow control backs the server's writes up

    const revisions: number[] = []
    for (let i = 0; i < PUTS; i += 50) {
      const batch = Array.from({ length: Math.min(50, PUTS - i) }, (_, j) =>
        etcd.call('KV', 'Put', { key: b(`slow/${(i + j) % 7}`), value: VALUE }),
      )
      for (const r of await Promise.all(batch)) revisions.push(Number((r.header as Message).revision))
    }
    revisions.sort((x, y) => x - y)

    call.resume()
    const events = () => got.flatMap((m) => (m.events as Message[]).map((e) => Number((e.kv as Message).mod_revision)))
    const deadline = Date.now() + 60_000
    while (events().length < PUTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    call.end()

    expect(events()).to.deep.equal(revisions)
    expect(got.length, 'responses').to.be.lessThan(PUTS / 2)
    for (const m of got) {
      const last = (m.events as Message[]).at(-1)!
      expect(Number((m.header as Message).revision)).to.equal(Number((last.kv as Message).mod_revision))
    }
  })
})
