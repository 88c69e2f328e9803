/**
 * npm run bench:store [-- --json] [--seconds S] [--rounds N] [--writers W] [--write-buffer BYTES]
 *                      [--table-sync-interval MS]
 *
 * Durable put throughput and latency of the log (fsync always), 256 concurrent writers, 256-byte values,
 * against our practical ceiling: a plain classic-level loop writing the same records (log entry, kv record,
 * hist record, segment record) in the same batch sizes, with sync. Rounds alternate kvlog and raw so both
 * see the same machine noise; figures are medians over rounds. Then point gets/s on the loaded store.
 * Both use LevelLog's LevelDB options; --write-buffer sets leveldbWriteBufferSize (default 32 MiB). kvlog
 * syncs LevelDB's table files as they are written (tableSyncInterval, log/level/io/table-writeback.ts; 0 = off);
 * the raw loop does not.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from '../log/level/classic-level.js'
import { histKey, kvKey, logKey, metaKey } from '../log/level/keyspace.js'
import { leveldbOptions, openLevelLog } from '../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../log/level/options.js'
import { writeBatch } from '../log/level/segments.js'
import { encodeEntry, encodeKvRecord, HIST_IN_LOG_RECORD } from '../log/level/records.js'
import { OP_PUT } from '../log/ops.js'
import { TABLE_SYNC_INTERVAL_OPTION, WRITE_BUFFER_OPTION } from './lib/level-options.js'
import { benchOptions, JSON_OPTION, QUICK_OPTION } from './lib/options.js'
import { endProgress, median, percentile, progress, table } from './lib/report.js'

const args = benchOptions('npm run bench:store -- [options]: durable put throughput of the log against a raw LevelDB loop', {
  json: JSON_OPTION,
  quick: QUICK_OPTION,
  seconds: { kind: 'number', default: 4, quick: 1, value: 'S', help: 'seconds of puts per round and system' },
  rounds: { kind: 'number', default: 3, quick: 1, help: 'rounds, kvlog and raw alternating' },
  writers: { kind: 'number', default: 256, value: 'W', help: 'concurrent writers' },
  'write-buffer': WRITE_BUFFER_OPTION,
  'table-sync-interval': TABLE_SYNC_INTERVAL_OPTION,
})
const { seconds, rounds, writers } = args
const leveldb = { ...DEFAULT_LEVEL_LOG_OPTIONS, leveldbWriteBufferSize: args['write-buffer'] }
const tableSyncInterval = args['table-sync-interval']
const VALUE_BYTES = 256
const KEYSPACE = 100_000

const value = Buffer.alloc(VALUE_BYTES, 'v')
const keyOf = (i: number) => Buffer.from(`/registry/bench/key-${(i % KEYSPACE).toString().padStart(6, '0')}`)

interface PutRound {
  putsPerSec: number
  p50: number
  p99: number
  meanBatch: number
  getsPerSec?: number
}

async function kvlogRound(dir: string, withGets: boolean): Promise<PutRound> {
  const log = await openLevelLog({ dir, fsync: 'always', leveldbWriteBufferSize: args['write-buffer'], tableSyncInterval })
  const latencies: number[] = []
  let next = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  const before = log.writerStats
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now()
        await log.put(keyOf(next++), value)
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  const after = log.writerStats
  const batches = after.batches - before.batches
  const round: PutRound = {
    putsPerSec: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    meanBatch: batches > 0 ? (after.batchedTxns - before.batchedTxns) / batches : 0,
  }
  if (withGets) round.getsPerSec = await getRound(log, Math.min(next, KEYSPACE))
  await log.close()
  return round
}

async function getRound(log: Awaited<ReturnType<typeof openLevelLog>>, keys: number): Promise<number> {
  let done = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < deadline) {
        await log.get(keyOf(Math.floor(Math.random() * keys)))
        done++
      }
    }),
  )
  return done / ((performance.now() - started) / 1000)
}

/** The same records kvlog writes for `batch` single-put transactions, as a plain LevelDB batch. */
function rawBatch(firstRev: number, batch: number, keyBase: number) {
  const ops: Array<{ type: 'put'; key: Buffer; value: Buffer }> = []
  const timestamp = Date.now()
  for (let i = 0; i < batch; i++) {
    const rev = firstRev + i
    const key = keyOf(keyBase + i)
    const op = { kind: OP_PUT as 0, key, value, createRevision: rev, version: 1, lease: 0n, prevRevision: 0 }
    ops.push({ type: 'put', key: logKey(rev), value: encodeEntry({ timestamp, ops: [op] }) })
    ops.push({ type: 'put', key: kvKey(key), value: encodeKvRecord({ ...op, modRevision: rev }) })
    ops.push({ type: 'put', key: histKey(key, rev), value: HIST_IN_LOG_RECORD })
  }
  ops.push({ type: 'put', key: metaKey('seg/000000000001'), value: Buffer.alloc(64) })
  return ops
}

