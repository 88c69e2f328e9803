/**
 * npm run bench:flush-stall [-- --json] [--quick] [--rounds N] [--writers W] [--write-buffer BYTES]
 *                            [--table-sync-interval MS]
 *
 * What a LevelDB memtable flush costs the writers: what a compactRange started during one adds
 * (log/level/io/range-compaction.ts), and what syncing table files as LevelDB writes them takes off
 * (log/level/io/table-writeback.ts). Each round, on a fresh LevelDB in a temp dir with LevelLog's LevelDB options
 * (leveldbWriteBufferSize, 32 MiB, unless --write-buffer says otherwise; no compression):
 * 1. W writers (default 20) keep one synced 256-byte put each in flight.
 * 2. Batches of 4 KiB values (not synced) fill the memtable until LevelDB switches to a new one, which
 *    its directory shows as a second write-ahead log: the old memtable is being flushed. The filling stops.
 * 3. At once, one of four arms, in turn:
 *      direct    db.compactRange over a range with no data (what kvlog did before): LevelDB's forced
 *                memtable switch waits, at the head of the write queue, for the flush to end
 *      between   compactRangeBetweenFlushes over the same range: waits for the flush to end first
 *      none      no compactRange: what the flush alone costs the writers
 *      synced    no compactRange, and the table files synced every --table-sync-interval ms (default 20,
 *                tableSyncInterval's) while LevelDB writes them (log/level/io/table-writeback.ts)
 * 4. The writers' slowest put that was in flight in the next second, and how many took over 20 ms.
 * Per arm: the rounds whose slowest put took over 100 ms (well above what the flush alone costs), and
 * medians over the rounds. The range holds no data, so compactRange costs only its memtable flush.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from '../log/level/classic-level.js'
import { leveldbOptions } from '../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../log/level/options.js'
import { compactRangeBetweenFlushes, flushing } from '../log/level/io/range-compaction.js'
import { TableWriteback } from '../log/level/io/table-writeback.js'
import { TABLE_SYNC_INTERVAL_OPTION, WRITE_BUFFER_OPTION } from './lib/level-options.js'
import { benchOptions, JSON_OPTION, QUICK_OPTION } from './lib/options.js'
import { endProgress, median, progress, table } from './lib/report.js'

const args = benchOptions('npm run bench:flush-stall -- [options]: put latency while LevelDB flushes a memtable', {
  json: JSON_OPTION,
  quick: QUICK_OPTION,
  rounds: { kind: 'number', default: 6, quick: 2, help: 'rounds of every arm' },
  writers: { kind: 'number', default: 20, value: 'W', help: 'concurrent writers' },
  'write-buffer': WRITE_BUFFER_OPTION,
  'table-sync-interval': TABLE_SYNC_INTERVAL_OPTION,
})
const ROUNDS = args.rounds
const WRITERS = args.writers
const WRITE_BUFFER = args['write-buffer']
const WINDOW_MS = 1000
const SLOW_MS = 20
/** A put this slow is a stall beyond what the flush alone costs. */
const STALL_MS = 100
const TABLE_SYNC_INTERVAL = args['table-sync-interval']
const ARMS = ['direct', 'between', 'none', 'synced'] as const
type Arm = (typeof ARMS)[number]

interface Round {
  arm: Arm
  maxMs: number
  over20: number
  compactRangeMs: number
}

const EMPTY_START = Buffer.from('z0')
const EMPTY_END = Buffer.from('z1')

