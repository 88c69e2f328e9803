/**
 * A load generator process for bench/compare (started with child_process.fork, so the generators do not
 * share the event loop of the script or of each other). The same code drives etcd and kvlog: grpc-js
 * with our etcd .proto definitions; `http-puts` drives kvlog's native HTTP API for its own figures.
 *
 * parent → one command (below); child → { kind: 'done', ... } for loads, or for `watch`: { kind: 'ready' }
 * once every watch is created, then { kind: 'report', ... } on each { cmd: 'report' }.
 */
import { Agent, request as httpRequest, type RequestOptions } from 'node:http'
import type { ClientDuplexStream } from '@grpc/grpc-js'
import type { Message } from '../../apiserver/etcd/proto.js'
import { connect, connectRawRange, rawRange, readRangeResponse, readWatchResponse, type EtcdClient } from './grpc.js'
import { Reservoir, type LatencySample } from '../lib/latency-sample.js'
import { pacedLatency, sleepUntil } from '../lib/pacing.js'

export interface PutsCommand {
  cmd: 'puts' | 'http-puts'
  /** gRPC "host:port", or the HTTP base URL for http-puts. */
  target: string
  clients: number
  /** TCP connections the clients share (gRPC); clients are spread round-robin. */
  connections: number
  /** Stop after this long, or after `count` puts, whichever first. */
  durationMs: number
  count?: number
  keyPrefix: string
  /** Put i writes key keyPrefix + (keyStart + i) % keys, zero-padded. */
  keys: number
  keyStart?: number
  valueBytes: number
  /** Paced: this many puts/s in total, latency from each put's scheduled time (no coordinated omission; bench/lib/pacing.ts). */
  rate?: number
  /** Values carry the send time ({"t":ms}) for watch latency. */
  stamp?: boolean
}

export interface RangesCommand {
  cmd: 'ranges'
  target: string
  clients: number
  connections: number
  durationMs: number
  /** point: get one of `keys` keys under prefix; prefix: list everything under prefix. */
  mode: 'point' | 'prefix'
  prefix: string
  keys: number
}

/**
 * One paged list of everything under `prefix`, as kube-apiserver lists: pages of `page` kvs, each from the
 * key after the previous page's last, the later pages at the first page's revision.
 */
export interface ListCommand {
  cmd: 'list'
  target: string
  prefix: string
  page: number
}

export interface ListResult {
  kind: 'listed'
  keys: number
  pages: number
  ms: number
}

export interface WatchCommand {
  cmd: 'watch'
  target: string
  watchers: number
  /** Watch streams (each on its own connection); watchers are spread over them. */
  streams: number
  prefix: string
  startRevision?: number
  /** Report doneAt once every watcher has received this many events. */
  expectEvents?: number
}

export interface LoadResult {
  kind: 'done'
  ops: number
  errors: number
  firstError?: string
  /** ms since the epoch. */
  startedAt: number
  seconds: number
  /** ms, every op (a uniform sample of them when there are very many). */
  latencies: LatencySample
}

export interface WatchReport {
  kind: 'report'
  events: number
  /** One latency per event received (a uniform sample of them), or none unless asked for. */
  latencies?: LatencySample
  minEvents: number
  doneAt?: number
}

const now = () => performance.timeOrigin + performance.now()

/** Set by { cmd: 'stop' }: loads end after their operations in flight. */
let stopped = false

const pad = (n: number) => n.toString().padStart(8, '0')

function unary(client: EtcdClient, method: 'Put' | 'Range', request: Message): Promise<void> {
  return new Promise((resolve, reject) => client.kv[method](request, (err) => (err ? reject(err) : resolve())))
}

