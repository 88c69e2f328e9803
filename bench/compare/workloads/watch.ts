/**
 * Workload 4, watch fan-out: `watchers` gRPC watchers on one prefix over `watchStreams` streams (each on
 * its own connection), held by 2 generator processes that read responses cheaply (grpc.ts), while one
 * paced writer process commits `watchRate` revisions/s (puts of a {"t": send time} value over 100 keys).
 * Deliveries/s = events received by all watchers / time from the first put to the last delivery (or a
 * grace of 10 s). Latency = receipt - send time of the put: commit (fsync) included, an upper bound of
 * commit-to-receipt. Also kvlog's native WebSocket watch (bench/lib/watch-clients.ts) with the same
 * watchers, connections and writer (native HTTP puts), against etcd's gRPC figures.
 *
 * At saturation (`watch-saturated-*`), the writer is closed-loop instead (`saturationClients` clients, as
 * fast as each system accepts its puts), so deliveries/s is what the server delivers, not what the writer
 * offers; medians of `rounds` runs alternating which system goes first.
 *
 * Workload 5, resume: `resumeWatchers` watchers (10 streams) created `resumeRevisions` revisions behind
 * the head: ms from sending the creates until every watcher has received every event.
 */
import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describeSample, mergeSamples, summarize, type LatencySample, type LatencySummary } from '../../lib/latency-sample.js'
import { fromRuns, medianOf, repeat, rounds, type Figure, type Pair, type Scale } from '../figures.js'
import { ask, runLoad, WatchGenerators, type Throughput } from '../generators.js'
import { connect, put } from '../grpc.js'
import type { Runs } from '../plan.js'
import type { System } from '../systems.js'

const WS_CLIENT = fileURLToPath(new URL('../../lib/watch-clients.js', import.meta.url))
const now = () => performance.timeOrigin + performance.now()

export interface FanOut {
  deliveriesPerSec: number
  p99: number
  p50: number
  /** The events behind p50 and p99 (one latency per event, sampled fairly over the run). */
  latency: LatencySummary
  writesPerSec: number
  /** Events received by all watchers. */
  deliveries: number
  /** CPU seconds the server process spent from the writer's start until the last delivery. */
  serverCpuSeconds: number
}

interface Progress {
  events: number
  minEvents: number
  /** Each generator process's sample (empty unless asked for). */
  latencies: LatencySample[]
}

/** Writes at the scale's rate while `progress` reports; waits for the tail; computes the figures. */
async function measure(
  system: Partial<Pick<System, 'cpuSeconds'>>,
  scale: Scale,
  writer: () => Promise<Throughput>,
  progress: (latencies: boolean) => Promise<Progress>,
): Promise<FanOut> {
  const before = await progress(false)
  // A system without a CPU reading (a cluster of processes) reports NaN.
  const cpuSeconds = system.cpuSeconds ?? (() => Promise.resolve(NaN))
  const cpuBefore = await cpuSeconds()
  const { ops, opsPerSec, startedAt: t0 } = await writer()
  let last = await progress(false)
  while (last.minEvents - before.minEvents < ops && now() - t0 < scale.watchSeconds * 1000 + scale.graceMs) {
    await new Promise((r) => setTimeout(r, 50))
    last = await progress(false)
  }
  const elapsed = (now() - t0) / 1000
  const serverCpuSeconds = (await cpuSeconds()) - cpuBefore
  const final = await progress(true)
  const latency = summarize(mergeSamples(final.latencies))
  return {
    deliveries: final.events - before.events,
    serverCpuSeconds,
    deliveriesPerSec: (final.events - before.events) / elapsed,
    p50: latency.p50,
    p99: latency.p99,
    latency,
    writesPerSec: opsPerSec,
  }
}

/** The writer: `rate` revisions/s, or closed-loop (as fast as the system accepts) when rate is undefined. */
/**
 * The writer's pace: revisions/s, or 'saturation' for a closed-loop writer (as fast as the system accepts).
 * A string, not `undefined`: an explicit undefined argument would take the parameter's default.
 */
type WriterRate = number | 'saturation'

