/**
 * Latencies of a whole run, kept fairly: a uniform sample of every latency offered (reservoir sampling,
 * Algorithm R), so a p99 covers the run from its first event to its last however many events there are,
 * with the exact count, max, mean and the window the events span. One per load generator process; the
 * parent merges them (`mergeSamples`) in proportion to what each process saw.
 *
 * A watch generator offers one latency per event, not per response: a server that batches events into one
 * response must not have them weighted less than a server that sends one response per event.
 */
import { percentile } from './report.js'

/** What a generator sends its parent: plain data (it crosses process IPC). */
export interface LatencySample {
  /** Every latency offered. */
  count: number
  /** A uniform sample of them, ms. */
  values: number[]
  /** ms since the epoch when the first and the last latency were offered (NaN before any). */
  firstAt: number
  lastAt: number
  max: number
  sum: number
  sumSquares: number
}

/** Enough for a p99 of a long run to within a small fraction of a percent of rank. */
export const RESERVOIR_SIZE = 200_000

const now = () => performance.timeOrigin + performance.now()

export class Reservoir {
  private readonly sample: LatencySample = { count: 0, values: [], firstAt: NaN, lastAt: NaN, max: 0, sum: 0, sumSquares: 0 }

  constructor(
    private readonly size = RESERVOIR_SIZE,
    private readonly random: () => number = Math.random,
    private readonly clock: () => number = now,
  ) {}

  /**
   * Counts one more latency and says where to keep it: a slot for `fill`, or -1 when the sample leaves it
   * out. Lets a caller skip reading the latency (parsing a value) of the events the sample leaves out.
   */
  offer(): number {
    const s = this.sample
    const at = this.clock()
    if (s.count === 0) s.firstAt = at
    s.lastAt = at
    s.count++
    if (s.values.length < this.size) return s.values.length
    const j = Math.floor(this.random() * s.count)
    return j < this.size ? j : -1
  }

  /** Keeps `ms` in the slot `offer` gave. */
  fill(slot: number, ms: number): void {
    this.sample.values[slot] = ms
  }

  /** Offers and keeps one latency; also counts it into max, mean and stddev (exact, over every latency). */
  add(ms: number): void {
    const slot = this.offer()
    if (slot >= 0) this.fill(slot, ms)
    this.track(ms)
  }

  /** Counts a latency into max, mean and stddev without sampling it (after `offer` + `fill`). */
  track(ms: number): void {
    const s = this.sample
    if (ms > s.max) s.max = ms
    s.sum += ms
    s.sumSquares += ms * ms
  }

  get count(): number {
    return this.sample.count
  }

  snapshot(): LatencySample {
    return { ...this.sample, values: [...this.sample.values] }
  }
}

/** Takes k of xs at random (a partial Fisher–Yates shuffle on a copy). */
function pick(xs: number[], k: number, random: () => number): number[] {
  const a = [...xs]
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (a.length - i))
    ;[a[i], a[j]] = [a[j], a[i]]
  }
  return a.slice(0, k)
}

/**
 * One uniform sample of the union: each part contributes values in proportion to the latencies it saw,
 * as many as the part with the fewest values per latency seen allows.
 */
export function mergeSamples(parts: LatencySample[], random: () => number = Math.random): LatencySample {
  const seen = parts.filter((p) => p.count > 0 && p.values.length > 0)
  const count = parts.reduce((s, p) => s + p.count, 0)
  const total = Math.min(...seen.map((p) => Math.floor((p.values.length * count) / p.count)))
  const values = seen.flatMap((p) => pick(p.values, Math.min(p.values.length, Math.round((total * p.count) / count)), random))
  const times = (f: (p: LatencySample) => number) => seen.map(f)
  return {
    count,
    values,
    firstAt: seen.length > 0 ? Math.min(...times((p) => p.firstAt)) : NaN,
    lastAt: seen.length > 0 ? Math.max(...times((p) => p.lastAt)) : NaN,
    max: parts.reduce((m, p) => Math.max(m, p.max), 0),
    sum: parts.reduce((s, p) => s + p.sum, 0),
    sumSquares: parts.reduce((s, p) => s + p.sumSquares, 0),
  }
}

export interface LatencySummary {
  /** NaN when nothing was measured. */
  p50: number
  p99: number
  max: number
  stddev: number
  /** Latencies counted, and the seconds from the first to the last. */
  count: number
  windowSeconds: number
}

export function summarize(s: LatencySample): LatencySummary {
  if (s.count === 0 || s.values.length === 0) return { p50: NaN, p99: NaN, max: NaN, stddev: NaN, count: 0, windowSeconds: 0 }
  const mean = s.sum / s.count
  return {
    p50: percentile(s.values, 50),
    p99: percentile(s.values, 99),
    max: s.max,
    stddev: Math.sqrt(Math.max(0, s.sumSquares / s.count - mean * mean)),
    count: s.count,
    windowSeconds: (s.lastAt - s.firstAt) / 1000,
  }
}

/** "p99 of 1,234,567 events over 10.0 s", for a table's note. */
export function describeSample(what: string, s: LatencySummary): string {
  return `${s.count.toLocaleString('en-US')} ${what} over ${s.windowSeconds.toFixed(1)} s`
}