/** One request on the agent's keep-alive connections; resolves with the status once the response is read. */
function httpSend(agent: Agent, url: URL, options: RequestOptions, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { ...options, agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function httpPut(agent: Agent, url: URL, body: string): Promise<void> {
  const status = await httpSend(
    agent,
    url,
    { method: 'PUT', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
    body,
  )
  if (status !== 200) throw new Error(`HTTP ${status}`)
}

/**
 * Opens the agent's `connections` keep-alive connections before a load is timed (a GET /healthz on each,
 * all at once), so that the load's latencies do not include a connection storm: 1,000 connects at once
 * overflow the server's listen backlog, and the dropped ones are retried after 1 s, 3 s, ...
 */
async function openConnections(agent: Agent, base: string, connections: number): Promise<void> {
  const url = new URL('/healthz', base)
  const statuses = await Promise.all(Array.from({ length: connections }, () => httpSend(agent, url, { method: 'GET' })))
  const bad = statuses.find((status) => status !== 200)
  if (bad !== undefined) throw new Error(`GET /healthz: HTTP ${bad}`)
}

/** Runs `clients` loops of op() until the deadline / count; op(i) does the i-th operation. */
async function drive(
  clients: number,
  durationMs: number,
  count: number,
  rate: number | undefined,
  op: (i: number, client: number) => Promise<void>,
): Promise<LoadResult> {
  const samples = new Reservoir()
  let next = 0
  let errors = 0
  let firstError: string | undefined
  const start = now()
  const deadline = start + durationMs
  stopped = false
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      // Paced: client c does its k-th put at start + (c + k * clients) / rate.
      let k = 0
      while (now() < deadline && next < count && !stopped) {
        let scheduled = now()
        let issued = scheduled
        if (rate !== undefined) {
          scheduled = start + ((c + k++ * clients) / rate) * 1000
          issued = await sleepUntil(scheduled, now)
          if (issued >= deadline || stopped) break
        }
        const i = next++
        try {
          await op(i, c)
          samples.add(pacedLatency(scheduled, issued, now()))
        } catch (err) {
          errors++
          firstError ??= String(err)
          if (errors > 1000) throw err
        }
      }
    }),
  )
  return {
    kind: 'done',
    ops: next - errors,
    errors,
    firstError,
    startedAt: start,
    seconds: (now() - start) / 1000,
    latencies: samples.snapshot(),
  }
}

function valueFor(c: PutsCommand): () => Buffer {
  const fixed = Buffer.alloc(c.valueBytes, 'v')
  if (!c.stamp) return () => fixed
  return () => {
    const stamp = Buffer.from(JSON.stringify({ t: now() }))
    return stamp.length >= c.valueBytes ? stamp : Buffer.concat([stamp, fixed.subarray(stamp.length)])
  }
}

/** Connection i's server: gRPC targets may be a comma-separated list (the members of a cluster), used in turn. */
function targetOf(targets: string, i: number): string {
  const list = targets.split(',')
  return list[i % list.length]
}

async function puts(c: PutsCommand): Promise<LoadResult> {
  const value = valueFor(c)
  const keyOf = (i: number) => c.keyPrefix + pad(((c.keyStart ?? 0) + i) % c.keys)
  const count = c.count ?? Number.MAX_SAFE_INTEGER
  if (c.cmd === 'http-puts') {
    const agent = new Agent({ keepAlive: true, maxSockets: c.connections })
    const url = new URL('/v1/kv', c.target)
    try {
      await openConnections(agent, c.target, c.connections)
      return await drive(c.clients, c.durationMs, count, c.rate, (i) =>
        httpPut(agent, url, JSON.stringify({ key: keyOf(i), value: value().toString() })),
      )
    } finally {
      agent.destroy()
    }
  }
  const conns = Array.from({ length: c.connections }, (_, i) => connect(targetOf(c.target, i)))
  try {
    return await drive(c.clients, c.durationMs, count, c.rate, (i, client) =>
      unary(conns[client % conns.length], 'Put', { key: Buffer.from(keyOf(i)), value: value() }),
    )
  } finally {
    for (const conn of conns) conn.close()
  }
}

async function ranges(c: RangesCommand): Promise<LoadResult> {
  const conns = Array.from({ length: c.connections }, (_, i) => connect(targetOf(c.target, i)))
  const prefix = Buffer.from(c.prefix)
  const end = Buffer.from(prefix)
  end[end.length - 1]++
  try {
    return await drive(c.clients, c.durationMs, Number.MAX_SAFE_INTEGER, undefined, (i, client) =>
      unary(
        conns[client % conns.length],
        'Range',
        c.mode === 'point' ? { key: Buffer.from(c.prefix + pad((i * 7919) % c.keys)) } : { key: prefix, range_end: end },
      ),
    )
  } finally {
    for (const conn of conns) conn.close()
  }
}

