/** What the comparison measures (one Figure per table row) and how big it runs (full or --quick). */
import type { System } from './systems.js'

export interface Figure {
  /** Stable name, the key in the JSON line. */
  name: string
  kvlog: number
  etcd: number
  unit: string
  higherIsBetter: boolean
  /** Extra detail for the table (e.g. PASS/FAIL, p50), per system. */
  note?: string
  /** For pass/fail checks: each side's verdict. */
  pass?: { kvlog: boolean; etcd: boolean }
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
  /** The big store: keys of 1 KiB, then superseding puts up to this many revisions in total. */
  bigKeys: number
  bigRevisions: number
  /** Steady write load while compacting. */
  compactRate: number
  /** --quick only: how long the check perf model runs (full runs use etcdctl's minute). */
  checkPerfModelMs: number
  /** Runs per side for the figures quoted as medians (CPU per operation, watch at saturation). */
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

/** FULL with the big store's sizes from flags (--big-keys, --big-revisions) when the machine is too slow. */
export function scaleFrom(quick: boolean, flags: Map<string, string>): Scale {
  const scale = { ...(quick ? QUICK : FULL) }
  for (const [flag, field] of [
    ['big-keys', 'bigKeys'],
    ['big-revisions', 'bigRevisions'],
    ['seconds', 'seconds'],
    ['rounds', 'rounds'],
  ] as const) {
    const v = flags.get(flag)
    if (v === undefined) continue
    const n = Number(v)
    if (!(n > 0)) throw new Error(`--${flag} must be a positive number, got ${v}`)
    scale[field] = n
  }
  return scale
}

export function ratio(f: Pick<Figure, 'kvlog' | 'etcd'>): number {
  return f.etcd === 0 ? (f.kvlog === 0 ? 1 : Infinity) : f.kvlog / f.etcd
}

export function isBetter(f: Figure): boolean {
  const r = ratio(f)
  return f.higherIsBetter ? r >= 1 : r <= 1
}

/** Runs fn against kvlog and etcd, alternating which goes first (the machine drifts). */
export async function bothSides<T>(pair: Pair, first: 'kvlog' | 'etcd', fn: (s: System) => Promise<T>): Promise<{ kvlog: T; etcd: T }> {
  const second = first === 'kvlog' ? 'etcd' : 'kvlog'
  const a = await fn(pair[first])
  const b = await fn(pair[second])
  return first === 'kvlog' ? { kvlog: a, etcd: b } : { kvlog: b, etcd: a }
}

/** fn on both systems `scale.rounds` times, alternating which goes first; every run's result per side. */
export async function rounds<T>(pair: Pair, scale: Scale, fn: (s: System) => Promise<T>): Promise<{ kvlog: T[]; etcd: T[] }> {
  const out = { kvlog: [] as T[], etcd: [] as T[] }
  for (let round = 0; round < scale.rounds; round++) {
    const r = await bothSides(pair, round % 2 === 0 ? 'kvlog' : 'etcd', fn)
    out.kvlog.push(r.kvlog)
    out.etcd.push(r.etcd)
  }
  return out
}

/** The median (the lower middle one of an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor((s.length - 1) / 2)]
}