async function round(arm: Arm): Promise<Round> {
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-flush-stall-'))
  const options = { ...DEFAULT_LEVEL_LOG_OPTIONS, leveldbWriteBufferSize: WRITE_BUFFER }
  const db = new ClassicLevel<Buffer, Buffer>(dir, { ...leveldbOptions(options), keyEncoding: 'buffer', valueEncoding: 'buffer' })
  await db.open()
  const writeback = arm === 'synced' ? TableWriteback.start(dir, TABLE_SYNC_INTERVAL) : undefined
  try {
    let stop = false
    /** [start, ms] of every put. */
    const puts: Array<[number, number]> = []
    const value = Buffer.alloc(256, 7)
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const t = performance.now()
        await db.put(Buffer.from(`w/${w}/${i % 100}`), value, { sync: true })
        puts.push([t, performance.now() - t])
      }
    }
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w))
    const filler = Buffer.alloc(4096, 1)
    for (let n = 0; !(await flushing(dir));) {
      await db.batch(
        Array.from({ length: 256 }, () => ({ type: 'put' as const, key: Buffer.from(`f/${String(n++).padStart(9, '0')}`), value: filler })),
      )
    }
    const t0 = performance.now()
    if (arm === 'direct') await db.compactRange(EMPTY_START, EMPTY_END)
    if (arm === 'between') await compactRangeBetweenFlushes(db, dir, EMPTY_START, EMPTY_END)
    const compactRangeMs = performance.now() - t0
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, t0 + WINDOW_MS - performance.now())))
    stop = true
    await Promise.all(writers)
    const window = puts.filter(([t, ms]) => t + ms >= t0 && t < t0 + WINDOW_MS).map(([, ms]) => ms)
    return { arm, maxMs: Math.max(0, ...window), over20: window.filter((ms) => ms > SLOW_MS).length, compactRangeMs }
  } finally {
    await writeback?.close()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const rounds: Round[] = []
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (const arm of ARMS) {
        progress(`round ${i + 1}/${ROUNDS}: ${arm}`)
        rounds.push(await round(arm))
      }
    }
  } finally {
    endProgress()
  }
  const of = (arm: Arm) => rounds.filter((r) => r.arm === arm)
  const summary = Object.fromEntries(
    ARMS.map((arm) => [
      arm,
      {
        roundsOver100Ms: of(arm).filter((r) => r.maxMs > STALL_MS).length,
        maxMsMedian: round3(median(of(arm).map((r) => r.maxMs))),
        over20Median: median(of(arm).map((r) => r.over20)),
        compactRangeMsMedian: round3(median(of(arm).map((r) => r.compactRangeMs))),
        maxMs: of(arm).map((r) => round3(r.maxMs)),
      },
    ]),
  ) as Record<Arm, { roundsOver100Ms: number; maxMsMedian: number; over20Median: number; compactRangeMsMedian: number; maxMs: number[] }>
  console.log(
    table([
      [
        'arm',
        `rounds with a put > ${STALL_MS} ms`,
        'slowest put ms (median)',
        `puts > ${SLOW_MS} ms (median)`,
        'compactRange ms (median)',
        'slowest put ms, each round',
      ],
      ...ARMS.map((arm) => [
        arm,
        `${summary[arm].roundsOver100Ms} of ${ROUNDS}`,
        summary[arm].maxMsMedian.toFixed(1),
        summary[arm].over20Median,
        summary[arm].compactRangeMsMedian.toFixed(0),
        summary[arm].maxMs.map((ms) => ms.toFixed(0)).join(' '),
      ]),
    ]),
  )
  console.log(
    `${ROUNDS} rounds; ${WRITERS} writers, synced 256-byte puts; the second after a flush of a ${(WRITE_BUFFER / 1048576).toFixed(0)} MiB memtable began`,
  )
  if (args.json) {
    console.log(
      JSON.stringify({
        directRoundsOver100Ms: summary.direct.roundsOver100Ms,
        betweenRoundsOver100Ms: summary.between.roundsOver100Ms,
        noneRoundsOver100Ms: summary.none.roundsOver100Ms,
        syncedRoundsOver100Ms: summary.synced.roundsOver100Ms,
        directMaxMsMedian: summary.direct.maxMsMedian,
        betweenMaxMsMedian: summary.between.maxMsMedian,
        noneMaxMsMedian: summary.none.maxMsMedian,
        syncedMaxMsMedian: summary.synced.maxMsMedian,
        arms: summary,
        rounds: ROUNDS,
        writers: WRITERS,
        leveldbWriteBufferSize: WRITE_BUFFER,
        tableSyncInterval: TABLE_SYNC_INTERVAL,
      }),
    )
  }
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000
}

await main()
