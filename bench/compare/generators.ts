/**
 * Load generator processes (load-worker.ts, forked): a load is split over several of them so the
 * generator is not the bottleneck, and their results are merged.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { mergeSamples, summarize, type LatencySummary } from '../lib/latency-sample.js'
import type { ListCommand, ListResult, LoadResult, PutsCommand, RangesCommand, WatchCommand, WatchReport } from './load-worker.js'
import { cpuSecondsOf } from './systems.js'

const WORKER = fileURLToPath(new URL('./load-worker.js', import.meta.url))

export function forkWorker(): ChildProcess {
  return fork(WORKER, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
}

/** Idle load generators, reused between loads (forking one costs about a second on a busy machine). */
const idle: ChildProcess[] = []

function takeWorkers(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => idle.pop() ?? forkWorker())
}

/** Ends the idle generators (call once at the end). */
export function closeGenerators(): void {
  for (const w of idle.splice(0)) w.kill()
}

/** A bench's main: an error is printed and fails the process; the generators are closed; the process exits soon after. */
export async function runMain(main: () => Promise<void>): Promise<void> {
  try {
    await main()
  } catch (err) {
    console.error(err)
    process.exitCode = 1
  } finally {
    closeGenerators()
  }
  setTimeout(() => process.exit(), 1000).unref()
}

export function ask<T>(child: ChildProcess, msg: object, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = () => reject(new Error('load generator exited'))
    const on = (m: { kind: string; message?: string }) => {
      if (m.kind !== kind && m.kind !== 'error') return
      child.off('message', on)
      child.off('exit', onExit)
      if (m.kind === 'error') reject(new Error(m.message))
      else resolve(m as T)
    }
    child.on('message', on)
    child.once('exit', onExit)
    child.send(msg)
  })
}

export interface Throughput {
  opsPerSec: number
  ops: number
  /** When the first generator started (ms since the epoch). */
  startedAt: number
  p50: number
  p99: number
  max: number
  stddev: number
  /** The latencies behind p50 and p99: how many, over what window. */
  latency: LatencySummary
}

/**
 * A comma-separated target list (a cluster's members) rotated by n: a generator whose first connection is
 * the load's n-th starts at the n-th target, so connections spread evenly over the members.
 */
function rotate(targets: string, n: number): string {
  const list = targets.split(',')
  const k = n % list.length
  return [...list.slice(k), ...list.slice(0, k)].join(',')
}

function split(n: number, parts: number, i: number): number {
  return Math.floor(n / parts) + (i < n % parts ? 1 : 0)
}

/**
 * Runs one load over `processes` generators (clients, connections, count and rate split between them)
 * and merges: ops/s over the longest generator's time, latency percentiles over all samples (ms).
 * When `stop` settles, the generators finish the operations in flight and report.
 */
export async function runLoad(command: PutsCommand | RangesCommand, processes: number, stop?: Promise<unknown>): Promise<Throughput> {
  const n = Math.max(1, Math.min(processes, command.clients))
  const workers = takeWorkers(n)
  void stop?.then(() => {
    for (const w of workers) if (w.connected) w.send({ cmd: 'stop' })
  })
  try {
    let keyStart = command.cmd !== 'ranges' ? (command.keyStart ?? 0) : 0
    let connectionsBefore = 0
    const results = await Promise.all(
      workers.map((w, i) => {
        const part = { ...command, clients: split(command.clients, n, i), connections: Math.max(1, split(command.connections, n, i)) }
        part.target = rotate(command.target, connectionsBefore)
        connectionsBefore += part.connections
        if (part.cmd !== 'ranges') {
          if (part.count !== undefined) {
            part.count = split(part.count, n, i)
            part.keyStart = keyStart
            keyStart += part.count
          }
          if (part.rate !== undefined) part.rate = (part.rate * part.clients) / command.clients
        }
        return ask<LoadResult>(w, part, 'done')
      }),
    )
    idle.push(...workers)
    const failed = results.find((r) => r.errors > 0)
    if (failed) throw new Error(`${failed.errors} requests failed, e.g. ${failed.firstError}`)
    const latency = summarize(mergeSamples(results.map((r) => r.latencies)))
    const ops = results.reduce((s, r) => s + r.ops, 0)
    return {
      opsPerSec: ops / Math.max(...results.map((r) => r.seconds)),
      ops,
      startedAt: Math.min(...results.map((r) => r.startedAt)),
      p50: latency.p50,
      p99: latency.p99,
      max: latency.max,
      stddev: latency.stddev,
      latency,
    }
  } catch (err) {
    for (const w of workers) if (!idle.includes(w)) w.kill()
    throw err
  }
}

/** One paged list (load-worker.ts's `list`) from one generator. */
export async function runList(command: ListCommand): Promise<ListResult> {
  const [worker] = takeWorkers(1)
  try {
    const r = await ask<ListResult>(worker, command, 'listed')
    idle.push(worker)
    return r
  } catch (err) {
    worker.kill()
    throw err
  }
}

/** Watch generators holding `command.watchers` watchers in total. */
export class WatchGenerators {
  private constructor(private readonly workers: ChildProcess[]) {}

  static fork(processes: number): WatchGenerators {
    return new WatchGenerators(Array.from({ length: processes }, forkWorker))
  }

  /** Creates the watches (spread over the processes); resolves once every one is created. */
  async watch(command: WatchCommand): Promise<void> {
    const n = this.workers.length
    let streamsBefore = 0
    await Promise.all(
      this.workers.map((w, i) => {
        const streams = Math.max(1, split(command.streams, n, i))
        const target = rotate(command.target, streamsBefore)
        streamsBefore += streams
        return ask(w, { ...command, target, watchers: split(command.watchers, n, i), streams }, 'ready')
      }),
    )
  }

  report(latencies = false): Promise<WatchReport[]> {
    return Promise.all(this.workers.map((w) => ask<WatchReport>(w, { cmd: 'report', latencies }, 'report')))
  }

  /** CPU seconds the generator processes have used so far (decoding what the server sends is most of it). */
  async cpuSeconds(): Promise<number> {
    const each = await Promise.all(this.workers.map((w) => cpuSecondsOf(w.pid!)))
    return each.reduce((a, b) => a + b, 0)
  }

  stop(): void {
    for (const w of this.workers) w.kill()
  }
}
