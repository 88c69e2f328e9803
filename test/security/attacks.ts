/**
 * The adversarial battery's attacks, in a short form: each opens its connections, does its damage for a
 * moment and closes them. `etcd` attacks speak raw HTTP/2 to the etcd client port; `native` attacks speak
 * (mostly broken) HTTP/1.1 to the native port.
 */
import { connect, type Socket } from 'node:net'
import {
  FLAG,
  FRAME,
  H2_ERROR,
  RawH2,
  SETTING,
  frame,
  grpcRequestBlock,
  headerFrames,
  indexed,
  literal,
  rstFrame,
  settingsFrame,
  splitAddress,
} from '../support/raw-h2.js'
import { sleep } from './server-health.js'

export interface Attack {
  port: 'etcd' | 'native'
  name: string
  /** `address` is host:port. */
  run(address: string): Promise<void>
}

const RANGE = '/etcdserverpb.KV/Range'
const WATCH = '/etcdserverpb.Watch/Watch'
/** How long a lingering attack (idle, slow, half-open) holds its connections. */
const HOLD_MS = 1500
const SETTLE_MS = 20_000

/** Opens `n` raw HTTP/2 connections, runs `fn` on each, waits `holdMs`, closes them. */
async function onConnections(address: string, n: number, fn: (raw: RawH2, i: number) => Promise<void>, holdMs = 0): Promise<void> {
  const raws = await Promise.all(Array.from({ length: n }, () => RawH2.open(address)))
  try {
    await Promise.all(raws.map((raw, i) => fn(raw, i)))
    // The server has dealt with the attack before the battery looks at it.
    await Promise.all(raws.map((raw) => raw.sync(SETTLE_MS)))
    if (holdMs > 0) await sleep(holdMs)
  } finally {
    for (const raw of raws) raw.close()
  }
}

async function tcp(address: string): Promise<Socket> {
  const [host, port] = splitAddress(address)
  const socket = connect({ host, port })
  socket.on('error', () => undefined)
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  return socket
}

/** Opens `n` plain sockets, runs `fn` on each, waits `holdMs`, closes them. */
async function onSockets(address: string, n: number, fn: (socket: Socket) => Promise<void> | void, holdMs = 0): Promise<void> {
  const sockets = await Promise.all(Array.from({ length: n }, () => tcp(address)))
  try {
    await Promise.all(sockets.map((s) => fn(s)))
    if (holdMs > 0) await sleep(holdMs)
  } finally {
    for (const s of sockets) s.destroy()
  }
}

/** Sends `bytes` one byte at a time, `everyMs` apart, for `forMs`. */
async function dribble(socket: Socket, bytes: Buffer, everyMs: number, forMs: number): Promise<void> {
  const until = performance.now() + forMs
  for (let i = 0; i < bytes.length && performance.now() < until && !socket.destroyed; i++) {
    socket.write(bytes.subarray(i, i + 1))
    await sleep(everyMs)
  }
}

const repeat = (n: number, bytes: (i: number) => Buffer): Buffer => Buffer.concat(Array.from({ length: n }, (_, i) => bytes(i)))

/** A HEADERS block of `n` references to one 4,000-byte literal (HPACK amplification). */
function hpackBomb(n: number): Buffer {
  return Buffer.concat([grpcRequestBlock(WATCH), literal('authorization', 'x'.repeat(4000), true), Buffer.alloc(n, indexed(62))])
}

