/**
 * Unauthenticated attacks on the etcd client port's HTTP/2, against a real `kvlog serve` process, spoken
 * in raw frames where a client library would refuse: the server stays up, its memory bounded and its
 * event loop responsive, and each limit of docs/security.md refuses what passes it.
 *
 * The server runs with a heap limit so that an unbounded allocation ends it quickly instead of taking the
 * machine's memory.
 */
import { expect } from 'chai'
import { connect } from 'node:http2'
import { etcdctl } from '../support/etcdctl.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import {
  FRAME,
  H2_ERROR,
  RawH2,
  SETTING,
  frame,
  grpcRequestBlock,
  headerFrames,
  indexed,
  literal,
  settingsFrame,
} from '../support/raw-h2.js'
import { MiB, enableAuth, healthzMs, peakRssBytes } from './server-health.js'

const WATCH = '/etcdserverpb.Watch/Watch'
/** A gRPC message: WatchRequest { create_request { key: "a" } }. */
const WATCH_CREATE = Buffer.from([0, 0, 0, 0, 5, 0x0a, 0x03, 0x0a, 0x01, 0x61])
const HEAP_LIMIT = ['--max-old-space-size=1024']
/** The bounds the attacks must stay within. */
const MAX_RSS = 512 * MiB
const MAX_HEALTHZ_MS = 1000
const WAIT_MS = 15_000

async function serve(args: string[] = []): Promise<ServerProcess> {
  return startServerProcess(args, undefined, { nodeArgs: HEAP_LIMIT })
}

/** The server is alive, within its memory bound, and /healthz answers in time. */
async function expectHealthy(server: ServerProcess): Promise<void> {
  expect(server.child.exitCode, server.stderr()).to.equal(null)
  expect(await healthzMs(server.http)).to.be.below(MAX_HEALTHZ_MS)
  expect(await peakRssBytes(server.child.pid!)).to.be.below(MAX_RSS)
}