function paced(target: string, cmd: 'puts' | 'http-puts', scale: Scale, prefix: string, rate: WriterRate = scale.watchRate) {
  return () =>
    runLoad(
      {
        cmd,
        target,
        clients: rate === 'saturation' ? scale.saturationClients : 64,
        connections: 4,
        durationMs: scale.watchSeconds * 1000,
        rate: rate === 'saturation' ? undefined : rate,
        keyPrefix: prefix,
        keys: 100,
        valueBytes: 0,
        stamp: true,
      },
      1,
    )
}

/**
 * gRPC watch fan-out with the writer at `rate` revisions/s ('saturation': closed-loop). A comma-separated
 * `system.grpc` spreads the streams and the writer's connections over members.
 */
export async function grpcFanOut(
  system: Pick<System, 'grpc'> & Partial<Pick<System, 'cpuSeconds'>>,
  scale: Scale,
  rate: WriterRate = scale.watchRate,
): Promise<FanOut> {
  const prefix = '/bench/watch/'
  const g = WatchGenerators.fork(2)
  try {
    await g.watch({ cmd: 'watch', target: system.grpc, watchers: scale.watchers, streams: scale.watchStreams, prefix })
    return await measure(system, scale, paced(system.grpc, 'puts', scale, prefix, rate), async (latencies) => {
      const r = await g.report(latencies)
      return {
        events: r.reduce((s, x) => s + x.events, 0),
        minEvents: Math.min(...r.map((x) => x.minEvents)),
        latencies: r.flatMap((x) => (x.latencies ? [x.latencies] : [])),
      }
    })
  } finally {
    g.stop()
  }
}

async function nativeFanOut(system: System, scale: Scale): Promise<FanOut> {
  const prefix = '/bench/watch-native/'
  const clients: ChildProcess[] = [0, 1].map(() => fork(WS_CLIENT, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }))
  try {
    await Promise.all(
      clients.map((c) =>
        ask(
          c,
          {
            cmd: 'watch',
            url: system.http,
            connections: scale.watchStreams / 2,
            watchersPerConnection: scale.watchers / scale.watchStreams,
            prefix,
          },
          'ready',
        ),
      ),
    )
    // watch-clients.ts tracks revisions, not counts: a watcher has everything once its last revision is the head.
    let head = 0
    return await measure(
      system,
      scale,
      async () => {
        const r = await paced(system.http!, 'http-puts', scale, prefix)()
        const client = connect(system.grpc)
        head = (await put(client, '/bench/other', Buffer.from('x'))) - 1
        client.close()
        return r
      },
      async () => {
        const r = await Promise.all(
          clients.map((c) => ask<{ events: number; lastRevisionMin: number; latencies: LatencySample }>(c, { cmd: 'report' }, 'report')),
        )
        const caughtUp = head > 0 && r.every((x) => x.lastRevisionMin >= head)
        return { events: r.reduce((s, x) => s + x.events, 0), minEvents: caughtUp ? Infinity : 0, latencies: r.map((x) => x.latencies) }
      },
    )
  } finally {
    for (const c of clients) c.kill()
  }
}

interface Resumed {
  ms: number
  /** CPU seconds of the server, and of the watch clients, from the watches' creation until they have everything. */
  serverCpu: number
  clientCpu: number
}

/**
 * Workload 5. The CPU figures show where the time goes: the watch clients (grpc-js and protobufjs decoding
 * every event, the same code for both systems) share the two cores with the server.
 */
