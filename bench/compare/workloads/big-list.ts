/**
 * Workload 10: the list kube-apiserver makes of a resource after a restart, over `listKeys` objects of
 * 1 KiB (100,000 in a full run) under one prefix: paged as kube-apiserver pages (pages of `listPage` kvs,
 * each from the key after the previous page's last, the later pages at the first page's revision), one list
 * at a time through the same client code for both systems (load-worker.ts's `list`; responses read as
 * bytes, not decoded whole). Figures: the whole list's time, and how far the server's RSS rose above what
 * it was just before (peak-rss.ts: sampled VmRSS and VmHWM).
 */
import { fromRuns, rounds, type Figure, type Pair, type Scale } from '../figures.js'
import { runList, runLoad } from '../generators.js'
import { peakRssDuring } from '../peak-rss.js'
import { rounds as plannedRounds } from '../plan.js'
import type { System } from '../systems.js'

const PREFIX = '/bench/list/'
const MB = 1e6

export interface BigListRun {
  ms: number
  keys: number
  rssBefore: number
  rssGrowth: number
  /** The growth of its anonymous memory alone (peak-rss.ts). */
  anonGrowth: number
}

/** Writes `keys` objects of 1 KiB under the list's prefix. */
export async function loadBigList(system: System, keys: number, generators: number): Promise<void> {
  const command = { cmd: 'puts', target: system.grpc, clients: 256, connections: 8, durationMs: 3_600_000 } as const
  await runLoad({ ...command, count: keys, keyPrefix: PREFIX, keys, valueBytes: 1024 }, generators)
}

/** One paged list of `prefix`, with the server's RSS growth during it; fails unless it saw `keys` keys. */
export async function measureBigList(system: System, keys: number, page: number, settleMs: number, prefix = PREFIX): Promise<BigListRun> {
  await new Promise((r) => setTimeout(r, settleMs))
  const { result, before, peak, anonBefore, anonPeak } = await peakRssDuring(system.pid(), () =>
    runList({ cmd: 'list', target: system.grpc, prefix, page }),
  )
  if (result.keys !== keys) throw new Error(`${system.name}: the list returned ${result.keys} of ${keys} keys`)
  return { ms: result.ms, keys: result.keys, rssBefore: before, rssGrowth: peak - before, anonGrowth: anonPeak - anonBefore }
}

export async function bigList(pair: Pair, scale: Scale): Promise<Figure[]> {
  await plannedRounds(1, (side) => loadBigList(pair[side], scale.listKeys, scale.generators))
  const runs = await rounds(pair, scale, (s) => measureBigList(s, scale.listKeys, scale.listPage, scale.settleMs))
  const note = `pages of ${scale.listPage} at one revision; RSS before ${(runs.kvlog[0].rssBefore / MB).toFixed(0)} / ${(runs.etcd[0].rssBefore / MB).toFixed(0)} MB`
  return [
    fromRuns({ name: `list-${scale.listKeys}-objects-1KiB-ms`, unit: 'ms', higherIsBetter: false, note }, runs, (r) => r.ms),
    fromRuns(
      {
        name: `list-${scale.listKeys}-objects-rss-growth-mb`,
        unit: 'MB',
        higherIsBetter: false,
        zeroMeasures: true,
        note: `anonymous memory alone: ${(runs.kvlog[0].anonGrowth / MB).toFixed(1)} / ${(runs.etcd[0].anonGrowth / MB).toFixed(1)} MB`,
      },
      runs,
      (r) => r.rssGrowth / MB,
    ),
  ]
}