export const ATTACKS: Attack[] = [
  {
    port: 'etcd',
    name: 'PING flood (50,000 pings)',
    run: (a) => onConnections(a, 1, (raw) => raw.send(repeat(50_000, () => frame(FRAME.PING, 0, 0, Buffer.alloc(8))))),
  },
  {
    port: 'etcd',
    name: 'SETTINGS flood (20,000 empty frames)',
    run: (a) => onConnections(a, 1, (raw) => raw.send(repeat(20_000, () => settingsFrame([])))),
  },
  {
    port: 'etcd',
    name: 'SETTINGS of 2,730 INITIAL_WINDOW_SIZE entries over 1,000 half-open streams',
    run: (a) =>
      onConnections(a, 1, async (raw) => {
        await raw.send(repeat(1000, (i) => headerFrames(1 + 2 * i, grpcRequestBlock(WATCH))))
        const entries = Array.from({ length: 2730 }, (_, i) => [SETTING.INITIAL_WINDOW_SIZE, 65_535 + (i % 2)] as const)
        await raw.send(repeat(10, () => settingsFrame(entries)))
        await raw.until(() => raw.of(FRAME.GOAWAY).length > 0, 10_000)
      }),
  },
  {
    port: 'etcd',
    name: 'rapid reset (10,000 HEADERS + RST_STREAM)',
    run: (a) =>
      onConnections(a, 1, (raw) =>
        raw.send(
          repeat(10_000, (i) => Buffer.concat([headerFrames(1 + 2 * i, grpcRequestBlock(RANGE)), rstFrame(1 + 2 * i, H2_ERROR.CANCEL)])),
        ),
      ),
  },
  {
    port: 'etcd',
    name: 'RST_STREAM flood on idle streams (10,000)',
    run: (a) => onConnections(a, 1, (raw) => raw.send(repeat(10_000, (i) => rstFrame(1 + 2 * i, H2_ERROR.CANCEL)))),
  },
  {
    port: 'etcd',
    name: 'malformed frames (bad lengths, wrong streams, zero window updates, garbage)',
    run: (a) => {
      const bad = [
        frame(FRAME.PING, 0, 0, Buffer.alloc(7)),
        frame(FRAME.SETTINGS, 0, 1, Buffer.alloc(6)),
        frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(5)),
        frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.alloc(4)),
        frame(FRAME.DATA, 0, 0, Buffer.alloc(10)),
        frame(FRAME.HEADERS, FLAG.END_HEADERS, 2, grpcRequestBlock(RANGE)),
        frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1, Buffer.alloc(10)),
        frame(FRAME.PUSH_PROMISE, FLAG.END_HEADERS, 1, Buffer.alloc(10)),
        frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff])),
        frame(FRAME.DATA, 0, 1, Buffer.alloc(20_000)),
        frame(0xee, 0, 0, Buffer.alloc(100)),
        Buffer.alloc(64, 0xff),
      ]
      return onConnections(a, bad.length, (raw, i) =>
        raw.send(bad[i]!).then(() => raw.until(() => raw.closed, 2000).catch(() => undefined)),
      )
    },
  },
  {
    port: 'etcd',
    name: 'HPACK bomb (5 streams × 120,000 references to a 4 KB literal)',
    run: (a) => onConnections(a, 1, (raw) => raw.send(repeat(5, (i) => headerFrames(1 + 2 * i, hpackBomb(120_000))))),
  },
  {
    port: 'etcd',
    name: 'CONTINUATION flood (one header block never ended: 5,000 frames of 2 KB)',
    run: (a) =>
      onConnections(a, 1, async (raw) => {
        const head = frame(FRAME.HEADERS, 0, 1, grpcRequestBlock(RANGE))
        void raw.send(Buffer.concat([head, repeat(5000, () => frame(FRAME.CONTINUATION, 0, 1, literal('x-c', 'y'.repeat(2000))))]))
        await raw.until(() => raw.of(FRAME.GOAWAY).length > 0 || raw.resets().size > 0, 10_000)
      }),
  },
  {
    port: 'etcd',
    name: 'oversized header lists (50 streams with a 1 MB header)',
    run: (a) =>
      onConnections(a, 1, async (raw) => {
        // The server stops reading once it has refused the connection: the write may never complete.
        void raw.send(
          repeat(50, (i) => headerFrames(1 + 2 * i, Buffer.concat([grpcRequestBlock(RANGE), literal('x-big', 'y'.repeat(1 << 20))]))),
        )
        await raw.until(() => raw.of(FRAME.GOAWAY).length > 0 || raw.resets().size === 50, 10_000)
      }),
  },
  {
    port: 'etcd',
    name: 'half-open streams (2 connections × 1,500 Watch streams)',
    run: (a) => onConnections(a, 2, (raw) => raw.send(repeat(1500, (i) => headerFrames(1 + 2 * i, grpcRequestBlock(WATCH)))), HOLD_MS),
  },
  {
    port: 'etcd',
    name: 'idle connections (1,000 after the preface)',
    run: (a) => onConnections(a, 1000, () => Promise.resolve(), HOLD_MS),
  },
  {
    port: 'etcd',
    name: 'slowloris (200 connections dribbling the preface)',
    run: (a) => onSockets(a, 200, (s) => dribble(s, Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), 100, HOLD_MS)),
  },
  {
    port: 'native',
    name: 'slowloris (200 connections dribbling request headers)',
    run: (a) =>
      onSockets(a, 200, (s) => dribble(s, Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: aaaaaaaaaaaaaaaaaaa'), 100, HOLD_MS)),
  },
  {
    port: 'native',
    name: 'idle connections (1,000 saying nothing)',
    run: (a) => onSockets(a, 1000, () => undefined, HOLD_MS),
  },
  {
    port: 'native',
    name: 'oversized headers (100 requests with a 1 MB header)',
    run: (a) => onSockets(a, 100, (s) => void s.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(1 << 20)}\r\n\r\n`), 200),
  },
  {
    port: 'native',
    name: 'malformed requests and HTTP/2 frames (PING flood, HPACK bomb) on the HTTP/1.1 port',
    run: (a) => {
      const bad = [
        Buffer.from('GET / HTTP/9.9\r\n\r\n'),
        Buffer.from('\x00\x01\x02garbage\r\n\r\n'),
        Buffer.from('POST /v1/keys/a HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'),
        Buffer.from('POST /v1/keys/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nzz\r\n'),
        Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), repeat(20_000, () => frame(FRAME.PING, 0, 0, Buffer.alloc(8)))]),
        Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), headerFrames(1, hpackBomb(120_000))]),
      ]
      return Promise.all(bad.map((bytes) => onSockets(a, 1, (s) => void s.write(bytes), 200))).then(() => undefined)
    },
  },
]
