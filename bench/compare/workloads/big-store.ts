/**
 * Workloads 6–8 on one big store per system (each on a fresh data dir, one system at a time):
 *
 * 7. Memory: `bigKeys` keys of 1 KiB (default 100,000) written by 256 clients; the server's RSS after 2 s.
 * 8. Restart: then superseding puts (256-byte values over the same keys) up to `bigRevisions` revisions
 *    in total (default 1,000,000); SIGTERM; ms from spawn until a gRPC Range answers.
 * 6. Compaction: Compact(head, physical=true) with 100 writers paced to `compactRate` puts/s on other keys
 *    meanwhile: time until Compact returns, those writes' p99 (from their scheduled times), and disk bytes
 *    after (systems.ts says what is counted), then after Defragment too. Both include the revisions the
 *    writers added while the compaction ran (a slower compaction keeps more of them). Then, to show the
 *    footprint of the live data alone: Compact to the head again and Defragment (no writers).
 */
import type { Message } from '../../../apiserver/etcd/proto.js'
import { fromRuns, type Figure, type Scale } from '../figures.js'
import { runLoad } from '../generators.js'
import { call, connect, put } from '../grpc.js'
import type { Runs } from '../plan.js'
import type { System } from '../systems.js'

export interface BigStoreResult {
  rssBytes: number
  restartMs: number
  compactionMs: number
  compactionWriteP99: number
  diskBeforeCompact: number
  diskAfterCompact: number
  /** The write-ahead log's bytes at the same moment (System.walBytes: in diskAfterCompact for kvlog, not for etcd). */
  walAfterCompact: number
  diskAfterDefrag: number
  diskLiveOnly: number
}

const MB = 1e6

export async function bigStore(system: System, scale: Scale, note: (text: string) => void): Promise<BigStoreResult> {
  const load = (count: number, keyStart: number, valueBytes: number) =>
    runLoad(
      {
        cmd: 'puts',
        target: system.grpc,
        clients: 256,
        connections: 8,
        durationMs: 3_600_000,
        count,
        keyStart,
        keyPrefix: '/bench/big/',
        keys: scale.bigKeys,
        valueBytes,
      },
      scale.generators,
    )
  note(`${system.name}: ${scale.bigKeys} keys of 1 KiB`)
  await load(scale.bigKeys, 0, 1024)
  await new Promise((r) => setTimeout(r, scale.settleMs))
  const rssBytes = await system.rss()

  note(`${system.name}: superseding puts up to ${scale.bigRevisions} revisions`)
  await load(scale.bigRevisions - scale.bigKeys, 0, 256)
  note(`${system.name}: restart`)
  const restartMs = await system.restart()

  const client = connect(system.grpc)
  try {
    const head = await put(client, '/bench/marker', Buffer.from('x'))
    const diskBeforeCompact = await system.diskBytes()
    note(`${system.name}: compaction of ${head - 1} revisions`)
    let compacted!: () => void
    const done = new Promise<void>((resolve) => (compacted = resolve))
    const writes = runLoad(
      {
        cmd: 'puts',
        target: system.grpc,
        clients: 100,
        connections: 4,
        durationMs: 3_600_000,
        rate: scale.compactRate,
        keyPrefix: '/bench/steady/',
        keys: 1000,
        valueBytes: 256,
      },
      1,
      done,
    )
    await new Promise((r) => setTimeout(r, 500))
    const t0 = performance.now()
    await call(client.kv.Compact.bind(client.kv), { revision: head, physical: true } as Message)
    const compactionMs = performance.now() - t0
    compacted()
    const steady = await writes
    const diskAfterCompact = await system.diskBytes()
    const walAfterCompact = await system.walBytes()
    await call(client.maintenance.Defragment.bind(client.maintenance), {})
    const diskAfterDefrag = await system.diskBytes()
    note(`${system.name}: compaction to the head, then Defragment`)
    const last = await put(client, '/bench/marker', Buffer.from('y'))
    await call(client.kv.Compact.bind(client.kv), { revision: last, physical: true } as Message)
    await call(client.maintenance.Defragment.bind(client.maintenance), {})
    const diskLiveOnly = await system.diskBytes()
    return {
      rssBytes,
      restartMs,
      compactionMs,
      compactionWriteP99: steady.p99,
      diskBeforeCompact,
      diskAfterCompact,
      walAfterCompact,
      diskAfterDefrag,
      diskLiveOnly,
    }
  } finally {
    client.close()
  }
}

export function bigStoreFigures(r: Runs<BigStoreResult>, scale: Scale): Figure[] {
  const mb = (x: number) => x / MB
  const first = { kvlog: r.kvlog[0], etcd: r.etcd[0] }
  const f = (base: Omit<Figure, 'kvlog' | 'etcd' | 'runs'>, value: (x: BigStoreResult) => number) => fromRuns(base, r, value)
  return [
    f(
      {
        name: `memory-rss-${scale.bigKeys}-keys-1KiB-mb`,
        unit: 'MB',
        higherIsBetter: false,
      },
      (x) => mb(x.rssBytes),
    ),
    f(
      {
        name: `restart-${scale.bigKeys}-keys-${scale.bigRevisions}-revisions-ms`,
        unit: 'ms',
        higherIsBetter: false,
      },
      (x) => x.restartMs,
    ),
    f(
      {
        name: `compaction-${scale.bigRevisions}-revisions-ms`,
        unit: 'ms',
        higherIsBetter: false,
      },
      (x) => x.compactionMs,
    ),
    f(
      {
        name: 'compaction-write-p99-ms',
        unit: 'ms',
        higherIsBetter: false,
        note: `${scale.compactRate} puts/s while compacting`,
      },
      (x) => x.compactionWriteP99,
    ),
    f(
      {
        name: 'disk-after-compact-mb',
        unit: 'MB',
        higherIsBetter: false,
        note: `before ${mb(first.kvlog.diskBeforeCompact).toFixed(0)} / ${mb(first.etcd.diskBeforeCompact).toFixed(0)} MB`,
      },
      (x) => mb(x.diskAfterCompact),
    ),
    f(
      {
        name: 'disk-after-compact-defrag-mb',
        unit: 'MB',
        higherIsBetter: false,
      },
      (x) => mb(x.diskAfterDefrag),
    ),
    fromRuns(
      {
        name: 'disk-kvlog-compact-vs-etcd-compact-defrag-mb',
        unit: 'MB',
        higherIsBetter: false,
        note: `kvlog without defrag vs etcd with; write-ahead logs after compact: ${mb(first.kvlog.walAfterCompact).toFixed(1)} MB (counted) / ${mb(first.etcd.walAfterCompact).toFixed(0)} MB (not counted)`,
      },
      { kvlog: r.kvlog.map((x) => mb(x.diskAfterCompact)), etcd: r.etcd.map((x) => mb(x.diskAfterDefrag)) },
      (x) => x,
    ),
    f(
      {
        name: 'disk-live-data-mb',
        unit: 'MB',
        higherIsBetter: false,
        note: 'after a second compaction to the head + defrag: no history',
      },
      (x) => mb(x.diskLiveOnly),
    ),
  ]
}