describe('security: HTTP/2 attacks on the etcd client port', function () {
  this.timeout(90_000)
  let server: ServerProcess | undefined
  const raws: RawH2[] = []
  afterEach(async () => {
    for (const r of raws.splice(0)) r.close()
    await server?.cleanup()
    server = undefined
  })

  it('HPACK amplification: 10 Watch streams each referencing one 4 KB authorization literal 120,000 times', async () => {
    server = await serve()
    await enableAuth(server.grpc) // the token is read (and its header value used) only with auth on
    const raw = await RawH2.open(server.grpc)
    raws.push(raw)
    const value = 'x'.repeat(4000) // fits HPACK's default 4 KiB table with its name and 32 bytes
    const references = Buffer.alloc(120_000, indexed(62))
    for (let i = 0; i < 10; i++) {
      const block = Buffer.concat([grpcRequestBlock(WATCH), literal('authorization', value, true), references])
      void raw.send(Buffer.concat([headerFrames(1 + 2 * i, block), frame(FRAME.DATA, 0, 1 + 2 * i, WATCH_CREATE)]))
    }
    await raw.sync(WAIT_MS)
    await expectHealthy(server)
    // Each stream was refused rather than its headers assembled and served.
    expect(raw.of(FRAME.HEADERS)).to.have.length(0)
    expect(raw.resets().size + raw.of(FRAME.GOAWAY).length).to.be.above(0)
  })

  it('SETTINGS flood over many half-open streams: the event loop stays responsive', async () => {
    server = await serve()
    const raw = await RawH2.open(server.grpc)
    raws.push(raw)
    const streams: Buffer[] = []
    const block = grpcRequestBlock(WATCH)
    for (let i = 0; i < 20_000; i++) streams.push(headerFrames(1 + 2 * i, block))
    void raw.send(Buffer.concat(streams))
    const entries = Array.from({ length: 2730 }, (_, i) => [SETTING.INITIAL_WINDOW_SIZE, 65_535 + (i % 2)] as const)
    for (let i = 0; i < 10; i++) void raw.send(settingsFrame(entries))
    await raw.until(() => raw.closed || raw.of(FRAME.GOAWAY).length > 0, WAIT_MS)
    await expectHealthy(server)
    expect(raw.goAwayCode, 'the connection ended with GOAWAY').to.not.equal(undefined)
  })

  it('an idle connection is closed with GOAWAY after the idle timeout; one with an open stream is not', async () => {
    server = await serve(['--client-port-idle-timeout', '300ms'])
    const idle = await RawH2.open(server.grpc)
    const busy = await RawH2.open(server.grpc)
    raws.push(idle, busy)
    await busy.send(headerFrames(1, grpcRequestBlock(WATCH)))
    await idle.until(() => idle.of(FRAME.GOAWAY).length > 0, WAIT_MS)
    expect(idle.goAwayCode).to.equal(H2_ERROR.NO_ERROR)
    expect(busy.of(FRAME.GOAWAY)).to.have.length(0)
    expect(busy.closed).to.equal(false)
  })

  it('a header list past http2MaxHeaderListSize or http2MaxHeaderListPairs is refused; one within is served', async () => {
    server = await serve(['--http2-max-header-list-size', '8KiB', '--http2-max-header-list-pairs', '32'])
    const raw = await RawH2.open(server.grpc)
    raws.push(raw)
    const call = (id: number, extra: Buffer) =>
      raw.send(headerFrames(id, Buffer.concat([grpcRequestBlock('/etcdserverpb.KV/Range'), extra]), true))
    await call(1, literal('x-big', 'y'.repeat(9000)))
    const pairs = Buffer.concat(Array.from({ length: 40 }, (_, i) => literal(`x-${i}`, 'y')))
    await call(3, pairs)
    await call(5, literal('x-small', 'y'.repeat(2000)))
    await raw.until(() => raw.resets().size >= 2 && raw.of(FRAME.HEADERS).some((f) => f.streamId === 5), WAIT_MS)
    expect(raw.resets().get(1)).to.equal(H2_ERROR.ENHANCE_YOUR_CALM)
    expect(raw.resets().get(3)).to.equal(H2_ERROR.ENHANCE_YOUR_CALM)
    expect(raw.of(FRAME.HEADERS).map((f) => f.streamId)).to.deep.equal([5])
    expect(raw.serverSetting(6)).to.equal(8192) // SETTINGS_MAX_HEADER_LIST_SIZE
  })

  it('streams past maxConcurrentStreams are refused with REFUSED_STREAM', async () => {
    server = await serve(['--max-concurrent-streams', '5'])
    const raw = await RawH2.open(server.grpc)
    raws.push(raw)
    for (let i = 0; i < 7; i++) await raw.send(headerFrames(1 + 2 * i, grpcRequestBlock(WATCH)))
    await raw.until(() => raw.resets().size >= 2, WAIT_MS)
    expect(raw.serverSetting(SETTING.MAX_CONCURRENT_STREAMS)).to.equal(5)
    expect([...raw.resets()]).to.deep.equal([
      [11, H2_ERROR.REFUSED_STREAM],
      [13, H2_ERROR.REFUSED_STREAM],
    ])
  })

  it('streams past clientPortMaxStreams over all connections are refused; connections past clientPortMaxConnections are closed', async () => {
    server = await serve(['--client-port-max-streams', '4', '--client-port-max-connections', '3'])
    const first = await RawH2.open(server.grpc)
    const second = await RawH2.open(server.grpc)
    raws.push(first, second)
    for (const id of [1, 3, 5]) await first.send(headerFrames(id, grpcRequestBlock(WATCH)))
    await first.sync(WAIT_MS)
    for (const id of [1, 3]) await second.send(headerFrames(id, grpcRequestBlock(WATCH)))
    await second.until(() => second.resets().size > 0, WAIT_MS)
    expect([...second.resets()]).to.deep.equal([[3, H2_ERROR.REFUSED_STREAM]])
    expect(first.resets().size).to.equal(0)
    const third = await RawH2.open(server.grpc)
    const fourth = await RawH2.open(server.grpc)
    raws.push(third, fourth)
    await fourth.until(() => fourth.closed, WAIT_MS)
    expect(fourth.frames).to.have.length(0)
    expect(third.closed).to.equal(false)
  })

  it('a client pinging more often than grpcKeepaliveMinTime gets GOAWAY ENHANCE_YOUR_CALM "too_many_pings"', async () => {
    server = await serve(['--grpc-keepalive-min-time', '10s'])
    const session = connect(`http://${server.grpc}`)
    const goaway = new Promise<[number, string]>((resolve) => session.on('goaway', (code, _last, data) => resolve([code, String(data)])))
    session.on('error', () => undefined)
    await new Promise<void>((resolve) => session.once('connect', () => resolve()))
    for (let i = 0; i < 4; i++) await new Promise<void>((resolve) => session.ping(() => resolve()))
    expect(await goaway).to.deep.equal([H2_ERROR.ENHANCE_YOUR_CALM, 'too_many_pings'])
    session.destroy()
  })

  it('a client pinging while it receives a large answer is not refused (grpc-go sizes its window with pings)', async () => {
    server = await serve()
    const value = Buffer.alloc(1_000_000, 'v').toString('base64')
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`http://${server.grpc}/v3/kv/put`, {
        method: 'POST',
        body: JSON.stringify({ key: Buffer.from(`/big/${i}`).toString('base64'), value }),
      })
      expect(res.status).to.equal(200)
    }
    const run = await etcdctl(server.grpc, ['get', '--prefix', '/big/', '--print-value-only'])
    expect(run.error).to.equal(undefined)
    expect(run.stdout.length).to.equal(8 * 1_000_001)
  })

  it('/livez and /readyz answer 200 "ok" on the etcd port (probes.test.ts in test/apiserver/etcd/gateway covers the checks)', async () => {
    server = await serve()
    for (const probe of ['livez', 'readyz']) {
      const res = await fetch(`http://${server.grpc}/${probe}`)
      expect([res.status, await res.text()]).to.deep.equal([200, 'ok\n'])
    }
  })
})
