/**
 * KV.RangeStream (etcd 3.7's streamed Range, used by Kubernetes 1.37 through EtcdRangeStream): the chunks
 * put together are what Range answers; header, more and count come on the last chunk only; a chunk's
 * bytes stay near maxRequestBytes however large the result; sort orders and revision filters are
 * UNIMPLEMENTED, as in etcd. Debian's etcd 3.4 has no RangeStream (status-features.test.ts checks that
 * it answers UNIMPLEMENTED there), so the reference here is kvlog's own Range.
 */
import { expect } from 'chai'
import { etcdGrpc, type EtcdGrpc } from '../../support/etcd-grpc.js'
import { grpc, grpcError } from '../../support/etcd3-proto.js'
import type { Message } from '../../../apiserver/etcd/proto.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'

type Kv = { key: Buffer; value?: Buffer; mod_revision: unknown }
type RangeResponse = { header?: { revision: unknown }; kvs?: Kv[]; more?: boolean; count?: unknown }
type Chunk = { range_response: RangeResponse }

const key = (i: number) => Buffer.from(`/registry/pods/ns/p${String(i).padStart(4, '0')}`)
const PREFIX = { key: Buffer.from('/registry/pods/'), range_end: Buffer.from('/registry/pods0') }
const MAX_REQUEST_BYTES = 256 * 1024

describe('etcd KV.RangeStream', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let g: EtcdGrpc
  let midRevision = 0
  const stream = (request: Message) => g.collect('KV', 'RangeStream', request) as Promise<Chunk[]>
  const range = (request: Message) => g.call('KV', 'Range', request) as Promise<RangeResponse>
  const keysOf = (kvs: Kv[] | undefined) => (kvs ?? []).map((kv) => kv.key.toString())

  before(async () => {
    server = await startServerProcess(['--max-request-bytes', String(MAX_REQUEST_BYTES)])
    g = etcdGrpc(server.grpc) // kvlog's own proto: the etcd3 package's has no RangeStream
    for (let i = 0; i < 300; i++) {
      // Values from a few bytes to 64 KiB: chunks must be sized by bytes, not by count.
      const r = (await g.call('KV', 'Put', { key: key(i), value: Buffer.alloc(i % 10 === 0 ? 64 * 1024 : 16 + i, 'v') })) as RangeResponse
      if (i === 149) midRevision = Number(r.header!.revision)
    }
  })

  after(async () => {
    g?.close()
    await server?.cleanup()
  })

  it('chunks that put together are the Range answer; header, more and count on the last only', async () => {
    const chunks = await stream(PREFIX)
    const whole = await range(PREFIX)
    expect(chunks.length).to.be.greaterThan(2)
    expect(chunks.flatMap((c) => keysOf(c.range_response.kvs))).to.deep.equal(keysOf(whole.kvs))
    for (const c of chunks.slice(0, -1)) {
      expect(c.range_response.header ?? null, 'a header before the last chunk').to.equal(null)
      expect(Number(c.range_response.count ?? 0)).to.equal(0)
    }
    const last = chunks.at(-1)!.range_response
    expect([Number(last.header!.revision), Number(last.count), last.more === true]).to.deep.equal([
      Number(whole.header!.revision),
      300,
      false,
    ])
  })

  it('keeps each chunk near maxRequestBytes, however large the result', async () => {
    const chunks = await stream(PREFIX)
    for (const c of chunks) {
      const bytes = (c.range_response.kvs ?? []).reduce((n, kv) => n + kv.key.length + (kv.value?.length ?? 0), 0)
      expect(bytes).to.be.at.most(MAX_REQUEST_BYTES)
    }
  })

  it('a limit, a revision and count_only as Range answers them', async () => {
    const limited = await stream({ ...PREFIX, limit: 25 })
    const last = limited.at(-1)!.range_response
    expect(limited.flatMap((c) => keysOf(c.range_response.kvs))).to.deep.equal(keysOf((await range({ ...PREFIX, limit: 25 })).kvs))
    expect([last.more === true, Number(last.count)]).to.deep.equal([true, 300])
    const old = await stream({ ...PREFIX, revision: midRevision })
    expect(old.flatMap((c) => keysOf(c.range_response.kvs))).to.have.length(150)
    const counted = await stream({ ...PREFIX, count_only: true })
    expect(counted).to.have.length(1)
    expect([Number(counted[0]!.range_response.count), counted[0]!.range_response.kvs ?? []]).to.deep.equal([300, []])
  })

  it('sort orders and revision filters are UNIMPLEMENTED, as in etcd', async () => {
    const descending = 2 // SortOrder DESCEND
    expect((await grpcError(stream({ ...PREFIX, sort_order: descending }))).code).to.equal(grpc.status.UNIMPLEMENTED)
    expect((await grpcError(stream({ ...PREFIX, min_mod_revision: 5 }))).code).to.equal(grpc.status.UNIMPLEMENTED)
  })
})
