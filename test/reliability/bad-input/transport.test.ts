/**
 * Hostile transports and sizes on the native door, with bystanders watching (bystanders.ts):
 *
 * - truncated WebSocket frames, frames declaring absurd lengths, random bytes after the handshake, on raw
 *   TCP sockets that then vanish;
 * - slowloris: many connections that dribble request headers (HTTP) or never finish the WebSocket
 *   handshake, held open while the control client is served;
 * - huge transactions (far over maxTxnOps and maxRequestBytes), and a huge key count (25,600 keys
 *   listed, counted, watched and deleted in one revision).
 *
 * The server must answer with codes, never crash, keep memory bounded, and not slow the bystanders down.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { connect, type Socket } from 'node:net'
import { request } from 'node:http'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { sleep, WatchConnection } from '../../support/watch-client.js'
import { Bystanders, rssBytes } from './bystanders.js'

const SEED = Number(process.env.KVLOG_TEST_SEED ?? 515151)
const MiB = 1024 * 1024

function rawSocket(http: string): Promise<Socket> {
  const u = new URL(http)
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => resolve(s))
    s.on('error', reject)
  })
}

/** A raw socket that completed the WebSocket handshake on /v1/watch. */
async function upgraded(http: string): Promise<Socket> {
  const s = await rawSocket(http)
  s.removeAllListeners('error')
  s.on('error', () => undefined)
  s.write(
    `GET /v1/watch HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  )
  await new Promise<void>((resolve, reject) => {
    let head = ''
    const onData = (d: Buffer) => {
      head += d.toString('latin1')
      if (head.includes('\r\n\r\n')) {
        s.off('data', onData)
        if (head.startsWith('HTTP/1.1 101')) resolve()
        else reject(new Error(`no upgrade: ${head.slice(0, 100)}`))
      }
    }
    s.on('data', onData)
  })
  return s
}

/** A masked client frame header (RFC 6455) for `length` bytes of `opcode`, possibly lying about the length. */
function frameHeader(opcode: number, length: number): Buffer {
  const mask = Buffer.from([1, 2, 3, 4])
  if (length < 126) return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | length]), mask])
  if (length < 65536) return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff]), mask])
  const len = Buffer.alloc(8)
  len.writeBigUInt64BE(BigInt(length))
  return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), len, mask])
}

/**
 * POST with the headers first (content-length announced); the body follows only if no answer came within
 * 2 s. A server that refuses an oversized body by its announced length answers before the upload, so the
 * answer is read instead of racing an EPIPE from the upload it cut short.
 */
function announcedUpload(url: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        answered = true
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      },
    )
    req.on('error', (err) => {
      if (!answered) reject(err)
    })
    req.flushHeaders()
    setTimeout(() => {
      if (!answered) req.end(body)
    }, 2000)
  })
}

function closedWithin(s: Socket, ms: number): Promise<boolean> {
  if (s.destroyed) return Promise.resolve(true)
  return Promise.race([new Promise<boolean>((r) => s.once('close', () => r(true))), sleep(ms).then(() => false)])
}

describe('reliability: hostile transports and sizes on the native door', function () {
  this.timeout(120_000)
  let server: ServerProcess
  let bystanders: Bystanders

  before(async () => {
    server = await startServerProcess(['--ws-max-payload', '64KiB', '--max-txn-ops', '128'])
    bystanders = await Bystanders.start(server)
  })

  after(async () => {
    await server?.stop('SIGTERM').catch(() => undefined)
    await server?.cleanup()
  })

  it('survives truncated frames, random bytes and vanishing sockets after the WebSocket handshake', async () => {
    const garbage = fc.oneof(
      fc.tuple(fc.constantFrom(0x1, 0x2, 0x8, 0x9), fc.nat(200), fc.nat(200)).map(([op, len, cut]) => {
        const payload = Buffer.alloc(len, 0x61)
        return Buffer.concat([frameHeader(op, len), payload]).subarray(0, Math.min(cut, len + 6))
      }),
      fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => Buffer.from(b)),
    )
    await fc.assert(
      fc.asyncProperty(garbage, async (bytes) => {
        const s = await upgraded(server.http)
        s.write(bytes)
        await sleep(5)
        s.destroy()
      }),
      { seed: SEED, numRuns: 60 },
    )
    expect(server.child.exitCode, server.stderr()).to.equal(null)
  })

  it('closes a connection whose frame declares a length over wsMaxPayload (up to 2^53), before reading it', async () => {
    for (const length of [65 * 1024, 2 ** 31, 2 ** 53 - 1]) {
      const s = await upgraded(server.http)
      s.write(frameHeader(0x1, length))
      s.write(Buffer.alloc(1024, 0x61))
      expect(await closedWithin(s, 5000), `closed after a frame of ${length} bytes was announced`).to.equal(true)
    }
  })

  it('serves the bystanders while 100 slowloris connections dribble HTTP headers or never finish a handshake', async () => {
    const sockets: Socket[] = []
    for (let i = 0; i < 100; i++) {
      const s = await rawSocket(server.http)
      s.on('error', () => undefined)
      s.write(
        i % 2 === 0 ? 'PUT /v1/kv HTTP/1.1\r\nHost: localhost\r\n' : 'GET /v1/watch HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n',
      )
      sockets.push(s)
    }
    const before = bystanders.writes
    for (let t = 0; t < 15; t++) {
      for (const s of sockets) if (!s.destroyed) s.write(`X-Slow-${t}: ${'y'.repeat(10)}\r\n`)
      await sleep(200)
    }
    // A normal client and a normal watch are served meanwhile.
    const conn = await WatchConnection.connect(server.http, 'during-slowloris')
    await conn.createAndWait({ key: '/slow/' })
    conn.terminate()
    expect(bystanders.writes - before, 'control writes during the slowloris').to.be.greaterThan(20)
    for (const s of sockets) s.destroy()
  })

  it('answers huge transactions with TOO_MANY_OPS or REQUEST_TOO_LARGE, writing nothing', async () => {
    const status = async () => ((await (await fetch(`${server.http}/v1/status`)).json()) as { revision: number }).revision
    const ops = (n: number, valueBytes: number) =>
      Array.from({ length: n }, (_, i) => ({ type: 'put', key: `/huge/${i}`, value: 'v'.repeat(valueBytes) }))
    const control = bystanders.writes
    for (const [n, valueBytes, codes] of [
      [129, 1, ['TOO_MANY_OPS']],
      [100_000, 1, ['TOO_MANY_OPS', 'REQUEST_TOO_LARGE']],
      [100, 20_000, ['REQUEST_TOO_LARGE']],
    ] as const) {
      const reply = await announcedUpload(
        `${server.http}/v1/txn`,
        JSON.stringify({ compare: [], success: ops(n, valueBytes), failure: [] }),
      )
      const code = (JSON.parse(reply.body) as { error?: { code: string } }).error?.code
      expect(codes as readonly string[], `${n} ops of ${valueBytes} bytes: ${reply.status} ${code}`).to.include(code)
    }
    const huge = await fetch(`${server.http}/v1/kv?key=/huge/&prefix=true&countOnly=true`)
    expect(((await huge.json()) as { count: number }).count, 'nothing of the rejected transactions was written').to.equal(0)
    expect(await status()).to.be.greaterThan(1)
    expect(bystanders.writes).to.be.at.least(control)
  })

  it('handles a huge key count: 25,600 keys written, listed, counted, watched and deleted in one revision', async function () {
    this.timeout(120_000)
    const conn = await WatchConnection.connect(server.http, 'huge-watch')
    const id = await conn.createAndWait({ key: '/many/', prefix: true })
    for (let b = 0; b < 200; b++) {
      const success = Array.from({ length: 128 }, (_, i) => ({
        type: 'put',
        key: `/many/${String(b * 128 + i).padStart(6, '0')}`,
        value: 'x',
      }))
      const res = await fetch(`${server.http}/v1/txn`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ compare: [], success, failure: [] }),
      })
      expect(res.status).to.equal(200)
      await res.text()
    }
    const list = (await (await fetch(`${server.http}/v1/kv?key=/many/&prefix=true`)).json()) as { kvs: unknown[]; count: number }
    expect([list.kvs.length, list.count]).to.deep.equal([25_600, 25_600])
    const del = (await (await fetch(`${server.http}/v1/kv?key=/many/&prefix=true`, { method: 'DELETE' })).json()) as {
      deleted: number
      header: { revision: number }
    }
    expect(del.deleted).to.equal(25_600)
    const messages = conn.messagesFor(id)
    await conn.waitFor(
      () => messages.some((m) => m.msg.type === 'events' && m.msg.revision === del.header.revision),
      30_000,
      'the delete revision on the watch',
    )
    const last = messages.find((m) => m.msg.revision === del.header.revision)!
    expect(last.msg.events, 'one revision, one message, every event').to.have.length(25_600)
    const events = messages.reduce((n, m) => n + (m.msg.events?.length ?? 0), 0)
    expect(events).to.equal(25_600 * 2)
    conn.terminate()
    expect(await rssBytes(server.child.pid!), 'server memory').to.be.below(bystanders.baselineRss + 512 * MiB)
  })

  it('is alive and the bystanders were not hurt (control writes, control watch exact, memory bounded)', async () => {
    expect(server.child.exitCode, server.stderr()).to.equal(null)
    await bystanders.finish({ maxRssGrowthBytes: 512 * MiB })
  })
})
