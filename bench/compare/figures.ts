/** What the comparison measures (one Figure per table row) and how big it runs (full or --quick). */
import { rounds as plannedRounds, type Runs, type Side } from './plan.js'
import type { System } from './systems.js'

export interface Figure {
  /** Stable name, the key in the JSON line. */
  name: string
  /** The medians of `runs`; NaN when a side measured nothing. */
  kvlog: number
  etcd: number
  /** Every run's figure per side, in round order (round i of kvlog ran next to round i of etcd). */
  runs: Runs<number>
  unit: string
  higherIsBetter: boolean
  /** Extra detail for the table (e.g. PASS/FAIL, p50), per system. */
  note?: string
  /** For pass/fail checks: each side's verdict. */
  pass?: { kvlog: boolean; etcd: boolean }
  /** A growth, where 0 is a measurement (a server that grew nothing), not a failed one. */
  zeroMeasures?: boolean
}

export interface Pair {
  kvlog: System
  etcd: System
}

export interface Scale {
  quick: boolean
  /** Seconds per throughput measurement. */
  seconds: number
  /** Load generator processes for a throughput run. */
  generators: number
  putClients: number[]
  rangeKeys: number
  watchers: number
  watchStreams: number
  watchRate: number
  watchSeconds: number
  resumeWatchers: number
  resumeRevisions: number
  /** The big list: objects of 1 KiB under one prefix, listed in pages of `listPage`. */
  listKeys: number
  listPage: number
  /** The big store: keys of 1 KiB, then superseding puts up to this many revisions in total. */
  bigKeys: number
  bigRevisions: number
  /** Steady write load while compacting. */
  compactRate: number
  /** --quick only: how long the check perf model runs (full runs use etcdctl's minute). */
  checkPerfModelMs: number
  /** Runs per side of every figure (each figure is the median). */
  rounds: number
  /** Closed-loop writer clients for watch fan-out at saturation. */
  saturationClients: number
  /** Fixed offered loads for server CPU per operation: puts/s, and revisions/s to `watchers` watchers. */
  cpuPutRate: number
  cpuWatchRate: number
  /** Pause before reading RSS; wait for the tail of watch deliveries at most this long. */
  settleMs: number
  graceMs: number
}

export const FULL: Scale = {
  quick: false,
  seconds: 10,
  generators: 2,
  putClients: [1, 64, 1000],
  rangeKeys: 1000,
  watchers: 1000,
  watchStreams: 50,
  watchRate: 1000,
  watchSeconds: 10,
  resumeWatchers: 100,
  resumeRevisions: 10_000,
  listKeys: 100_000,
  listPage: 500,
  bigKeys: 100_000,
  bigRevisions: 1_000_000,
  compactRate: 1000,
  checkPerfModelMs: 0,
  rounds: 3,
  saturationClients: 64,
  cpuPutRate: 2000,
  cpuWatchRate: 200,
  settleMs: 2000,
  graceMs: 10_000,
}

/** Small enough for CI (< 60 s on a busy 2-core machine): it shows that everything runs and reports. */
export const QUICK: Scale = {
  quick: true,
  seconds: 0.5,
  generators: 1,
  putClients: [1, 64, 1000],
  rangeKeys: 100,
  watchers: 20,
  watchStreams: 4,
  watchRate: 100,
  watchSeconds: 0.5,
  resumeWatchers: 10,
  resumeRevisions: 200,
  listKeys: 2000,
  listPage: 500,
  bigKeys: 200,
  bigRevisions: 1000,
  compactRate: 100,
  checkPerfModelMs: 500,
  rounds: 1,
  saturationClients: 16,
  cpuPutRate: 200,
  cpuWatchRate: 50,
  settleMs: 200,
  graceMs: 2000,
}

/** The sizes a command line may change (bench:compare's --big-keys, --big-revisions, ...). */
export type ScaleOverrides = Partial<Pick<Scale, 'bigKeys' | 'bigRevisions' | 'listKeys' | 'seconds' | 'rounds'>>

/** FULL or QUICK with the sizes given, e.g. the big store's when the machine is too slow. */
export function scaleFrom(quick: boolean, given: ScaleOverrides): Scale {
  const scale = { ...(quick ? QUICK : FULL) }
  for (const [field, v] of Object.entries(given) as Array<[keyof ScaleOverrides, number | undefined]>) if (v !== undefined) scale[field] = v
  return scale
}

/** kvlog / etcd; NaN or Infinity when a side measured nothing (a failed run, never a ratio of 1). */
export function ratio(f: Pick<Figure, 'kvlog' | 'etcd'>): number {
  return f.kvlog / f.etcd
}

export type Verdict = 'favour' | 'against' | 'level'

/**
 * Where a figure stands for kvlog, by its ratio as printed (two decimals) and its direction: 1.00 is
 * level, and a failed measurement is never in kvlog's favour.
 */
export function verdict(f: Pick<Figure, 'kvlog' | 'etcd' | 'higherIsBetter'>): Verdict {
  const r = Number(ratio(f).toFixed(2))
  if (!Number.isFinite(r)) return 'against'
  if (r === 1) return 'level'
  return r > 1 === f.higherIsBetter ? 'favour' : 'against'
}

/** fn on both systems `scale.rounds` times, each round's order the next of the shared sequence (plan.ts). */
export function rounds<T>(pair: Pair, scale: Scale, fn: (s: System) => Promise<T>): Promise<Runs<T>> {
  return plannedRounds(scale.rounds, (side) => fn(pair[side]))
}

/** fn on one system `scale.rounds` times (kvlog's native doors, set against etcd's gRPC runs). */
export async function repeat<T>(scale: Scale, fn: () => Promise<T>): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < scale.rounds; i++) out.push(await fn())
  return out
}

/** The median (the lower middle one of an even count); NaN for none. */
export function median(xs: number[]): number {
  // A round that measured nothing makes the figure a failed one, never a median of the others.
  if (xs.length === 0 || xs.some((x) => Number.isNaN(x))) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor((s.length - 1) / 2)]
}

/** [min, max]; NaN for none or when a run measured NaN. */
export function spread(xs: number[]): [number, number] {
  if (xs.length === 0 || xs.some((x) => Number.isNaN(x))) return [NaN, NaN]
  return [Math.min(...xs), Math.max(...xs)]
}

/** The ratio of each round (kvlog's run i over etcd's run i), min and max. */
export function ratioSpread(f: Pick<Figure, 'runs'>): [number, number] {
  const n = Math.min(f.runs.kvlog.length, f.runs.etcd.length)
  return spread(Array.from({ length: n }, (_, i) => ratio({ kvlog: f.runs.kvlog[i], etcd: f.runs.etcd[i] })))
}

/** A figure from each side's runs: the medians, and every run kept for the spread. */
export function fromRuns<T>(f: Omit<Figure, 'kvlog' | 'etcd' | 'runs'>, runs: Runs<T>, value: (x: T) => number): Figure {
  const values = { kvlog: runs.kvlog.map(value), etcd: runs.etcd.map(value) }
  return { ...f, kvlog: median(values.kvlog), etcd: median(values.etcd), runs: values }
}

/** The median of one side's runs of some value. */
export function medianOf<T>(runs: Runs<T>, side: Side, value: (x: T) => number): number {
  return median(runs[side].map(value))
}
