/**
 * npm run bench:watch [-- --json] [--quick] [--seconds S]
 *
 * Watch fan-out and catch-up against a real `kvlog serve` (fsync always), over WebSockets:
 * 1. 1,000 watchers on one prefix, spread over 50 connections held by 2 client processes, while one
 *    writer commits 1,000 revisions/s (paced puts): deliveries/s and delivery latency. Latency is from
 *    the write request being sent to the event's receipt by a watcher, so it includes the commit (fsync):
 *    an upper bound of commit-to-receipt.
 * 2. 100 watchers (10 connections) resuming 10,000 revisions behind: events/s until all caught up.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { mergeSamples, summarize, type LatencySample } from './lib/latency-sample.js'
import { benchOptions, JSON_OPTION, QUICK_OPTION } from './lib/options.js'
import { endProgress, progress, table } from './lib/report.js'
import { startKvlog } from './lib/server.js'

const args = benchOptions('npm run bench:watch -- [options]: watch fan-out and catch-up of a real kvlog serve', {
  json: JSON_OPTION,
  quick: QUICK_OPTION,
  seconds: { kind: 'number', default: 10, quick: 2, value: 'S', help: 'seconds of writes under the watchers' },
})
const seconds = args.seconds
const WATCHERS = args.quick ? 100 : 1000
const CONNECTIONS = args.quick ? 10 : 50
const RATE = 1000
const CATCHUP_WATCHERS = args.quick ? 10 : 100
const CATCHUP_REVISIONS = args.quick ? 1000 : 10_000
const PREFIX = '/bench/watch/'
const CLIENT = fileURLToPath(new URL('./lib/watch-clients.js', import.meta.url))

interface Report {
  events: number
  messages: number
  latencies: LatencySample
  lastRevisionMin: number
  doneAt?: number
}

const now = () => performance.timeOrigin + performance.now()

function startClients(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => fork(CLIENT, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }))
}

function request<T>(child: ChildProcess, msg: object, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: { kind: string; message?: string }) => {
      if (m.kind === 'error') reject(new Error(m.message))
      if (m.kind !== kind) return
      child.off('message', on)
      resolve(m as T)
    }
    child.on('message', on)
    child.send(msg)
  })
}

/** One put; a connection reset is retried (a benchmark can afford an extra revision, unlike a client). */
async function put(http: string, key: string, value: string, attempt = 0): Promise<number> {
  let res: Response
  try {
    res = await fetch(`${http}/v1/kv`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key, value }),
    })
  } catch (err) {
    if (attempt < 3) return put(http, key, value, attempt + 1)
    throw err
  }
  if (!res.ok) throw new Error(`put failed: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { header: { revision: number } }).header.revision
}

/** Puts in flight at most: when the server falls behind, the writer slows down instead of piling up. */
const MAX_INFLIGHT = 64

/**
 * Puts at `rate` per second for `durationMs`, spread over 100 keys. Resolves with the last revision and
 * how many puts were done (fewer than rate x duration when the server could not keep up).
 */
async function paced(http: string, rate: number, durationMs: number): Promise<{ last: number; puts: number }> {
  let last = 0
  let sent = 0
  const start = now()
  const inflight = new Set<Promise<void>>()
  while (now() - start < durationMs) {
    const due = Math.floor(((now() - start) / 1000) * rate)
    while (sent < due && inflight.size < MAX_INFLIGHT) {
      const i = sent++
      const p: Promise<void> = put(http, `${PREFIX}k${i % 100}`, JSON.stringify({ t: now() })).then((rev) => {
        last = Math.max(last, rev)
        inflight.delete(p)
      })
      inflight.add(p)
    }
    await new Promise((r) => setTimeout(r, 2))
  }
  await Promise.all(inflight)
  return { last, puts: sent }
}

async function main(): Promise<void> {
  const server = await startKvlog()
  const clients = startClients(2)
  try {
    // 1. Fan-out.
    progress(`fan-out: ${WATCHERS} watchers on ${CONNECTIONS} connections`)
    const perClient = CONNECTIONS / clients.length
    await Promise.all(
      clients.map((c) =>
        request(
          c,
          {
            cmd: 'watch',
            url: server.http,
            connections: perClient,
            watchersPerConnection: WATCHERS / CONNECTIONS,
            prefix: PREFIX,
          },
          'ready',
        ),
      ),
    )
    progress(`fan-out: writing ${RATE} revisions/s for ${seconds}s`)
    const before = await Promise.all(clients.map((c) => request<Report>(c, { cmd: 'report' }, 'report')))
    const t0 = now()
    const { last: lastRevision, puts } = await paced(server.http, RATE, seconds * 1000)
    const achievedRate = puts / seconds
    // Let the tail of deliveries arrive (bounded wait).
    for (let i = 0; i < 100; i++) {
      const r = await Promise.all(clients.map((c) => request<Report>(c, { cmd: 'report' }, 'report')))
      if (r.every((x) => x.lastRevisionMin >= lastRevision)) break
      await new Promise((res) => setTimeout(res, 50))
    }
    const elapsed = (now() - t0) / 1000
    const after = await Promise.all(clients.map((c) => request<Report>(c, { cmd: 'report' }, 'report')))
    const delivered = after.reduce((s, r) => s + r.events, 0) - before.reduce((s, r) => s + r.events, 0)
    const latency = summarize(mergeSamples(after.map((r) => r.latencies)))
    for (const c of clients) c.kill()

    // 2. Catch-up: fill to CATCHUP_REVISIONS behind, then resume watchers from there.
    progress(`catch-up: writing ${CATCHUP_REVISIONS} revisions`)
    let head = lastRevision
    while (head - lastRevision < CATCHUP_REVISIONS) {
      const batch = await Promise.all(Array.from({ length: 200 }, (_, i) => put(server.http, `${PREFIX}c${i}`, JSON.stringify({ t: 0 }))))
      head = Math.max(head, ...batch)
    }
    const from = head - CATCHUP_REVISIONS + 1
    progress(`catch-up: ${CATCHUP_WATCHERS} watchers resuming ${CATCHUP_REVISIONS} revisions behind`)
    const catchers = startClients(2)
    const c0 = now()
    await Promise.all(
      catchers.map((c) =>
        request(
          c,
          {
            cmd: 'watch',
            url: server.http,
            connections: Math.max(1, Math.round(CATCHUP_WATCHERS / 20)),
            watchersPerConnection: Math.min(10, CATCHUP_WATCHERS / 2),
            prefix: PREFIX,
            startRevision: from,
            until: head,
          },
          'ready',
        ),
      ),
    )
    let reports: Report[] = []
    for (;;) {
      reports = await Promise.all(catchers.map((c) => request<Report>(c, { cmd: 'report' }, 'report')))
      if (reports.every((r) => r.doneAt !== undefined) || now() - c0 > 120_000) break
      await new Promise((res) => setTimeout(res, 20))
    }
    const catchUpSeconds = (Math.max(...reports.map((r) => r.doneAt ?? now())) - c0) / 1000
    const catchUpEvents = reports.reduce((s, r) => s + r.events, 0)
    for (const c of catchers) c.kill()
    endProgress()

    const result = {
      deliveriesPerSec: Math.round(delivered / elapsed),
      expectedDeliveriesPerSec: WATCHERS * RATE,
      achievedRevisionsPerSec: Math.round(achievedRate),
      deliveryP50Ms: Number(latency.p50.toFixed(2)),
      deliveryP99Ms: Number(latency.p99.toFixed(2)),
      deliveryLatencyEvents: latency.count,
      deliveryLatencyWindowSeconds: Number(latency.windowSeconds.toFixed(1)),
      catchUpEventsPerSec: Math.round(catchUpEvents / catchUpSeconds),
      catchUpSeconds: Number(catchUpSeconds.toFixed(2)),
      watchers: WATCHERS,
      connections: CONNECTIONS,
      revisionsPerSec: RATE,
      seconds,
      catchUpWatchers: CATCHUP_WATCHERS,
      catchUpRevisions: CATCHUP_REVISIONS,
    }
    console.log(
      table([
        ['metric', 'value'],
        [`deliveries/s (${WATCHERS} watchers, ${CONNECTIONS} conns, ${RATE} rev/s)`, result.deliveriesPerSec],
        ['  expected (watchers x target rate)', result.expectedDeliveriesPerSec],
        ['  revisions/s the writer achieved (target 1,000)', result.achievedRevisionsPerSec],
        ['delivery p50 ms (request sent -> event received)', result.deliveryP50Ms],
        ['delivery p99 ms', result.deliveryP99Ms],
        ['  events behind p50/p99 (one latency each, sampled fairly)', result.deliveryLatencyEvents],
        ['  seconds they span', result.deliveryLatencyWindowSeconds],
        [`catch-up events/s (${CATCHUP_WATCHERS} watchers, ${CATCHUP_REVISIONS} revisions behind)`, result.catchUpEventsPerSec],
        ['catch-up time s', result.catchUpSeconds],
      ]),
    )
    if (args.json) console.log(JSON.stringify(result))
  } finally {
    endProgress()
    await server.stop()
  }
}

await main()
