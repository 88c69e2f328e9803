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
import type { Figure, Scale } from '../figures.js'
import { runLoad } from '../generators.js'
import { call, connect, put } from '../grpc.js'
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

export function bigStoreFigures(r: { kvlog: BigStoreResult; etcd: BigStoreResult }, scale: Scale): Figure[] {
  const mb = (x: number) => x / MB
  return [
    {
      name: `memory-rss-${scale.bigKeys}-keys-1KiB-mb`,
      kvlog: mb(r.kvlog.rssBytes),
      etcd: mb(r.etcd.rssBytes),
      unit: 'MB',
      higherIsBetter: false,
    },
    {
      name: `restart-${scale.bigKeys}-keys-${scale.bigRevisions}-revisions-ms`,
      kvlog: r.kvlog.restartMs,
      etcd: r.etcd.restartMs,
      unit: 'ms',
      higherIsBetter: false,
    },
    {
      name: `compaction-${scale.bigRevisions}-revisions-ms`,
      kvlog: r.kvlog.compactionMs,
      etcd: r.etcd.compactionMs,
      unit: 'ms',
      higherIsBetter: false,
    },
    {
      name: 'compaction-write-p99-ms',
      kvlog: r.kvlog.compactionWriteP99,
      etcd: r.etcd.compactionWriteP99,
      unit: 'ms',
      higherIsBetter: false,
      note: `${scale.compactRate} puts/s while compacting`,
    },
    {
      name: 'disk-after-compact-mb',
      kvlog: mb(r.kvlog.diskAfterCompact),
      etcd: mb(r.etcd.diskAfterCompact),
      unit: 'MB',
      higherIsBetter: false,
      note: `before ${mb(r.kvlog.diskBeforeCompact).toFixed(0)} / ${mb(r.etcd.diskBeforeCompact).toFixed(0)} MB`,
    },
    {
      name: 'disk-after-compact-defrag-mb',
      kvlog: mb(r.kvlog.diskAfterDefrag),
      etcd: mb(r.etcd.diskAfterDefrag),
      unit: 'MB',
      higherIsBetter: false,
    },
    {
      name: 'disk-kvlog-compact-vs-etcd-compact-defrag-mb',
      kvlog: mb(r.kvlog.diskAfterCompact),
      etcd: mb(r.etcd.diskAfterDefrag),
      unit: 'MB',
      higherIsBetter: false,
      note: `kvlog without defrag vs etcd with; write-ahead logs after compact: ${mb(r.kvlog.walAfterCompact).toFixed(1)} MB (counted) / ${mb(r.etcd.walAfterCompact).toFixed(0)} MB (not counted)`,
    },
    {
      name: 'disk-live-data-mb',
      kvlog: mb(r.kvlog.diskLiveOnly),
      etcd: mb(r.etcd.diskLiveOnly),
      unit: 'MB',
      higherIsBetter: false,
      note: 'after a second compaction to the head + defrag: no history',
    },
  ]
}