async function list(c: ListCommand): Promise<ListResult> {
  const client = connectRawRange(c.target)
  const end = Buffer.from(c.prefix)
  end[end.length - 1]++
  let key = Buffer.from(c.prefix)
  let revision = 0
  let keys = 0
  let pages = 0
  const start = now()
  try {
    for (;;) {
      const request: Message = { key, range_end: end, limit: c.page }
      if (revision > 0) request.revision = revision
      const r = readRangeResponse(await rawRange(client, request))
      if (revision === 0) revision = r.revision
      keys += r.kvs
      pages++
      if (!r.more || r.lastKey === undefined) break
      key = Buffer.concat([r.lastKey, Buffer.from([0])])
    }
  } finally {
    client.close()
  }
  return { kind: 'listed', keys, pages, ms: now() - start }
}

// ---- watch ----

const watchState = { events: 0, perWatcher: [] as number[], latencies: new Reservoir(), expect: 0, doneAt: undefined as number | undefined }

/**
 * Every stamped event's latency is offered to the sample; only the ones it keeps have their stamp parsed
 * (the generator must stay cheaper than the server).
 */
function sampleEventLatency(value: Buffer): void {
  if (value[0] !== 0x7b) return
  const slot = watchState.latencies.offer()
  if (slot < 0) return
  const t = Number(/"t":([0-9.]+)/.exec(value.toString('latin1'))?.[1])
  watchState.latencies.fill(slot, now() - t)
}

async function watch(c: WatchCommand): Promise<void> {
  watchState.perWatcher = new Array(c.watchers).fill(0)
  watchState.expect = c.expectEvents ?? 0
  const key = Buffer.from(c.prefix)
  const end = Buffer.from(key)
  end[end.length - 1]++
  const perStream = Math.ceil(c.watchers / c.streams)
  const streams: Array<ClientDuplexStream<Message, Buffer>> = []
  await Promise.all(
    Array.from(
      { length: c.streams },
      (_, s) =>
        new Promise<void>((resolve, reject) => {
          const base = s * perStream
          const count = Math.min(perStream, c.watchers - base)
          if (count <= 0) return resolve()
          const client = connect(targetOf(c.target, s))
          const stream = client.watch.Watch()
          streams.push(stream)
          let created = 0
          // Watch ids are per stream, given by the server in creation order (0, 1, ...).
          const ids = new Map<number, number>()
          stream.on('error', (err) => (created < count ? reject(err) : undefined))
          stream.on('data', (bytes: Buffer) => {
            const r = readWatchResponse(bytes, sampleEventLatency)
            if (r.created) {
              ids.set(r.watchId, base + created)
              if (++created === count) resolve()
              return
            }
            if (r.events === 0) return
            watchState.events += r.events
            const w = ids.get(r.watchId)
            if (w !== undefined) watchState.perWatcher[w] += r.events
            if (
              watchState.expect > 0 &&
              watchState.doneAt === undefined &&
              w !== undefined &&
              watchState.perWatcher[w] >= watchState.expect &&
              watchState.perWatcher.every((n) => n >= watchState.expect)
            ) {
              watchState.doneAt = now()
            }
          })
          // Creates go one at a time per stream (etcd answers in order), so ids map to watchers.
          for (let i = 0; i < count; i++) {
            const create: Message = { key, range_end: end }
            if (c.startRevision !== undefined) create.start_revision = c.startRevision
            stream.write({ create_request: create })
          }
        }),
    ),
  )
}

process.on(
  'message',
  (
    m:
      PutsCommand | RangesCommand | ListCommand | WatchCommand | { cmd: 'report'; latencies?: boolean } | { cmd: 'stop' } | { cmd: 'exit' },
  ) => {
    const fail = (err: unknown) => process.send!({ kind: 'error', message: String(err) })
    switch (m.cmd) {
      case 'puts':
      case 'http-puts':
        puts(m).then((r) => process.send!(r), fail)
        break
      case 'ranges':
        ranges(m).then((r) => process.send!(r), fail)
        break
      case 'list':
        list(m).then((r) => process.send!(r), fail)
        break
      case 'watch':
        watch(m).then(() => process.send!({ kind: 'ready' }), fail)
        break
      case 'report': {
        const report: WatchReport = {
          kind: 'report',
          events: watchState.events,
          latencies: m.latencies ? watchState.latencies.snapshot() : undefined,
          minEvents: Math.min(...watchState.perWatcher),
          doneAt: watchState.doneAt,
        }
        process.send!(report)
        break
      }
      case 'stop':
        stopped = true
        break
      default:
        process.exit(0)
    }
  },
)