async function rawRound(dir: string, batch: number): Promise<number> {
  const db = new ClassicLevel<Buffer, Buffer>(dir, {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    ...leveldbOptions(leveldb),
  })
  await db.open()
  let rev = 2
  let puts = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  while (performance.now() < deadline) {
    await writeBatch(db, rawBatch(rev, batch, rev), true)
    rev += batch
    puts += batch
  }
  const elapsed = (performance.now() - started) / 1000
  await db.close()
  return puts / elapsed
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'kvlog-bench-store-'))
  const kv: PutRound[] = []
  const raw: number[] = []
  try {
    for (let r = 0; r < rounds; r++) {
      progress(`round ${r + 1}/${rounds}: kvlog puts (${writers} writers, ${seconds}s)`)
      const k = await kvlogRound(join(root, `kvlog-${r}`), r === rounds - 1)
      kv.push(k)
      progress(`round ${r + 1}/${rounds}: raw classic-level batches of ${Math.round(k.meanBatch)}`)
      raw.push(await rawRound(join(root, `raw-${r}`), Math.max(1, Math.round(k.meanBatch))))
    }
  } finally {
    endProgress()
    await rm(root, { recursive: true, force: true })
  }
  const result = {
    putsPerSec: Math.round(median(kv.map((k) => k.putsPerSec))),
    rawLevelPutsPerSec: Math.round(median(raw)),
    ratio: 0,
    putP50Ms: Number(median(kv.map((k) => k.p50)).toFixed(3)),
    putP99Ms: Number(median(kv.map((k) => k.p99)).toFixed(3)),
    meanBatchTxns: Number(median(kv.map((k) => k.meanBatch)).toFixed(1)),
    getsPerSec: Math.round(kv[kv.length - 1].getsPerSec ?? 0),
    leveldbWriteBufferSize: args['write-buffer'],
    tableSyncInterval,
    writers,
    valueBytes: VALUE_BYTES,
    seconds,
    rounds,
    fsync: 'always',
  }
  result.ratio = Number((result.putsPerSec / result.rawLevelPutsPerSec).toFixed(3))
  console.log(
    table([
      ['metric', 'value'],
      ['durable puts/s (kvlog, median)', result.putsPerSec],
      ['raw classic-level puts/s (same records, same batches)', result.rawLevelPutsPerSec],
      ['ratio kvlog / raw', result.ratio.toFixed(2)],
      ['put p50 ms', result.putP50Ms],
      ['put p99 ms', result.putP99Ms],
      ['mean txns per batch', result.meanBatchTxns],
      ['point gets/s (64 concurrent)', result.getsPerSec],
    ]),
  )
  console.log(`per round: kvlog ${kv.map((k) => Math.round(k.putsPerSec)).join(', ')}; raw ${raw.map(Math.round).join(', ')}`)
  if (args.json) console.log(JSON.stringify(result))
}

await main()
