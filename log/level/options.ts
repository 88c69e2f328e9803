/**
 * The settings LevelLog reads. Each is a setting of config/schema.ts, which documents it and holds its one
 * default; the server passes its Config through levelLogOptions, and tests and benchmarks override single
 * values (tiny segments, tiny batches) over DEFAULT_LEVEL_LOG_OPTIONS.
 *
 * Where each is used:
 *   fsync, maxBatchTxns, inlineWriteMaxTxns               the writer's group commit (writer.ts, io/inline-write.ts)
 *   segmentMaxEntries, segmentMaxBytes                    segment roll-over (segments.ts)
 *   maxRequestBytes, maxTxnOps, maxTxnTotalOps,
 *   maxTxnDepth                                           request validation (../validate.ts)
 *   rangePageCounts                                       counts kept for paged ranges (../page-counts.ts)
 *   compactionBatchRevisions, compactionMinBatchRevisions batch sizes that follow the writers' groups
 *   compactionBatchesPerRead, compactionMaxDutyPercent    the scan's reads and the pause after each batch
 *   compactionThread, compactionThreadNice                the walk or scan in a worker thread (compaction/)
 *   compactionCompactsRange                               LevelDB range compaction at the end of a job
 *   compactionMethod                                      the log scanned (compact-scan.ts) or dropped (drop-job.ts)
 *   deferFileDeletes, fileDeleteBytesPerSecond            deletes off LevelDB's lock (io/deferred-deletes.ts)
 *   tableSyncInterval                                     table files synced as written (io/table-writeback.ts)
 *   leveldbWriteBufferSize, leveldbCacheSize,
 *   leveldbMaxFileSize, leveldbWalPreallocateBytes        LevelDB's own options (level-log.ts, leveldbOptions)
 *   leaseMinTtl, leaseCheckInterval                       leases (leases.ts)
 */
import { DEFAULT_CONFIG, type Config } from '../../config/index.js'
import { pickSettings } from '../settings.js'

export const LEVEL_LOG_SETTINGS = [
  'fsync',
  'segmentMaxEntries',
  'segmentMaxBytes',
  'maxRequestBytes',
  'maxTxnOps',
  'maxTxnTotalOps',
  'maxTxnDepth',
  'maxBatchTxns',
  'inlineWriteMaxTxns',
  'rangePageCounts',
  'compactionBatchRevisions',
  'compactionMinBatchRevisions',
  'compactionBatchesPerRead',
  'compactionMaxDutyPercent',
  'compactionThread',
  'compactionThreadNice',
  'compactionCompactsRange',
  'compactionMethod',
  'deferFileDeletes',
  'fileDeleteBytesPerSecond',
  'tableSyncInterval',
  'leveldbWriteBufferSize',
  'leveldbCacheSize',
  'leveldbMaxFileSize',
  'leveldbWalPreallocateBytes',
  'leaseMinTtl',
  'leaseCheckInterval',
] as const satisfies readonly (keyof Config)[]

export type LevelLogSettings = Pick<Config, (typeof LEVEL_LOG_SETTINGS)[number]>

export interface LevelLogOptions extends LevelLogSettings {
  /** Directory of the LevelDB database (created if missing): the server's dataDir. */
  dir: string
}

/** The engine's settings out of a full Config. */
export function levelLogSettings(config: Readonly<Config>): LevelLogSettings {
  return pickSettings(config, LEVEL_LOG_SETTINGS)
}

/** How the server opens the engine: its settings, on config.dataDir. */
export function levelLogOptions(config: Readonly<Config>): LevelLogOptions {
  return { dir: config.dataDir, ...levelLogSettings(config) }
}

export const DEFAULT_LEVEL_LOG_OPTIONS: Readonly<LevelLogSettings> = Object.freeze(levelLogSettings(DEFAULT_CONFIG))