async function resume(system: System, scale: Scale): Promise<Resumed> {
  const prefix = '/bench/resume/'
  const client = connect(system.grpc)
  const from = await put(client, `${prefix}first`, Buffer.alloc(256, 'v'))
  client.close()
  await runLoad(
    {
      cmd: 'puts',
      target: system.grpc,
      clients: 64,
      connections: 4,
      durationMs: 600_000,
      count: scale.resumeRevisions - 1,
      keyPrefix: prefix,
      keys: 1000,
      valueBytes: 256,
    },
    1,
  )
  const g = WatchGenerators.fork(2)
  try {
    const [server0, client0] = [await system.cpuSeconds(), await g.cpuSeconds()]
    const t0 = now()
    await g.watch({
      cmd: 'watch',
      target: system.grpc,
      watchers: scale.resumeWatchers,
      streams: Math.min(10, scale.resumeWatchers),
      prefix,
      startRevision: from,
      expectEvents: scale.resumeRevisions,
    })
    for (;;) {
      const r = await g.report()
      if (r.every((x) => x.doneAt !== undefined)) {
        const ms = Math.max(...r.map((x) => x.doneAt!)) - t0
        return { ms, serverCpu: (await system.cpuSeconds()) - server0, clientCpu: (await g.cpuSeconds()) - client0 }
      }
      if (now() - t0 > 300_000) throw new Error(`${system.name}: resume did not finish in 300 s`)
      await new Promise((res) => setTimeout(res, 20))
    }
  } finally {
    g.stop()
  }
}

/** How many events each side's p99 comes from, and the seconds they span (the first round's). */
function latencyNote(runs: Runs<FanOut>): string {
  return `kvlog ${describeSample('events', runs.kvlog[0].latency)}, etcd ${describeSample('events', runs.etcd[0].latency)} (first round)`
}

/** Deliveries/s and p99 of fan-out runs, the writer's rate and p50 in the notes. */
function fanOutFigures(prefix: string, runs: Runs<FanOut>): Figure[] {
  const m = (side: 'kvlog' | 'etcd', f: (x: FanOut) => number) => medianOf(runs, side, f)
  return [
    fromRuns(
      {
        name: `${prefix}-deliveries-per-sec`,
        unit: 'events/s',
        higherIsBetter: true,
        note: `writer reached ${Math.round(m('kvlog', (x) => x.writesPerSec))} / ${Math.round(m('etcd', (x) => x.writesPerSec))} rev/s`,
      },
      runs,
      (x) => x.deliveriesPerSec,
    ),
    fromRuns(
      {
        name: `${prefix}-p99-ms`,
        unit: 'ms',
        higherIsBetter: false,
        note: `p50 ${m('kvlog', (x) => x.p50).toFixed(1)} / ${m('etcd', (x) => x.p50).toFixed(1)} ms; ${latencyNote(runs)}`,
      },
      runs,
      (x) => x.p99,
    ),
  ]
}

export async function watch(pair: Pair, scale: Scale): Promise<Figure[]> {
  const fan = await rounds(pair, scale, (s) => grpcFanOut(s, scale))
  const native = await repeat(scale, () => nativeFanOut(pair.kvlog, scale))
  const resumed = await rounds(pair, scale, (s) => resume(s, scale))
  // Fan-out with the writer as fast as each system accepts: what the server delivers, not what the writer offers.
  const saturated = await rounds(pair, scale, (s) => grpcFanOut(s, scale, 'saturation'))
  const w = `${scale.watchers}w-${scale.watchRate}rps`
  const nativeNote = 'kvlog native WebSocket vs etcd gRPC'
  const cpu = (side: 'kvlog' | 'etcd', f: (x: Resumed) => number) => medianOf(resumed, side, f).toFixed(2)
  return [
    ...fanOutFigures(`watch-${w}`, fan),
    ...fanOutFigures(`native-ws-watch-${w}`, { kvlog: native, etcd: fan.etcd }).map((f) => ({ ...f, note: `${nativeNote}; ${f.note}` })),
    fromRuns(
      {
        name: `watch-resume-${scale.resumeWatchers}w-${scale.resumeRevisions}-behind-ms`,
        unit: 'ms',
        higherIsBetter: false,
        note: `CPU s server ${cpu('kvlog', (x) => x.serverCpu)} / ${cpu('etcd', (x) => x.serverCpu)}, watch clients ${cpu('kvlog', (x) => x.clientCpu)} / ${cpu('etcd', (x) => x.clientCpu)}`,
      },
      resumed,
      (x) => x.ms,
    ),
    ...fanOutFigures(`watch-saturated-${scale.watchers}w`, saturated),
  ]
}
