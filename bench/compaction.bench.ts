/**
 * npm run bench:compaction [-- --json] [--quick] [--revisions N] [--writers W] [--rate PUTS_PER_S] [--seconds S] [--warmup S]
 *                                [--batch REVISIONS] [--min-batch REVISIONS] [--duty PERCENT] [--batches-per-read N]
 *                                [--write-buffer BYTES] [--max-file-size BYTES]
 *                                [--method drop|scan] [--compacts-range false] [--defer-file-deletes false] [--compaction-thread false]
 *                                [--compaction-thread-nice N]
 *                                [--table-sync-interval MS]
 *                                [--v8-pretenuring true]
 *                                [--during compaction|deletes|idle] [--deletes-rate REVISIONS_PER_S] [--idle-seconds S]
 *                                [--trace FILE]
 *
 * What a large compaction costs the writers, on a LevelLog in a temp dir (fsync always, the default
 * compactionBatchRevisions, compactionMinBatchRevisions, compactionMaxDutyPercent, compactionBatchesPerRead,
 * leveldbWriteBufferSize and leveldbMaxFileSize unless --batch / --min-batch / --duty / --batches-per-read /
 * --write-buffer / --max-file-size say otherwise; --batch alone sets both batch sizes, for a fixed one):
 * 1. Load: N superseded revisions (default 1,000,000; --quick 50,000): puts over 1,000 keys, 256-byte
 *    values, 2,048 in flight (group commit). Then dbBytesBefore = status().dbSize (this includes LevelDB's
 *    write-ahead log, up to its write buffer: leveldbWriteBufferSize, 32 MiB by default).
 * 2. Baseline: a steady load of W writers (default 200) paced to R puts/s in total (default 2,000: each
 *    writer one put every W/R s, at staggered offsets), measured for S seconds (default 15) after a warm-up
 *    of --warmup seconds (default 3): right after the load phase LevelDB is still writing out and compacting
 *    what it loaded, and the first seconds of puts are slow for that (their p99 several times that of
 *    the seconds after). Latency is measured from each put's scheduled time to its durable acknowledgement, so
 *    a stall counts for every put it delays (no coordinated omission); from when it was issued if a timer
 *    fired before the scheduled time (bench/lib/pacing.ts). The load keeps its own garbage out of V8's old
 *    generation (one timer at a time, samples in typed arrays: bench/lib/paced-load.ts).
 * 3. The same load continues; after 0.5 s, compact(current - 1000), by compactionMethod (drop unless --method
 *    scan; log/level/compaction/drop-job.ts, compact-scan.ts). Latencies of puts scheduled while
 *    compact() runs are the "during compaction" figures. compact() ends with a LevelDB compaction of the
 *    removed log range (compactionCompactsRange, the default), and that is measured too; not with
 *    --compacts-range false. LevelDB's file deletes are deferred off its lock (deferFileDeletes, the
 *    default; log/level/io/deferred-deletes.ts), not with --defer-file-deletes false. The scan runs in the
 *    compaction thread (compactionThread, the default; log/level/compaction/compact-thread.ts), on the main thread with
 *    --compaction-thread false; that thread runs at nice 19 (compactionThreadNice), at N with
 *    --compaction-thread-nice N. LevelDB's table files are synced every 20 ms while it writes them
 *    (tableSyncInterval, log/level/io/table-writeback.ts); --table-sync-interval 0 leaves that to LevelDB.
 * 4. The load stops; reclaimSpace(); dbBytesAfter. It holds the revisions from the target on: the 1,000
 *    kept plus everything the load wrote while compact() ran (retainedRevisions).
 * The process turns V8's allocation-site pretenuring off as `kvlog serve` does (v8AllocationSitePretenuring,
 * apiserver/v8-settings.ts); the load phase would otherwise teach V8 to allocate each put's objects in the
 * old generation for the rest of the run. --v8-pretenuring true leaves it on (false: off, the default).
 * --during says what runs in step 3 instead of compact(), to tell apart what the writers pay for:
 * - `compaction` (the default): compact() as above.
 * - `deletes`: the compaction's LevelDB deletions alone (bench/lib/recorded-deletes.ts: read before the
 *   baseline, so no scan, no reads and no compaction thread while the writers are timed), through the
 *   writer's queue in batches of --min-batch revisions, paced to --deletes-rate revisions/s (default
 *   20,000, about what compact() does at this load), then the same closing compactRange unless
 *   --compacts-range false.
 * - `idle`: nothing, for --idle-seconds (default 50, about as long as compact() takes here): the same
 *   load over a window as long as a compaction, against the shorter baseline.
 * --trace FILE writes what it takes to find where slow puts come from, as JSON: every put's scheduled time
 * and latency, LevelDB's level-0 file count every 10 ms (a gap between samples is the event loop blocked),
 * event-loop delay per phase, GC pauses, LevelDB batch writes (ms, ops), calls into LevelDB that block the
 * main thread > 2 ms (snapshot, iterator, getProperty: LevelDB's lock), and leveldb.stats.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { applyV8Settings } from '../apiserver/v8-settings.js'
import { DEFAULT_CONFIG } from '../config/index.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../log/level/options.js'
import { LOG_START, logKey } from '../log/level/keyspace.js'
import type { Db } from '../log/level/latest-view.js'
import { openLevelLog, type LevelLog } from '../log/level/level-log.js'
import { compactRangeBetweenFlushes } from '../log/level/io/range-compaction.js'
import type { CompactResult } from '../log/types.js'
import type { Writer } from '../log/level/writer.js'
import { pacedLoad, type LatencySamples, type PacedLoad } from './lib/paced-load.js'
import { RecordedDeletes, replayDeletes } from './lib/recorded-deletes.js'
import { TABLE_SYNC_INTERVAL_OPTION, WRITE_BUFFER_OPTION } from './lib/level-options.js'
import { benchOptions, JSON_OPTION, QUICK_OPTION } from './lib/options.js'
import { endProgress, percentile, progress, table } from './lib/report.js'

const L = DEFAULT_LEVEL_LOG_OPTIONS
const args = benchOptions("npm run bench:compaction -- [options]: what a large compaction costs the writers (see the file's header)", {
  json: JSON_OPTION,
  quick: QUICK_OPTION,
  revisions: { kind: 'number', default: 1_000_000, quick: 50_000, help: 'superseded revisions loaded before the compaction' },
  writers: { kind: 'number', default: 200, value: 'W', help: 'paced writers during the measurement' },
  rate: { kind: 'number', default: 2000, value: 'PUTS_PER_S', help: "the writers' puts a second in total" },
  seconds: { kind: 'number', default: 15, quick: 2, value: 'S', help: 'seconds of the baseline' },
  warmup: { kind: 'number', default: 3, quick: 0.5, value: 'S', help: 'seconds of unmeasured puts before the baseline' },
  batch: {
    kind: 'number',
    shown: String(L.compactionBatchRevisions),
    value: 'REVISIONS',
    help: 'compactionBatchRevisions; alone, sets --min-batch too',
  },
  'min-batch': { kind: 'number', shown: String(L.compactionMinBatchRevisions), value: 'REVISIONS', help: 'compactionMinBatchRevisions' },
  duty: { kind: 'number', default: L.compactionMaxDutyPercent, value: 'PERCENT', help: 'compactionMaxDutyPercent' },
  'batches-per-read': { kind: 'number', default: L.compactionBatchesPerRead, help: 'compactionBatchesPerRead' },
  'write-buffer': WRITE_BUFFER_OPTION,
  'max-file-size': { kind: 'number', default: L.leveldbMaxFileSize, value: 'BYTES', help: 'leveldbMaxFileSize' },
  method: { kind: 'string', default: L.compactionMethod, choices: ['drop', 'scan'], help: 'compactionMethod' },
  'compacts-range': { kind: 'bool', default: true, help: 'compactionCompactsRange: LevelDB compacts the removed log range at the end' },
  'defer-file-deletes': { kind: 'bool', default: true, help: "deferFileDeletes: LevelDB's file deletes off its lock" },
  'compaction-thread': { kind: 'bool', default: true, help: 'compactionThread: the scan on a thread of its own' },
  'compaction-thread-nice': { kind: 'number', default: L.compactionThreadNice, help: 'compactionThreadNice' },
  'table-sync-interval': TABLE_SYNC_INTERVAL_OPTION,
  'v8-pretenuring': {
    kind: 'bool',
    default: DEFAULT_CONFIG.v8AllocationSitePretenuring,
    help: "V8's allocation-site pretenuring (v8AllocationSitePretenuring)",
  },
  during: {
    kind: 'string',
    default: 'compaction',
    choices: ['compaction', 'deletes', 'idle'],
    help: 'what runs after the baseline: compact(), its LevelDB deletes alone, or nothing',
  },
  'deletes-rate': { kind: 'number', default: 20_000, value: 'REVISIONS_PER_S', help: 'with --during deletes: revisions deleted a second' },
  'idle-seconds': { kind: 'number', default: 50, value: 'S', help: 'with --during idle: seconds of load alone' },
  trace: { kind: 'string', value: 'FILE', help: "write every put's latency, level-0 files, GC pauses and LevelDB calls to FILE as JSON" },
})
const REVISIONS = args.revisions
const WRITERS = args.writers
const RATE = args.rate
const SECONDS = args.seconds
const WARMUP = args.warmup
const KEYS = 1000
const VALUE_BYTES = 256
const LOAD_IN_FLIGHT = 2048
const KEEP = 1000
const METHOD = args.method === 'scan' ? 'scan' : 'drop'
const COMPACTS_RANGE = args['compacts-range']
const COMPACTION_THREAD = args['compaction-thread']
const COMPACTION_THREAD_NICE = args['compaction-thread-nice']
const DEFER_FILE_DELETES = args['defer-file-deletes']
const TABLE_SYNC_INTERVAL = args['table-sync-interval']
const BATCH = args.batch ?? L.compactionBatchRevisions
const MIN_BATCH = args['min-batch'] ?? args.batch ?? L.compactionMinBatchRevisions
const DUTY = args.duty
const BATCHES_PER_READ = args['batches-per-read']
const WRITE_BUFFER = args['write-buffer']
const MAX_FILE_SIZE = args['max-file-size']
const TRACE_FILE = args.trace
const DURING = args.during
const DELETES_RATE = args['deletes-rate']
const IDLE_SECONDS = args['idle-seconds']
const V8_PRETENURING = args['v8-pretenuring']

const value = Buffer.alloc(VALUE_BYTES, 'v')
const keyOf = (i: number) => `/registry/bench/compaction/key-${(i % KEYS).toString().padStart(4, '0')}`
const MiB = 1024 * 1024

async function load(log: LevelLog): Promise<number> {
  const started = performance.now()
  const target = log.revision + REVISIONS
  let next = 0
  let lastNote = 0
  await Promise.all(
    Array.from({ length: LOAD_IN_FLIGHT }, async () => {
      while (next < REVISIONS) {
        await log.put(keyOf(next++), value)
        const now = performance.now()
        if (now - lastNote > 250) {
          lastNote = now
          progress(`load: ${(log.revision - 1).toLocaleString('en-US')} / ${REVISIONS.toLocaleString('en-US')} revisions`)
        }
      }
    }),
  )
  if (log.revision < target) throw new Error(`load ended at ${log.revision}, wanted ${target}`)
  return (performance.now() - started) / 1000
}

/** W writers taking turns, one put every 1/RATE s in all, until stop() resolves (bench/lib/paced-load.ts). */
function steadyLoad(log: LevelLog): PacedLoad {
  return pacedLoad(WRITERS, RATE, (i) => log.put(keyOf(i * 7919), value))
}

