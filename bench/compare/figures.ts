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
}

export const FULL: Scale = {
  quick: false, seconds: 10, generators: 2, putClients: [1, 64, 1000], rangeKeys: 1000,
  watchers: 1000, watchStreams: 50, watchRate: 1000, watchSeconds: 10,
  resumeWatchers: 100, resumeRevisions: 10_000,
  bigKeys: 100_000, bigRevisions: 1_000_000, compactRate: 1000,
}

export const QUICK: Scale = {
  quick: true, seconds: 1, generators: 2, putClients: [1, 64, 1000], rangeKeys: 1000,
  watchers: 100, watchStreams: 10, watchRate: 200, watchSeconds: 1.5,
  resumeWatchers: 10, resumeRevisions: 1000,
  bigKeys: 2000, bigRevisions: 10_000, compactRate: 200,
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
