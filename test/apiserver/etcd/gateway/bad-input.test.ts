/**
 * Bad input on the JSON gateway: malformed JSON, wrong types, unknown fields, oversized bodies, unknown
 * paths and methods, a slow client that never finishes its body (slowloris), a streaming call left
 * half-open, and a stream body that turns to garbage. Each gets the gateway's error shape
 * (`{"error","message","code"}` with the gRPC code and grpc-gateway's HTTP status) or etcd's router
 * answer, and the server keeps serving: gRPC, the gateway, and a watch opened before it all.
 */
import { expect } from 'chai'
import { connect, type Socket } from 'node:net'
import { connectEtcd3, openWatch, type WatchSession } from '../../../support/etcd3-proto.js'
import type { EtcdGrpc } from '../../../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../../../support/server-process.js'
import { post, stream } from './gateway-client.js'

const b64 = (s: string) => Buffer.from(s).toString('base64')
const MiB = 1024 * 1024

describe('apiserver/etcd/gateway: bad input', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let base: string
  let g: EtcdGrpc
  let watch: WatchSession
  let puts = 0

  /** gRPC and the gateway still answer, and the watch opened first still delivers events. */
  async function stillServing(): Promise<void> {
    const k = `alive/${++puts}`
    const a = await post(base, '/v3/kv/put', { key: b64(k), value: b64('1') })
    expect(a.status).to.equal(200)
    const got = (await g.call('KV', 'Range', { key: Buffer.from(k) })) as { kvs: unknown[] }
    expect(got.kvs).to.have.length(1)
    await watch.next((r) => (r.events as { kv: { key: Buffer } }[]).some((e) => e.kv.key.toString() === k))
  }

  function expectError(a: { status: number; body: unknown }, status: number, code: number): void {
    expect(a.status).to.equal(status)
    const body = a.body as { error: unknown; message: unknown; code: unknown }
    expect(body.code).to.equal(code)
    expect(body.error).to.be.a('string')
    expect(body.message).to.equal(body.error)
  }

  before(async () => {
    server = await startServerProcess()
    base = `http://${server.grpc}`
    g = connectEtcd3(server.grpc)
    watch = openWatch(g)
    watch.send({ create_request: { key: Buffer.from('alive/'), range_end: Buffer.from('alive0') } })
    await watch.next((r) => r.created === true)
  })

  after(async () => {
    watch?.end()
    g?.close()
    await server?.stop()
    await server?.cleanup()
  })

  it('malformed JSON and wrong JSON types → 400, code 3 (INVALID_ARGUMENT)', async () => {
    for (const body of ['{"key":', '{key: 1}', 'not json', '[', '{"key":"YQ=="}}']) {
      expectError(await post(base, '/v3/kv/range', body), 400, 3)
    }
    for (const body of [
      { key: 5 },
      { key: b64('a'), limit: 'many' },
      { key: b64('a'), keys_only: 'yes' },
      { key: b64('a'), sort_order: 'SIDEWAYS' },
      { key: '***' },
      { success: { request_put: {} } },
      { key: b64('a'), revision: '99999999999999999999999' },
    ]) {
      expectError(await post(base, body.success ? '/v3/kv/txn' : '/v3/kv/range', body), 400, 3)
    }
    await stillServing()
  })

  it("unknown fields are ignored, as etcd's gateway does", async () => {
    const a = await post(base, '/v3/kv/range', { key: b64('a'), no_such_field: { deep: [1, 2] } })
    expect(a.status).to.equal(200)
    await stillServing()
  })

  it('an oversized body → 429, code 8 (RESOURCE_EXHAUSTED); a large value under it → etcd\'s "request is too large"', async () => {
    expectError(await post(base, '/v3/kv/put', { key: b64('big'), value: Buffer.alloc(3 * MiB, 0x61).toString('base64') }), 429, 8)
    expectError(await post(base, '/v3/kv/put', { key: b64('big'), value: Buffer.alloc(1.6 * MiB, 0x61).toString('base64') }), 400, 3)
    await stillServing()
  })

  it('unknown paths → 404, other methods → 405 (text, as etcd)', async () => {
    for (const path of ['/v3/kv/nothing', '/v2/keys/a', '/v3', '/', '/v3/kv/range/x']) {
      const a = await post(base, path, {})
      expect(a.status, path).to.equal(404)
    }
    for (const method of ['GET', 'PUT', 'DELETE']) expect((await post(base, '/v3/kv/range', '', method)).status).to.equal(405)
    expect((await post(base, '/version', {}, 'POST')).status).to.equal(405)
    await stillServing()
  })

  it('slowloris: a client that sends part of its headers or body and stops is cut; others are served meanwhile', async () => {
    const sockets: Socket[] = []
    const [host, port] = server.grpc.split(':')
    const open = (text: string) =>
      new Promise<Socket>((resolve) => {
        const s = connect(Number(port), host, () => {
          s.write(text)
          resolve(s)
        })
        s.on('error', () => undefined)
        sockets.push(s)
      })
    const closed = (s: Socket) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())))
    const headersOnly = await open('POST /v3/kv/range HTTP/1.1\r\nHost: localhost\r\nContent-Len')
    const partBody = await open('POST /v3/kv/range HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"key":')
    const nothing = await open('')
    await stillServing()
    let answer = ''
    partBody.on('data', (d: Buffer) => (answer += d.toString()))
    await Promise.all([closed(headersOnly), closed(partBody), closed(nothing)])
    expect(answer).to.match(/^HTTP\/1\.1 408/)
    await stillServing()
  })

  it('a half-open watch stream (body never ended) keeps delivering; the client going away ends it', async () => {
    const w = stream(base, '/v3/watch', [{ create_request: { key: b64('half/'), range_end: b64('half0') } }], true)
    await w.next((l) => (l.result as { created?: boolean }).created === true)
    await post(base, '/v3/kv/put', { key: b64('half/1'), value: b64('1') })
    const e = await w.next()
    expect((e.result as { events: unknown[] }).events).to.have.length(1)
    w.close()
    await stillServing()
  })

  it('a stream body that turns to garbage ends that stream with the error shape; others go on', async () => {
    const w = stream(base, '/v3/watch', [{ create_request: { key: b64('g/') } }], true)
    await w.next((l) => (l.result as { created?: boolean }).created === true)
    w.sendRaw('{"create_request": [')
    w.sendRaw('}}}')
    const err = await w.next((l) => l.error !== undefined)
    expect((err.error as { grpc_code: number }).grpc_code).to.equal(3)
    w.close()
    await stillServing()
  })
})