function stats(
  samples: LatencySamples,
  from: number,
  to: number,
): { n: number; p50: number; p99: number; p999: number; max: number; putsPerSec: number } {
  const ms = samples.between(from, to)
  return {
    n: ms.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    p999: percentile(ms, 99.9),
    max: ms.reduce((m, x) => Math.max(m, x), 0),
    putsPerSec: ms.length / ((to - from) / 1000),
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const round3 = (x: number) => Number(x.toFixed(3))

type Leveldb = Record<string, unknown> & { getProperty(name: string): string }

/** The log's database and writer queue, which --during deletes and --trace reach past LevelLog's API for. */
const internals = (log: LevelLog) => log as unknown as { db: Db & Leveldb; writer: Writer }

/** --during deletes: the recorded deletions through the writer's queue, then the closing compactRange. */
async function replayed(log: LevelLog, dir: string, deletes: RecordedDeletes, target: number): Promise<CompactResult> {
  const started = performance.now()
  const { db, writer } = internals(log)
  const versions = await replayDeletes(deletes, (build) => writer.submitRaw(build), {
    revisionsPerBatch: MIN_BATCH,
    revisionsPerSec: DELETES_RATE,
  })
  if (COMPACTS_RANGE) await compactRangeBetweenFlushes(db, dir, LOG_START, logKey(target))
  return { compactRevision: target, removedRevisions: versions, removedVersions: versions, durationMs: performance.now() - started }
}

/** Step 3: what runs while the "during" figures are measured (--during). */
async function duringWork(log: LevelLog, dir: string, deletes: RecordedDeletes | undefined, target: number): Promise<CompactResult> {
  if (deletes !== undefined) return replayed(log, dir, deletes, target)
  if (DURING === 'idle') {
    await sleep(IDLE_SECONDS * 1000)
    return { compactRevision: 0, removedRevisions: 0, removedVersions: 0, durationMs: IDLE_SECONDS * 1000 }
  }
  return log.compact(target)
}

/**
 * --trace: level-0 files every 10 ms, GC pauses, and LevelDB calls timed (those that run on the main
 * thread and take LevelDB's lock, and batch writes); written with the samples by save(). Off unless
 * --trace: getProperty takes LevelDB's lock itself.
 */
class Trace {
  private readonly l0: Array<[number, number]> = []
  private readonly calls: Array<{ k: string; t: number; ms: number; n?: number }> = []
  private readonly gcs: Array<{ t: number; ms: number; kind: number }> = []
  private readonly sampler: NodeJS.Timeout
  private readonly gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      this.gcs.push({ t: e.startTime, ms: e.duration, kind: (e as unknown as { detail: { kind: number } }).detail.kind })
  })

  constructor(private readonly db: Leveldb) {
    for (const name of ['snapshot', 'iterator', 'getProperty']) this.timeSync(name)
    this.timeBatches()
    this.gc.observe({ entryTypes: ['gc'] })
    this.sampler = setInterval(() => this.l0.push([performance.now(), Number(db.getProperty('leveldb.num-files-at-level0'))]), 10)
  }

  stats(): string {
    return this.db.getProperty('leveldb.stats')
  }

  async save(file: string, phases: Record<string, unknown>): Promise<void> {
    clearInterval(this.sampler)
    this.gc.disconnect()
    await writeFile(file, JSON.stringify({ origin: performance.timeOrigin, ...phases, l0: this.l0, calls: this.calls, gcs: this.gcs }))
  }

  private timeSync(name: string): void {
    const f = this.db[name] as (...a: unknown[]) => unknown
    this.db[name] = (...a: unknown[]) => {
      const t = performance.now()
      const r = f.apply(this.db, a)
      const ms = performance.now() - t
      if (ms > 2) this.calls.push({ k: name, t, ms })
      return r
    }
  }

  private timeBatches(): void {
    const batch = this.db.batch as (...a: unknown[]) => { write(o: unknown): Promise<void>; length: number }
    this.db.batch = (...a: unknown[]) => {
      const b = batch.apply(this.db, a)
      const write = b.write.bind(b)
      b.write = async (o: unknown) => {
        const n = b.length
        const t = performance.now()
        await write(o)
        this.calls.push({ k: 'batch', t, ms: performance.now() - t, n })
      }
      return b
    }
  }
}

