/**
 * Tunables of a LevelDB-backed log. They come from config/ in the server and are injected, never
 * hard-coded, so tests can shrink them (tiny segments, tiny batches).
 */
export interface LevelLogOptions {
  /** Directory of the LevelDB database (created if missing). */
  dir: string
  /** 'always': a write is acknowledged only after its batch is fsynced. 'never': leave flushing to the OS. */
  fsync: 'always' | 'never'
  /** Roll the log over to a new segment after this many entries ... */
  segmentMaxEntries: number
  /** ... or this many encoded bytes, whichever comes first. */
  segmentMaxBytes: number
  /** Largest accepted transaction, counting keys and values of every op. */
  maxRequestBytes: number
  /** Most compares, and most ops per branch, in one transaction (etcd's --max-txn-ops). */
  maxTxnOps: number
  /** Deepest nesting of txn ops inside a transaction. */
  maxTxnDepth: number
  /** Most transactions the writer puts into one LevelDB batch (group commit). */
  maxBatchTxns: number
  /**
   * Most revisions compaction removes per LevelDB batch, between writes. Each batch rides in a writers'
   * group (writer.ts), so every put queued behind that group waits for its deletions too. A batch's size
   * follows the writers' groups (compactor.ts, compactionBatchSize): small while they are small (light
   * load, where a large batch would be most of a group's work), up to this under heavy load.
   */
  compactionBatchRevisions: number
  /** Fewest revisions per compaction batch (at most compactionBatchRevisions). */
  compactionMinBatchRevisions: number
  /**
   * Compaction batches the scan reads and plans at a time (one iterator, and in the compaction thread one
   * message each way, for all of them); each is still written in its own writers' group, with its own
   * progress (compact-scan.ts).
   */
  compactionBatchesPerRead: number
  /**
   * Compaction pauses after each batch's write so it runs at most this percent of the time: after a write
   * that took t, it waits t * (100 / duty - 1). 25 by default (docs/benchmarks.md, fifteenth session:
   * write p99 during a 1,000,000-revision compaction ~10% lower than at 50, compaction ~25% slower).
   */
  compactionMaxDutyPercent: number
  /**
   * Whether each compaction job's scan (reading, decoding and planning its batches) runs in a worker
   * thread with its own event loop and heap, so that the writers' event loop is not held up by it nor
   * paused to collect its garbage (compact-thread.ts). The database is then opened with classic-level's
   * `multithreading`, to share LevelDB's handle with that thread. false: the scan runs on the main thread.
   */
  compactionThread: boolean
  /**
   * The compaction thread's nice value (0 to 19; Linux, where a thread has its own): the scan's JavaScript,
   * and V8's collections of its garbage on that thread, give the cores to the writers whenever both want
   * them (thread-priority.ts). The scan's reads in libuv's pool and the batches' writes run at the
   * writers' priority either way.
   */
  compactionThreadNice: number
  /**
   * Whether a compaction ends by compacting LevelDB's range of the log it scanned (and waits for the
   * dropped files to be freed), so that the space comes back at once (default). That deletes LevelDB's
   * table files in a burst, which stalls writes unless deferFileDeletes takes the deletes off LevelDB's
   * lock (compactor.ts). Off: LevelDB's own background compaction gives the space back over time, and
   * reclaimSpace() at once.
   */
  compactionCompactsRange: boolean
  /**
   * Whether LevelDB's table and log files get a second name as they appear, so that LevelDB's own delete
   * (made under the lock every write takes) is cheap and the blocks are freed later, off that lock
   * (deferred-deletes.ts).
   */
  deferFileDeletes: boolean
  /** With deferFileDeletes: at most this many bytes of deleted files are freed per second (0 = unpaced). */
  fileDeleteBytesPerSecond: number
  /**
   * How often the table files LevelDB is writing are synced while it writes them (table-writeback.ts), so
   * that a memtable flush or a LevelDB compaction reaches the disk in pieces instead of one burst that the
   * writers' fsyncs queue behind. 0: only LevelDB's own sync at the end of each file.
   */
  tableSyncInterval: number
  /**
   * LevelDB's write buffer (memtable): writes gather in memory, and in LevelDB's own log file, up to this
   * many bytes before they are written out as a level-0 table.
   */
  leveldbWriteBufferSize: number
  /** LevelDB's cache of uncompressed table blocks, bytes. */
  leveldbCacheSize: number
  /** LevelDB starts a new table file once one reaches this many bytes. */
  leveldbMaxFileSize: number
  /** Shortest lease TTL in seconds; shorter grants are raised to it (etcd: 2 s with default timings). */
  leaseMinTtl: number
  /** How often expired leases are looked for and revoked, in ms. */
  leaseCheckInterval: number
}

export const DEFAULT_LEVEL_LOG_OPTIONS: Omit<LevelLogOptions, 'dir'> = {
  fsync: 'always',
  segmentMaxEntries: 100_000,
  segmentMaxBytes: 64 * 1024 * 1024,
  maxRequestBytes: 1.5 * 1024 * 1024,
  maxTxnOps: 128,
  maxTxnDepth: 32,
  maxBatchTxns: 2048,
  compactionBatchRevisions: 250,
  compactionMinBatchRevisions: 50,
  compactionBatchesPerRead: 5,
  compactionMaxDutyPercent: 25,
  compactionThread: true,
  compactionThreadNice: 19,
  compactionCompactsRange: true,
  deferFileDeletes: true,
  fileDeleteBytesPerSecond: 1024 * 1024 * 1024,
  tableSyncInterval: 20,
  leveldbWriteBufferSize: 32 * 1024 * 1024,
  leveldbCacheSize: 64 * 1024 * 1024,
  leveldbMaxFileSize: 8 * 1024 * 1024,
  leaseMinTtl: 2,
  leaseCheckInterval: 500,
}