async function main(): Promise<void> {
  applyV8Settings({ v8AllocationSitePretenuring: V8_PRETENURING })
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-bench-compaction-'))
  const log = await openLevelLog({
    dir,
    fsync: 'always',
    compactionMethod: METHOD,
    compactionCompactsRange: COMPACTS_RANGE,
    compactionThread: COMPACTION_THREAD,
    compactionThreadNice: COMPACTION_THREAD_NICE,
    deferFileDeletes: DEFER_FILE_DELETES,
    tableSyncInterval: TABLE_SYNC_INTERVAL,
    compactionBatchRevisions: BATCH,
    compactionMinBatchRevisions: MIN_BATCH,
    compactionMaxDutyPercent: DUTY,
    compactionBatchesPerRead: BATCHES_PER_READ,
    leveldbWriteBufferSize: WRITE_BUFFER,
    leveldbMaxFileSize: MAX_FILE_SIZE,
  })
  try {
    const loadSeconds = await load(log)
    const deletes =
      DURING !== 'deletes'
        ? undefined
        : await RecordedDeletes.read(internals(log).db, log.revision + 1, {
            progress: (rev) =>
              progress(
                `recording the compaction's deletions: ${rev.toLocaleString('en-US')} / ${log.revision.toLocaleString('en-US')} revisions`,
              ),
          })
    const dbBytesBefore = (await log.status()).dbSize

    const trace = TRACE_FILE === undefined ? undefined : new Trace(internals(log).db)
    const eld = monitorEventLoopDelay({ resolution: 5 })
    eld.enable()
    progress(`baseline: ${WRITERS} writers at ${RATE} puts/s for ${WARMUP}s of warm-up, then ${SECONDS}s measured`)
    const baselineLoad = steadyLoad(log)
    await sleep(WARMUP * 1000)
    eld.reset()
    const b0 = performance.now()
    await sleep(SECONDS * 1000)
    const b1 = performance.now()
    const baselineSamples = await baselineLoad.stop()
    const baseline = stats(baselineSamples, b0, b1)
    const eldBaseline = { p99: eld.percentile(99) / 1e6, max: eld.max / 1e6 }
    const statsBaseline = trace?.stats()
    eld.reset()

    const what = { compaction: 'compacting', deletes: "replaying the compaction's deletions", idle: 'idle' }[DURING]
    progress(`${what} under the same load`)
    const duringLoad = steadyLoad(log)
    await sleep(500)
    const target = log.revision - KEEP
    const groups0 = log.writerStats
    const c0 = performance.now()
    const ticker = setInterval(
      () => progress(`${what} to ${target.toLocaleString('en-US')}: ${((performance.now() - c0) / 1000).toFixed(1)}s`),
      250,
    )
    const result = await duringWork(log, dir, deletes, target)
    const c1 = performance.now()
    const groups1 = log.writerStats
    // the writers' groups while it ran: the compaction's batches are sized after them (compactionBatchSize)
    const groupTxnsDuring = (groups1.batchedTxns - groups0.batchedTxns) / Math.max(1, groups1.batches - groups0.batches)
    clearInterval(ticker)
    await sleep(500)
    const duringSamples = await duringLoad.stop()
    const during = stats(duringSamples, c0, c1)
    const eldDuring = { p99: eld.percentile(99) / 1e6, max: eld.max / 1e6 }
    eld.disable()
    if (trace !== undefined && TRACE_FILE !== undefined) {
      const statsDuring = trace.stats()
      await trace.save(TRACE_FILE, { b0, b1, c0, c1, eldBaseline, eldDuring, statsBaseline, statsDuring, baselineSamples, duringSamples })
    }
    const compactionSeconds = (c1 - c0) / 1000

    progress('reclaiming space')
    const r0 = performance.now()
    await log.reclaimSpace()
    const reclaimSeconds = (performance.now() - r0) / 1000
    const dbBytesAfter = (await log.status()).dbSize
    // what dbBytesAfter holds: the revisions from the target on, including those the load wrote meanwhile
    const retainedRevisions = log.revision - target + 1
    endProgress()

    const out = {
      writeP50MsBaseline: round3(baseline.p50),
      writeP99MsBaseline: round3(baseline.p99),
      writeP999MsBaseline: round3(baseline.p999),
      writeMaxMsBaseline: round3(baseline.max),
      writeP50MsDuringCompaction: round3(during.p50),
      writeP99MsDuringCompaction: round3(during.p99),
      writeP999MsDuringCompaction: round3(during.p999),
      writeMaxMsDuringCompaction: round3(during.max),
      eventLoopDelayP99MsBaseline: round3(eldBaseline.p99),
      eventLoopDelayP99MsDuringCompaction: round3(eldDuring.p99),
      putsPerSecBaseline: Math.round(baseline.putsPerSec),
      putsPerSecDuringCompaction: Math.round(during.putsPerSec),
      compactedRevisionsPerSec: Math.round(result.removedRevisions / compactionSeconds),
      compactionSeconds: round3(compactionSeconds),
      removedRevisions: result.removedRevisions,
      removedVersions: result.removedVersions,
      reclaimSeconds: round3(reclaimSeconds),
      dbBytesBefore,
      dbBytesAfter,
      retainedRevisions,
      loadRevisions: REVISIONS,
      loadPutsPerSec: Math.round(REVISIONS / loadSeconds),
      writers: WRITERS,
      baselineSeconds: SECONDS,
      warmupSeconds: WARMUP,
      targetPutsPerSec: RATE,
      valueBytes: VALUE_BYTES,
      keys: KEYS,
      compactionBatchRevisions: BATCH,
      compactionMinBatchRevisions: MIN_BATCH,
      writerGroupTxnsDuringCompaction: round3(groupTxnsDuring),
      compactionMaxDutyPercent: DUTY,
      compactionBatchesPerRead: BATCHES_PER_READ,
      leveldbWriteBufferSize: WRITE_BUFFER,
      leveldbMaxFileSize: MAX_FILE_SIZE,
      compactionMethod: METHOD,
      compactionCompactsRange: COMPACTS_RANGE,
      compactionThread: COMPACTION_THREAD,
      compactionThreadNice: COMPACTION_THREAD_NICE,
      deferFileDeletes: DEFER_FILE_DELETES,
      tableSyncInterval: TABLE_SYNC_INTERVAL,
      v8AllocationSitePretenuring: V8_PRETENURING,
      during: DURING,
      ...(DURING === 'deletes' ? { deletesRatePerSec: DELETES_RATE } : {}),
      fsync: 'always',
      cpus: availableParallelism(),
    }
    console.log(
      table([
        ['metric', 'baseline', 'during compaction'],
        ['write p50 ms', out.writeP50MsBaseline.toFixed(2), out.writeP50MsDuringCompaction.toFixed(2)],
        ['write p99 ms', out.writeP99MsBaseline.toFixed(2), out.writeP99MsDuringCompaction.toFixed(2)],
        ['write p99.9 ms', out.writeP999MsBaseline.toFixed(2), out.writeP999MsDuringCompaction.toFixed(2)],
        ['write max ms', out.writeMaxMsBaseline.toFixed(2), out.writeMaxMsDuringCompaction.toFixed(2)],
        ['puts/s achieved', out.putsPerSecBaseline, out.putsPerSecDuringCompaction],
        ['event-loop delay p99 ms', out.eventLoopDelayP99MsBaseline.toFixed(2), out.eventLoopDelayP99MsDuringCompaction.toFixed(2)],
        ['puts measured', baseline.n, during.n],
      ]),
    )
    console.log()
    console.log(
      table([
        ['compaction', 'value'],
        ['revisions loaded (puts/s)', `${REVISIONS.toLocaleString('en-US')} (${out.loadPutsPerSec.toLocaleString('en-US')})`],
        ['compacted to (keep)', `${target.toLocaleString('en-US')} (${KEEP})`],
        [
          'removed revisions / versions',
          `${result.removedRevisions.toLocaleString('en-US')} / ${result.removedVersions.toLocaleString('en-US')}`,
        ],
        ['compaction seconds', out.compactionSeconds.toFixed(2)],
        ['compacted revisions/s', out.compactedRevisionsPerSec],
        [`writers' transactions per group (batch: 10 revisions each, ${MIN_BATCH}..${BATCH})`, out.writerGroupTxnsDuringCompaction],
        ['reclaimSpace seconds', out.reclaimSeconds.toFixed(2)],
        ['db MiB before', (dbBytesBefore / MiB).toFixed(1)],
        ['db MiB after reclaim', (dbBytesAfter / MiB).toFixed(1)],
        ['revisions retained (target..head)', retainedRevisions.toLocaleString('en-US')],
      ]),
    )
    console.log(
      `load: ${WRITERS} writers paced to ${RATE} puts/s, ${VALUE_BYTES}-byte values over ${KEYS} keys, fsync always; ${out.cpus} CPUs`,
    )
    if (DURING === 'deletes')
      console.log(
        `during: the compaction's deletions alone, paced to ${DELETES_RATE.toLocaleString('en-US')} revisions/s (no compaction ran)`,
      )
    if (DURING === 'idle') console.log(`during: nothing for ${IDLE_SECONDS} s (no compaction ran)`)
    if (args.json) console.log(JSON.stringify(out))
  } finally {
    endProgress()
    await log.close()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
