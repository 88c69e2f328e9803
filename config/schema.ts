/**
 * The one table of every kvlog setting.
 *
 * Each setting has a camelCase key (the name in a config file and in code), a flag (`--kebab-case`) and an
 * environment variable (`KVLOG_SCREAMING_SNAKE`). Values come from, lowest precedence first:
 *
 *     defaults (this table)  <  config file  <  KVLOG_* environment  <  command-line flags
 *
 * Units: `bytes` settings hold a byte count, `duration` settings hold milliseconds, `address` settings hold
 * the "HOST:PORT" string as given (split it with parseAddress in parse-values.ts). min/max are in the same
 * units and inclusive. docs/configuration.md is rendered from this table (config/print-docs.ts).
 *
 * This file imports nothing: config/ is read by every layer.
 */

export type SettingType = 'string' | 'integer' | 'boolean' | 'enum' | 'bytes' | 'duration' | 'address'

/** Where a setting's value came from. */
export type ConfigSource = 'default' | 'file' | 'env' | 'flag'

export const FSYNC_MODES = ['always', 'never'] as const
export type FsyncMode = (typeof FSYNC_MODES)[number]
export const COMPACTION_METHODS = ['drop', 'scan'] as const
export type CompactionMethod = (typeof COMPACTION_METHODS)[number]

/** pino's levels; 'silent' turns logging off. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

/** 'auto': text when stdout is a terminal, JSON otherwise. */
export const LOG_FORMATS = ['auto', 'json', 'text'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export const AUTO_COMPACTION_MODES = ['off', 'revision', 'periodic'] as const
export type AutoCompactionMode = (typeof AUTO_COMPACTION_MODES)[number]

/** The history browser at /ui: 'auto' serves it when the HTTP listener is on a loopback address. */
export const UI_MODES = ['auto', 'on', 'off'] as const
export type UiMode = (typeof UI_MODES)[number]

const KiB = 1024
const MiB = 1024 * KiB
const GiB = 1024 * MiB
const SECOND = 1000

/** The resolved configuration of a kvlog server. Bytes are byte counts, durations milliseconds. */
export interface Config {
  dataDir: string
  fsync: FsyncMode
  segmentMaxEntries: number
  segmentMaxBytes: number
  maxRequestBytes: number
  maxTxnOps: number
  maxTxnDepth: number
  maxBatchTxns: number
  inlineWriteMaxTxns: number
  rangePageCounts: number
  compactionBatchRevisions: number
  compactionMinBatchRevisions: number
  compactionBatchesPerRead: number
  compactionMaxDutyPercent: number
  compactionThread: boolean
  compactionThreadNice: number
  compactionCompactsRange: boolean
  compactionMethod: CompactionMethod
  deferFileDeletes: boolean
  fileDeleteBytesPerSecond: number
  tableSyncInterval: number
  leveldbWriteBufferSize: number
  leveldbCacheSize: number
  leveldbMaxFileSize: number
  leveldbWalPreallocateBytes: number
  v8AllocationSitePretenuring: boolean
  autoCompactionMode: AutoCompactionMode
  autoCompactionRetention: string
  quotaBackendBytes: number
  compactionMinRetain: number
  compactionCheckInterval: number
  cursorMaxLag: number
  listenHttp: string
  listenGrpc: string
  ui: UiMode
  keyTreeMaxChildren: number
  historyMaxBuckets: number
  /** '' means: write no ready file. */
  readyFile: string
  logLevel: LogLevel
  logFormat: LogFormat
  logFailedRequestsPerSecond: number
  watchRingSize: number
  watchCatchUpBatch: number
  /** 0 turns progress notices for idle watchers off. */
  watchProgressInterval: number
  maxWatchersPerConnection: number
  resourceNamespaceMustExist: boolean
  resourceDeleteCollectionPage: number
  wsMaxPayload: number
  wsHeartbeatInterval: number
  wsMaxBufferedBytes: number
  shutdownTimeout: number
  leaseMinTtl: number
  leaseCheckInterval: number
  etcdVersion: string
  memberName: string
  grpcKeepaliveInterval: number
  grpcKeepaliveTimeout: number
  /** '' = no TLS. With both files set, the HTTP and gRPC listeners serve TLS only. */
  tlsCertFile: string
  tlsKeyFile: string
  /** '' = no client certificates asked for. */
  tlsClientCaFile: string
  grpcMaxQueuedMessages: number
  grpcMaxQueuedBytes: number
  /** The etcd client port's HTTP/2 and connection limits (apiserver/etcd/transport/client-port.ts). */
  maxConcurrentStreams: number
  grpcKeepaliveMinTime: number
  clientPortMaxConnections: number
  clientPortMaxStreams: number
  clientPortIdleTimeout: number
  clientPortUnknownProtocolTimeout: number
  http2MaxHeaderListSize: number
  http2MaxHeaderListPairs: number
  http2MaxSessionMemory: number
  http2MaxSettings: number
  http2MaxOutstandingPings: number
  http2MaxSessionInvalidFrames: number
  http2MaxSessionRejectedStreams: number
  /** '' = single node (no cluster). Comma-separated NATS URLs. */
  natsUrl: string
  clusterName: string
  natsReplicas: number
  /** Comma-separated; '' = the gRPC listener's URL. */
  advertiseClientUrls: string
  advertisePeerUrls: string
  natsCreds: string
  natsTlsCa: string
  natsPingInterval: number
  natsMaxPingsOut: number
  natsReconnectWait: number
  leaderLease: number
  natsPublishTimeout: number
  natsCallTimeout: number
  clusterTailMessages: number
  clusterDiskReserve: number
  clusterRequestTimeout: number
  clusterMaxGroupCommands: number
  clusterMaxGroupBytes: number
  /** Stream messages between snapshots; 0 = no snapshots (and no purge). */
  clusterSnapshotInterval: number
  clusterSnapshotKeep: number
  clusterSnapshotCheckInterval: number
  clusterCorruptCheckInterval: number
  clusterPurgeGrace: number
  clusterApplyMaxAhead: number
  clusterApplyHoldMax: number
  clusterConsumerStallTimeout: number
  clusterConsumerInactiveThreshold: number
  clusterFillRetryInterval: number
  clusterStrictReconfigCheck: boolean
  clusterTailReplyBytes: number
  authTokenTtl: number
  /** 'simple' or 'jwt,sign-method=...,priv-key=...,pub-key=...,ttl=...' (etcd's --auth-token). */
  authToken: string
  authPasswordHashCost: number
  authMaxPendingLogins: number
  authHashThreadNice: number
  authHashNormalPerSecond: number
  clientCertAuth: boolean
  /** '' = no static tokens. */
  tokenAuthFile: string
  /** '' = not following. Comma-separated etcd endpoints. */
  followEtcd: string
  followEtcdStatusInterval: number
  followEtcdCutoverTimeout: number
  followEtcdCaFile: string
  followEtcdCertFile: string
  followEtcdKeyFile: string
  followEtcdUser: string
  // Request bounds and browser-facing defaults (docs/security.md).
  maxTxnTotalOps: number
  maxJsonDepth: number
  authorAgentMaxChars: number
  /** Comma-separated origins; '' = same origin only, '*' = any. */
  cors: string
  /** Comma-separated host names; '' = loopback names on a loopback listener, any elsewhere; '*' = any. */
  hostWhitelist: string
  loginMaxFailuresPerSource: number
  loginMaxFailuresPerUser: number
  loginMaxPendingPerSource: number
  loginFailureWindow: number
}

export interface Setting<K extends keyof Config = keyof Config> {
  readonly key: K
  readonly type: SettingType
  readonly default: Config[K]
  /** Inclusive bounds for integer, bytes (in bytes) and duration (in ms) settings. */
  readonly min?: number
  readonly max?: number
  /** The allowed values of an enum setting. */
  readonly values?: readonly string[]
  /** A string setting that must not be empty. */
  readonly nonEmpty?: boolean
  /** One line, shown in docs/configuration.md. */
  readonly description: string
  /** `--kebab-case` of the key. */
  readonly flag: string
  /** `KVLOG_` + SCREAMING_SNAKE_CASE of the key. */
  readonly env: string
}

/** Every setting, keyed by its camelCase key, in the order the docs list them. */
export const SCHEMA: { readonly [K in keyof Config]: Setting<K> } = {
  dataDir: {
    key: 'dataDir',
    type: 'string',
    default: './kvlog-data',
    nonEmpty: true,
    description: 'Directory of the LevelDB database; created if missing.',
    flag: '--data-dir',
    env: 'KVLOG_DATA_DIR',
  },
  fsync: {
    key: 'fsync',
    type: 'enum',
    default: 'always',
    values: FSYNC_MODES,
    description:
      "'always': a write is acknowledged only after its batch is on disk. 'never': leave flushing to the OS (faster, loses recent writes on a machine crash).",
    flag: '--fsync',
    env: 'KVLOG_FSYNC',
  },
  segmentMaxEntries: {
    key: 'segmentMaxEntries',
    type: 'integer',
    default: 100_000,
    min: 1,
    description: 'Roll the log over to a new segment after this many entries (or segmentMaxBytes, whichever comes first).',
    flag: '--segment-max-entries',
    env: 'KVLOG_SEGMENT_MAX_ENTRIES',
  },
  segmentMaxBytes: {
    key: 'segmentMaxBytes',
    type: 'bytes',
    default: 64 * MiB,
    min: KiB,
    description: 'Roll the log over to a new segment after this many encoded bytes (or segmentMaxEntries).',
    flag: '--segment-max-bytes',
    env: 'KVLOG_SEGMENT_MAX_BYTES',
  },
  maxRequestBytes: {
    key: 'maxRequestBytes',
    type: 'bytes',
    default: 1.5 * MiB,
    min: 256,
    max: 64 * MiB,
    description:
      'Largest accepted request or transaction, counting keys and values of every op (REQUEST_TOO_LARGE). Also the size of a step of a streamed read (etcd RangeStream chunks, streamed GET /v1/kv ranges and resource Lists): the server holds about one per response.',
    flag: '--max-request-bytes',
    env: 'KVLOG_MAX_REQUEST_BYTES',
  },
  maxTxnOps: {
    key: 'maxTxnOps',
    type: 'integer',
    default: 128,
    min: 1,
    max: 100_000,
    description: 'Most compares, and most ops per branch, in one transaction (TOO_MANY_OPS).',
    flag: '--max-txn-ops',
    env: 'KVLOG_MAX_TXN_OPS',
  },
  maxTxnDepth: {
    key: 'maxTxnDepth',
    type: 'integer',
    default: 32,
    min: 1,
    max: 1000,
    description: 'Deepest nesting of transactions inside transactions (INVALID_ARGUMENT beyond it).',
    flag: '--max-txn-depth',
    env: 'KVLOG_MAX_TXN_DEPTH',
  },
  maxBatchTxns: {
    key: 'maxBatchTxns',
    type: 'integer',
    default: 2048,
    min: 1,
    max: 100_000,
    description: 'Most transactions the writer puts into one group-commit batch.',
    flag: '--max-batch-txns',
    env: 'KVLOG_MAX_BATCH_TXNS',
  },
  inlineWriteMaxTxns: {
    key: 'inlineWriteMaxTxns',
    type: 'integer',
    default: 1,
    min: 0,
    max: 100_000,
    description:
      "Most transactions in a group written and fsynced on the main thread while nothing else is written (0: LevelDB's thread pool always).",
    flag: '--inline-write-max-txns',
    env: 'KVLOG_INLINE_WRITE_MAX_TXNS',
  },
  rangePageCounts: {
    key: 'rangePageCounts',
    type: 'integer',
    default: 1024,
    min: 0,
    max: 1_000_000,
    description:
      "Counts kept for paged ranges: after a page of a range read with a limit at a revision, the count of the range after it, for the next page at that revision (kube-apiserver's paged lists), so a page costs its own keys, not the rest of the range's. The least recently used are dropped; 0 counts every page's range anew.",
    flag: '--range-page-counts',
    env: 'KVLOG_RANGE_PAGE_COUNTS',
  },
  compactionBatchRevisions: {
    key: 'compactionBatchRevisions',
    type: 'integer',
    default: 250,
    min: 1,
    max: 1_000_000,
    description:
      "Most revisions compaction removes per batch, between writes. Each batch rides in a group of writers' transactions, so its size follows theirs: 10 revisions per transaction in the writers' recent groups, from compactionMinBatchRevisions up to this (light load: small batches that hold the writers up less; heavy load: large ones that keep the compaction fast).",
    flag: '--compaction-batch-revisions',
    env: 'KVLOG_COMPACTION_BATCH_REVISIONS',
  },
  compactionMinBatchRevisions: {
    key: 'compactionMinBatchRevisions',
    type: 'integer',
    default: 50,
    min: 1,
    max: 1_000_000,
    description: 'Fewest revisions compaction removes per batch (at most compactionBatchRevisions).',
    flag: '--compaction-min-batch-revisions',
    env: 'KVLOG_COMPACTION_MIN_BATCH_REVISIONS',
  },
  compactionBatchesPerRead: {
    key: 'compactionBatchesPerRead',
    type: 'integer',
    default: 5,
    min: 1,
    max: 1_000,
    description:
      "Compaction batches the scan reads and plans at a time: one read of the log, and with compactionThread one message each way between the threads, serve them all, while each batch is still written on its own in a writers' group, with its own progress. 1: read, plan and send each batch on its own.",
    flag: '--compaction-batches-per-read',
    env: 'KVLOG_COMPACTION_BATCHES_PER_READ',
  },
  compactionMaxDutyPercent: {
    key: 'compactionMaxDutyPercent',
    type: 'integer',
    default: 25,
    min: 1,
    max: 100,
    description:
      "Compaction pauses after each batch's write so that it runs at most this share of the time, leaving the rest to writers (a write that took t is followed by a pause of t × (100 / duty − 1)). Lower: the writers' latency during a compaction is lower and the compaction slower; 100: no pauses.",
    flag: '--compaction-max-duty-percent',
    env: 'KVLOG_COMPACTION_MAX_DUTY_PERCENT',
  },
  compactionThread: {
    key: 'compactionThread',
    type: 'boolean',
    default: true,
    description:
      "Each compaction's reading part (method drop: the hist walk; scan: reading the removed log entries, decoding them, planning each batch) runs in a worker thread with its own event loop and heap, sharing LevelDB's handle (classic-level's multithreading); the main thread only writes the batches, so the writers are not held up by that work nor paused to collect its garbage. false: it runs on the main thread.",
    flag: '--compaction-thread',
    env: 'KVLOG_COMPACTION_THREAD',
  },
  compactionThreadNice: {
    key: 'compactionThreadNice',
    type: 'integer',
    default: 19,
    min: 0,
    max: 19,
    description:
      "The compaction thread's CPU priority as a nice value (higher runs later; Linux, where each thread has its own; elsewhere it runs at the process's): the walk's or scan's JavaScript, and V8's collections of its garbage on that thread, give the cores to the writers whenever both want them, as RocksDB runs its compaction threads at nice 19. Its reads (in libuv's pool) and the batches' writes keep the writers' priority. On a machine the writers keep busy, compaction then advances slowly. 0: the writers' priority.",
    flag: '--compaction-thread-nice',
    env: 'KVLOG_COMPACTION_THREAD_NICE',
  },
  compactionMethod: {
    key: 'compactionMethod',
    type: 'enum',
    default: 'drop',
    values: COMPACTION_METHODS,
    description:
      "How compaction removes history. 'drop': walk the small hist index (delete superseded versions; copy into hist each surviving version whose key was written since), then drop the log's table files below the new floor whole and delete what is left of that range, like Kafka deleting segment files; the log's values are neither read nor marked deleted one by one. 'scan': read every log entry below the new floor and remove each superseded version from hist and from its entry, keeping survivors in their entries (compactionBatchesPerRead applies to it).",
    flag: '--compaction-method',
    env: 'KVLOG_COMPACTION_METHOD',
  },
  compactionCompactsRange: {
    key: 'compactionCompactsRange',
    type: 'boolean',
    default: true,
    description:
      "Each compaction ends by compacting LevelDB's range of the removed log and waits until the dropped files are freed, giving its disk space back at once. It deletes many files in a burst: with deferFileDeletes off, LevelDB deletes them under its lock, stalling writes for tens of milliseconds at a time. false: LevelDB's background compaction gives the space back over time (and automatic compaction reclaims space after large removals).",
    flag: '--compaction-compacts-range',
    env: 'KVLOG_COMPACTION_COMPACTS_RANGE',
  },
  deferFileDeletes: {
    key: 'deferFileDeletes',
    type: 'boolean',
    default: true,
    description:
      "LevelDB's table and log files get a second name (a hard link in <dataDir>/trash) as they appear, so that LevelDB's own delete of a file, made under the lock every write takes, only drops a name; kvlog frees the file's blocks afterwards, off that lock. false: LevelDB deletes files itself, stalling writes for milliseconds per file.",
    flag: '--defer-file-deletes',
    env: 'KVLOG_DEFER_FILE_DELETES',
  },
  fileDeleteBytesPerSecond: {
    key: 'fileDeleteBytesPerSecond',
    type: 'bytes',
    default: GiB,
    min: 0,
    description:
      "With deferFileDeletes: the files LevelDB deleted are freed 4 MiB at a time (truncated, then unlinked) at most this many bytes per second, so that the filesystem's work of freeing them does not land in one journal commit the writers' fsyncs wait for. A large compaction makes LevelDB drop several GB of files (it rewrites its levels), so a low rate leaves them on disk for a while. 0 = no pause between chunks.",
    flag: '--file-delete-bytes-per-second',
    env: 'KVLOG_FILE_DELETE_BYTES_PER_SECOND',
  },
  tableSyncInterval: {
    key: 'tableSyncInterval',
    type: 'duration',
    default: 20,
    min: 0,
    max: 60_000,
    description:
      "How often the table files LevelDB is writing (a flushed memtable, a LevelDB compaction's output) are synced while it writes them, as RocksDB's bytes_per_sync does: the data reaches the disk in pieces instead of one burst at the end of each file, which the writers' fsyncs would queue behind (a flush of the 32 MiB write buffer held synced writes for ~41 ms, ~21 ms with this on). 0: only LevelDB's own sync at the end of each file.",
    flag: '--table-sync-interval',
    env: 'KVLOG_TABLE_SYNC_INTERVAL',
  },
  leveldbWriteBufferSize: {
    key: 'leveldbWriteBufferSize',
    type: 'bytes',
    default: 32 * MiB,
    min: 64 * KiB,
    max: GiB,
    description:
      "LevelDB's write buffer (memtable): writes gather in memory, and in LevelDB's own log file in the data dir, up to this many bytes, then are written out as a table file. Larger: fewer, larger table files under a steady write load, more memory, a longer log to replay at start.",
    flag: '--leveldb-write-buffer-size',
    env: 'KVLOG_LEVELDB_WRITE_BUFFER_SIZE',
  },
  leveldbCacheSize: {
    key: 'leveldbCacheSize',
    type: 'bytes',
    default: 64 * MiB,
    min: 0,
    max: 64 * GiB,
    description: "LevelDB's cache of table blocks read from disk (reads of recently used keys and history skip the file system).",
    flag: '--leveldb-cache-size',
    env: 'KVLOG_LEVELDB_CACHE_SIZE',
  },
  leveldbMaxFileSize: {
    key: 'leveldbMaxFileSize',
    type: 'bytes',
    default: 8 * MiB,
    min: 64 * KiB,
    max: GiB,
    description:
      "LevelDB starts a new table file once one reaches this size (LevelDB's own default: 2 MiB). Larger: fewer files and fewer, larger compactions.",
    flag: '--leveldb-max-file-size',
    env: 'KVLOG_LEVELDB_MAX_FILE_SIZE',
  },
  leveldbWalPreallocateBytes: {
    key: 'leveldbWalPreallocateBytes',
    type: 'bytes',
    default: 4 * MiB,
    min: 0,
    max: GiB,
    description:
      "With fsync 'always', on Linux: LevelDB's write-ahead log is allocated this much at a time ahead of its writes, as etcd preallocates its WAL, so that a synced write does not grow the file and its fdatasync skips the filesystem's journal (a synced 300-byte LevelDB write: ~175 µs instead of ~255 µs here). The log is cut back to what was written when closed, and dbSize (and so the quota) counts it up to its records; after a crash LevelDB skips the zeroed tail. 0: appended as LevelDB does. A cluster member's copy is always appended: it applies runs of messages unsynced and syncs the last.",
    flag: '--leveldb-wal-preallocate-bytes',
    env: 'KVLOG_LEVELDB_WAL_PREALLOCATE_BYTES',
  },
  v8AllocationSitePretenuring: {
    key: 'v8AllocationSitePretenuring',
    type: 'boolean',
    default: false,
    description:
      "V8's allocation-site pretenuring in the server process: V8 learns which allocation sites make objects that survive and then allocates their objects in the old generation directly. A burst of writes with thousands in flight teaches it that each write's objects survive; at the steady rate after it they die young but are still allocated old, and the old generation then needs a full collection every 1-2 s (pauses of 5-18 ms that every write in flight waits out). false turns it off (node's --no-allocation-site-pretenuring).",
    flag: '--v8-allocation-site-pretenuring',
    env: 'KVLOG_V8_ALLOCATION_SITE_PRETENURING',
  },

  autoCompactionMode: {
    key: 'autoCompactionMode',
    type: 'enum',
    default: 'off',
    values: AUTO_COMPACTION_MODES,
    description: "Automatic compaction: 'revision' keeps the last N revisions, 'periodic' keeps a duration of history (etcd's names).",
    flag: '--auto-compaction-mode',
    env: 'KVLOG_AUTO_COMPACTION_MODE',
  },
  autoCompactionRetention: {
    key: 'autoCompactionRetention',
    type: 'string',
    default: '0',
    description:
      'With mode revision: how many revisions to keep (e.g. 10000). With periodic: how long, e.g. 1h, 30m (a bare number is hours, as in etcd). 0 = off.',
    flag: '--auto-compaction-retention',
    env: 'KVLOG_AUTO_COMPACTION_RETENTION',
  },
  quotaBackendBytes: {
    key: 'quotaBackendBytes',
    type: 'bytes',
    default: 2 * GiB,
    min: 0,
    description:
      'Database size quota: above it compaction becomes aggressive, and if that is not enough the NOSPACE alarm refuses writes that add data. 0 = no quota.',
    flag: '--quota-backend-bytes',
    env: 'KVLOG_QUOTA_BACKEND_BYTES',
  },
  compactionMinRetain: {
    key: 'compactionMinRetain',
    type: 'integer',
    default: 1000,
    min: 0,
    max: 1_000_000_000,
    description: 'Automatic compaction (any policy, the quota too) always keeps at least this many recent revisions.',
    flag: '--compaction-min-retain',
    env: 'KVLOG_COMPACTION_MIN_RETAIN',
  },
  compactionCheckInterval: {
    key: 'compactionCheckInterval',
    type: 'duration',
    default: 10_000,
    min: 10,
    description: 'How often the compaction policies and the quota are checked.',
    flag: '--compaction-check-interval',
    env: 'KVLOG_COMPACTION_CHECK_INTERVAL',
  },
  cursorMaxLag: {
    key: 'cursorMaxLag',
    type: 'integer',
    default: 1_000_000,
    min: 0,
    max: 1_000_000_000_000,
    description:
      'A consumer cursor holds compaction back at most this many revisions behind the head; beyond it the cursor expires (its next resume gets COMPACTED).',
    flag: '--cursor-max-lag',
    env: 'KVLOG_CURSOR_MAX_LAG',
  },
  listenHttp: {
    key: 'listenHttp',
    type: 'address',
    default: '127.0.0.1:8379',
    description: 'Address of the HTTP and WebSocket API (port 0: any free port).',
    flag: '--listen-http',
    env: 'KVLOG_LISTEN_HTTP',
  },
  ui: {
    key: 'ui',
    type: 'enum',
    default: 'auto',
    values: UI_MODES,
    description: "The history browser at /ui on the HTTP listener: 'auto' serves it only when that listener is on a loopback address.",
    flag: '--ui',
    env: 'KVLOG_UI',
  },
  keyTreeMaxChildren: {
    key: 'keyTreeMaxChildren',
    type: 'integer',
    default: 1000,
    min: 1,
    max: 100_000,
    description: 'Most children one page of GET /v1/keys/tree may ask for (each costs one small read and one count).',
    flag: '--key-tree-max-children',
    env: 'KVLOG_KEY_TREE_MAX_CHILDREN',
  },
  historyMaxBuckets: {
    key: 'historyMaxBuckets',
    type: 'integer',
    default: 1000,
    min: 1,
    max: 100_000,
    description: 'Most time buckets GET /v1/history/buckets may ask for (each costs one binary search over the log).',
    flag: '--history-max-buckets',
    env: 'KVLOG_HISTORY_MAX_BUCKETS',
  },
  listenGrpc: {
    key: 'listenGrpc',
    type: 'address',
    default: '127.0.0.1:2379',
    description: 'Address of the etcd v3 gRPC API (port 0: any free port).',
    flag: '--listen-grpc',
    env: 'KVLOG_LISTEN_GRPC',
  },
  readyFile: {
    key: 'readyFile',
    type: 'string',
    default: '',
    description: 'Once serving, the server writes this file so scripts and tests can wait for it (empty: none).',
    flag: '--ready-file',
    env: 'KVLOG_READY_FILE',
  },
  logLevel: {
    key: 'logLevel',
    type: 'enum',
    default: 'info',
    values: LOG_LEVELS,
    description: "Lowest level of structured log lines written ('silent': none).",
    flag: '--log-level',
    env: 'KVLOG_LOG_LEVEL',
  },
  logFormat: {
    key: 'logFormat',
    type: 'enum',
    default: 'auto',
    values: LOG_FORMATS,
    description:
      "Log lines as JSON (pino's shape, ISO 8601 times) or as text (time, level, message, key=value); 'auto': text when stdout is a terminal, else JSON.",
    flag: '--log-format',
    env: 'KVLOG_LOG_FORMAT',
  },
  logFailedRequestsPerSecond: {
    key: 'logFailedRequestsPerSecond',
    type: 'integer',
    default: 100,
    min: 0,
    max: 1_000_000,
    description:
      "At most this many 'request failed' lines (both doors together) in any one second; the others are counted and their number logged in one warn line when the second ends, so that a flood of bad requests cannot make logging the server's work (0: no limit).",
    flag: '--log-failed-requests-per-second',
    env: 'KVLOG_LOG_FAILED_REQUESTS_PER_SECOND',
  },
  watchRingSize: {
    key: 'watchRingSize',
    type: 'integer',
    default: 10_000,
    min: 0,
    max: 10_000_000,
    description: 'Recent events kept in memory so watchers can catch up without reading the log (0: none).',
    flag: '--watch-ring-size',
    env: 'KVLOG_WATCH_RING_SIZE',
  },
  watchCatchUpBatch: {
    key: 'watchCatchUpBatch',
    type: 'integer',
    default: 1000,
    min: 1,
    max: 1_000_000,
    description: 'Revisions read from the log per catch-up step of a watcher behind the ring.',
    flag: '--watch-catch-up-batch',
    env: 'KVLOG_WATCH_CATCH_UP_BATCH',
  },
  watchProgressInterval: {
    key: 'watchProgressInterval',
    type: 'duration',
    default: 5 * SECOND,
    min: 0,
    description:
      'Idle watchers get a progress notice this often (5 s: what kubeadm, k3s and kine run etcd with); resource-API watches with allowWatchBookmarks get a BOOKMARK this often (0: off). A watch from a future revision gets none until it gets there.',
    flag: '--watch-progress-interval',
    env: 'KVLOG_WATCH_PROGRESS_INTERVAL',
  },
  resourceNamespaceMustExist: {
    key: 'resourceNamespaceMustExist',
    type: 'boolean',
    default: true,
    description:
      'Resource API: creating an object in a namespace that has no Namespace object is 404 NotFound, as kube-apiserver answers (default, kube-system, kube-public and kube-node-lease always exist). false: any namespace name may be used without creating it first.',
    flag: '--resource-namespace-must-exist',
    env: 'KVLOG_RESOURCE_NAMESPACE_MUST_EXIST',
  },
  resourceDeleteCollectionPage: {
    key: 'resourceDeleteCollectionPage',
    type: 'integer',
    default: 500,
    min: 1,
    max: 100_000,
    description:
      'Resource API: a DELETE of a collection reads at most this many matching objects at one revision, deleting them as it reads (about maxRequestBytes of them at a time), then reads on at the latest revision from where it stopped. Objects created meanwhile behind that point stay, as kube-apiserver does not promise to delete them.',
    flag: '--resource-delete-collection-page',
    env: 'KVLOG_RESOURCE_DELETE_COLLECTION_PAGE',
  },
  maxWatchersPerConnection: {
    key: 'maxWatchersPerConnection',
    type: 'integer',
    default: 10_000,
    min: 1,
    max: 1_000_000,
    description: 'Most watches on one WebSocket or gRPC connection (TOO_MANY_WATCHERS).',
    flag: '--max-watchers-per-connection',
    env: 'KVLOG_MAX_WATCHERS_PER_CONNECTION',
  },
  wsMaxPayload: {
    key: 'wsMaxPayload',
    type: 'bytes',
    default: 4 * MiB,
    min: KiB,
    description: 'Largest WebSocket message accepted from a client.',
    flag: '--ws-max-payload',
    env: 'KVLOG_WS_MAX_PAYLOAD',
  },
  wsHeartbeatInterval: {
    key: 'wsHeartbeatInterval',
    type: 'duration',
    default: 30 * SECOND,
    min: 100,
    description: 'Ping WebSocket clients this often; one that has not answered the previous ping is closed.',
    flag: '--ws-heartbeat-interval',
    env: 'KVLOG_WS_HEARTBEAT_INTERVAL',
  },
  wsMaxBufferedBytes: {
    key: 'wsMaxBufferedBytes',
    type: 'bytes',
    default: 8 * MiB,
    description: 'A WebSocket connection with more than this unsent is paused; its watchers catch up from the log later.',
    flag: '--ws-max-buffered-bytes',
    env: 'KVLOG_WS_MAX_BUFFERED_BYTES',
  },
  shutdownTimeout: {
    key: 'shutdownTimeout',
    type: 'duration',
    default: 10 * SECOND,
    description: 'On SIGTERM/SIGINT, wait this long for requests and streams to finish before closing them.',
    flag: '--shutdown-timeout',
    env: 'KVLOG_SHUTDOWN_TIMEOUT',
  },
  leaseMinTtl: {
    key: 'leaseMinTtl',
    type: 'integer',
    default: 2,
    min: 1,
    max: 3600,
    description: 'Shortest lease TTL in seconds; shorter grants are raised to it (etcd grants 2 s at least with its default timings).',
    flag: '--lease-min-ttl',
    env: 'KVLOG_LEASE_MIN_TTL',
  },
  leaseCheckInterval: {
    key: 'leaseCheckInterval',
    type: 'duration',
    default: 500,
    min: 10,
    description: 'How often expired leases are looked for; each is revoked (its keys deleted) in its own revision.',
    flag: '--lease-check-interval',
    env: 'KVLOG_LEASE_CHECK_INTERVAL',
  },
  etcdVersion: {
    key: 'etcdVersion',
    type: 'string',
    default: '3.5.16',
    nonEmpty: true,
    description:
      'The etcd version the gRPC Status call reports. kube-apiserver sends watch progress requests only to etcd >= 3.5.13 (or 3.4.31).',
    flag: '--etcd-version',
    env: 'KVLOG_ETCD_VERSION',
  },
  memberName: {
    key: 'memberName',
    type: 'string',
    default: 'default',
    nonEmpty: true,
    description:
      "This member's name in the etcd Cluster and Maintenance APIs; in cluster mode unique per member ('default' there means the host name and the gRPC port).",
    flag: '--member-name',
    env: 'KVLOG_MEMBER_NAME',
  },
  grpcKeepaliveInterval: {
    key: 'grpcKeepaliveInterval',
    type: 'duration',
    default: 2 * 60 * 60 * SECOND,
    min: 1000,
    description: "The gRPC server pings an idle connection this often (etcd's --grpc-keepalive-interval).",
    flag: '--grpc-keepalive-interval',
    env: 'KVLOG_GRPC_KEEPALIVE_INTERVAL',
  },
  grpcKeepaliveTimeout: {
    key: 'grpcKeepaliveTimeout',
    type: 'duration',
    default: 20 * SECOND,
    min: 100,
    description: "A connection whose ping is not answered within this time is closed (etcd's --grpc-keepalive-timeout).",
    flag: '--grpc-keepalive-timeout',
    env: 'KVLOG_GRPC_KEEPALIVE_TIMEOUT',
  },
  tlsCertFile: {
    key: 'tlsCertFile',
    type: 'string',
    default: '',
    description: 'PEM certificate (chain) of the server; with tlsKeyFile, both listeners serve TLS only (https:// endpoints).',
    flag: '--tls-cert-file',
    env: 'KVLOG_TLS_CERT_FILE',
  },
  tlsKeyFile: {
    key: 'tlsKeyFile',
    type: 'string',
    default: '',
    description: 'PEM private key for tlsCertFile.',
    flag: '--tls-key-file',
    env: 'KVLOG_TLS_KEY_FILE',
  },
  tlsClientCaFile: {
    key: 'tlsClientCaFile',
    type: 'string',
    default: '',
    description: 'PEM CA bundle; when set, clients must present a certificate signed by it (needs tlsCertFile and tlsKeyFile).',
    flag: '--tls-client-ca-file',
    env: 'KVLOG_TLS_CLIENT_CA_FILE',
  },
  grpcMaxQueuedMessages: {
    key: 'grpcMaxQueuedMessages',
    type: 'integer',
    default: 4096,
    min: 16,
    description: 'A gRPC watch stream with more unsent responses than this is paused; its watchers catch up from the log later.',
    flag: '--grpc-max-queued-messages',
    env: 'KVLOG_GRPC_MAX_QUEUED_MESSAGES',
  },
  grpcMaxQueuedBytes: {
    key: 'grpcMaxQueuedBytes',
    type: 'bytes',
    default: 64 * MiB,
    min: MiB,
    description: 'A gRPC watch stream with more unsent response bytes than this is paused; its watchers catch up from the log later.',
    flag: '--grpc-max-queued-bytes',
    env: 'KVLOG_GRPC_MAX_QUEUED_BYTES',
  },
  // The etcd client port's HTTP/2 and connection limits (docs/security.md explains each default).
  maxConcurrentStreams: {
    key: 'maxConcurrentStreams',
    type: 'integer',
    default: 1000,
    min: 1,
    max: 2 ** 31 - 1,
    description:
      "Streams (calls) one client connection may have open on the etcd port; more are refused with REFUSED_STREAM (etcd's --max-concurrent-streams, unlimited there).",
    flag: '--max-concurrent-streams',
    env: 'KVLOG_MAX_CONCURRENT_STREAMS',
  },
  grpcKeepaliveMinTime: {
    key: 'grpcKeepaliveMinTime',
    type: 'duration',
    default: 5 * SECOND,
    min: 0,
    description:
      "A client may ping the etcd port at most this often; one that pings faster is closed with GOAWAY ENHANCE_YOUR_CALM, as etcd's gRPC server does (etcd's --grpc-keepalive-min-time).",
    flag: '--grpc-keepalive-min-time',
    env: 'KVLOG_GRPC_KEEPALIVE_MIN_TIME',
  },
  clientPortMaxConnections: {
    key: 'clientPortMaxConnections',
    type: 'integer',
    default: 5000,
    min: 1,
    description:
      'Connections the etcd port holds open at once (HTTP/2 and HTTP/1.1 together); further ones are closed as they arrive. Keep it well below the open-file limit.',
    flag: '--client-port-max-connections',
    env: 'KVLOG_CLIENT_PORT_MAX_CONNECTIONS',
  },
  clientPortMaxStreams: {
    key: 'clientPortMaxStreams',
    type: 'integer',
    default: 10_000,
    min: 1,
    description:
      'Streams (calls, watches included) open at once on the etcd port over all connections; further ones are refused with REFUSED_STREAM. Bounds what maxConcurrentStreams × clientPortMaxConnections would allow.',
    flag: '--client-port-max-streams',
    env: 'KVLOG_CLIENT_PORT_MAX_STREAMS',
  },
  clientPortIdleTimeout: {
    key: 'clientPortIdleTimeout',
    type: 'duration',
    default: 5 * 60 * SECOND,
    min: 100,
    description:
      "An HTTP/2 connection to the etcd port with no open stream for this long is closed with GOAWAY (gRPC's max connection idle; clients reconnect when they next call).",
    flag: '--client-port-idle-timeout',
    env: 'KVLOG_CLIENT_PORT_IDLE_TIMEOUT',
  },
  clientPortUnknownProtocolTimeout: {
    key: 'clientPortUnknownProtocolTimeout',
    type: 'duration',
    default: 10 * SECOND,
    min: 100,
    description:
      "A connection to the etcd port that has not finished its TLS handshake and shown whether it speaks HTTP/2 or HTTP/1.1 within this time is closed (Node's unknownProtocolTimeout).",
    flag: '--client-port-unknown-protocol-timeout',
    env: 'KVLOG_CLIENT_PORT_UNKNOWN_PROTOCOL_TIMEOUT',
  },
  http2MaxHeaderListSize: {
    key: 'http2MaxHeaderListSize',
    type: 'bytes',
    default: 64 * KiB,
    min: KiB,
    max: 16 * MiB,
    description:
      "Largest decoded header list of one request on the etcd port (names + values + 32 bytes per field, HTTP/2's SETTINGS_MAX_HEADER_LIST_SIZE); a larger one resets its stream. Bounds what HPACK references can expand to.",
    flag: '--http2-max-header-list-size',
    env: 'KVLOG_HTTP2_MAX_HEADER_LIST_SIZE',
  },
  http2MaxHeaderListPairs: {
    key: 'http2MaxHeaderListPairs',
    type: 'integer',
    default: 128,
    min: 4,
    description: 'Most header fields in one request on the etcd port; more reset the stream.',
    flag: '--http2-max-header-list-pairs',
    env: 'KVLOG_HTTP2_MAX_HEADER_LIST_PAIRS',
  },
  http2MaxSessionMemory: {
    key: 'http2MaxSessionMemory',
    type: 'bytes',
    default: 32 * MiB,
    min: MiB,
    description:
      "Memory one HTTP/2 connection's protocol state may use (header tables, frames waiting to be sent; counted in whole megabytes); beyond it new streams are refused with ENHANCE_YOUR_CALM (Node's maxSessionMemory).",
    flag: '--http2-max-session-memory',
    env: 'KVLOG_HTTP2_MAX_SESSION_MEMORY',
  },
  http2MaxSettings: {
    key: 'http2MaxSettings',
    type: 'integer',
    default: 32,
    min: 1,
    description: 'Most entries in one SETTINGS frame from a client; more end the connection.',
    flag: '--http2-max-settings',
    env: 'KVLOG_HTTP2_MAX_SETTINGS',
  },
  http2MaxOutstandingPings: {
    key: 'http2MaxOutstandingPings',
    type: 'integer',
    default: 10,
    min: 1,
    description:
      'Unacknowledged pings the server may have sent on one connection; a client that does not read its acknowledgements is closed.',
    flag: '--http2-max-outstanding-pings',
    env: 'KVLOG_HTTP2_MAX_OUTSTANDING_PINGS',
  },
  http2MaxSessionInvalidFrames: {
    key: 'http2MaxSessionInvalidFrames',
    type: 'integer',
    default: 100,
    min: 1,
    description: 'Invalid frames one connection may send before it is closed.',
    flag: '--http2-max-session-invalid-frames',
    env: 'KVLOG_HTTP2_MAX_SESSION_INVALID_FRAMES',
  },
  http2MaxSessionRejectedStreams: {
    key: 'http2MaxSessionRejectedStreams',
    type: 'integer',
    default: 100,
    min: 1,
    description: 'Streams one connection may have refused (past maxConcurrentStreams, or reset for their headers) before it is closed.',
    flag: '--http2-max-session-rejected-streams',
    env: 'KVLOG_HTTP2_MAX_SESSION_REJECTED_STREAMS',
  },
  natsUrl: {
    key: 'natsUrl',
    type: 'string',
    default: '',
    description:
      "Cluster mode: NATS server URLs (comma-separated) of the JetStream cluster that holds the log; each member keeps a full copy in dataDir. '' = a single node.",
    flag: '--nats-url',
    env: 'KVLOG_NATS_URL',
  },
  clusterName: {
    key: 'clusterName',
    type: 'string',
    default: 'kvlog',
    nonEmpty: true,
    description:
      "Cluster mode: names the JetStream stream (KVLOG_<name>), bucket and subjects; letters, digits, - and _. A member refuses to start on a stream that is not this cluster's.",
    flag: '--cluster-name',
    env: 'KVLOG_CLUSTER_NAME',
  },
  natsReplicas: {
    key: 'natsReplicas',
    type: 'integer',
    default: 3,
    min: 1,
    max: 5,
    description: 'Cluster mode: replicas of the stream and bucket, when this member creates them (at most the number of nats-servers).',
    flag: '--nats-replicas',
    env: 'KVLOG_NATS_REPLICAS',
  },
  advertiseClientUrls: {
    key: 'advertiseClientUrls',
    type: 'string',
    default: '',
    description:
      "Cluster mode: this member's client URLs (comma-separated) as MemberList reports them; '' = the gRPC listener's host:port. Give host:port without http:// for etcdctl 3.4, which sends a listed URL whole as the HTTP/2 authority.",
    flag: '--advertise-client-urls',
    env: 'KVLOG_ADVERTISE_CLIENT_URLS',
  },
  advertisePeerUrls: {
    key: 'advertisePeerUrls',
    type: 'string',
    default: '',
    description:
      "Cluster mode: this member's peer URLs (comma-separated; etcd's --initial-advertise-peer-urls) as MemberList reports them. Members talk through NATS: the URLs only name the member, so that one registered beforehand by MemberAdd (etcdctl member add --peer-urls) joins as that member, with its id, and as a learner if it was added as one. '' = none.",
    flag: '--advertise-peer-urls',
    env: 'KVLOG_ADVERTISE_PEER_URLS',
  },
  natsCreds: {
    key: 'natsCreds',
    type: 'string',
    default: '',
    description: "Cluster mode: a NATS credentials file (JWT and nkey seed) for the connection; '' = none.",
    flag: '--nats-creds',
    env: 'KVLOG_NATS_CREDS',
  },
  natsTlsCa: {
    key: 'natsTlsCa',
    type: 'string',
    default: '',
    description: "Cluster mode: a CA file to verify the NATS servers' TLS certificates; '' = no TLS verification setup.",
    flag: '--nats-tls-ca',
    env: 'KVLOG_NATS_TLS_CA',
  },
  natsPingInterval: {
    key: 'natsPingInterval',
    type: 'duration',
    default: 500,
    min: 100,
    description:
      "Cluster mode: how often a member's NATS client pings its nats-server; with natsMaxPingsOut pings unanswered at the next one the connection is taken for dead and the client reconnects to another server (a stopped or cut-off server is noticed after natsMaxPingsOut to natsMaxPingsOut + 1 intervals).",
    flag: '--nats-ping-interval',
    env: 'KVLOG_NATS_PING_INTERVAL',
  },
  natsMaxPingsOut: {
    key: 'natsMaxPingsOut',
    type: 'integer',
    default: 2,
    min: 1,
    max: 100,
    description: "Cluster mode: unanswered pings after which a member's NATS client takes its connection for dead (see natsPingInterval).",
    flag: '--nats-max-pings-out',
    env: 'KVLOG_NATS_MAX_PINGS_OUT',
  },
  natsReconnectWait: {
    key: 'natsReconnectWait',
    type: 'duration',
    default: 250,
    min: 10,
    description: "Cluster mode: how long a member's NATS client waits before it tries a server again after a failed connection to it.",
    flag: '--nats-reconnect-wait',
    env: 'KVLOG_NATS_RECONNECT_WAIT',
  },
  leaderLease: {
    key: 'leaderLease',
    type: 'duration',
    default: 2.5 * SECOND,
    min: 300,
    description:
      'Cluster mode: a leader that has not renewed its lease for this long loses it and another member takes over (renewed every third of it; the leader itself steps down once half of it has passed without a successful renewal, and a group of writes not stored within it makes the leader step down).',
    flag: '--leader-lease',
    env: 'KVLOG_LEADER_LEASE',
  },
  natsPublishTimeout: {
    key: 'natsPublishTimeout',
    type: 'duration',
    default: 2 * SECOND,
    min: 100,
    description:
      "Cluster mode: how long the leader waits for the stream's acknowledgement of a publish before it publishes the same message again (deduplicated by its id).",
    flag: '--nats-publish-timeout',
    env: 'KVLOG_NATS_PUBLISH_TIMEOUT',
  },
  natsCallTimeout: {
    key: 'natsCallTimeout',
    type: 'duration',
    default: 2 * SECOND,
    min: 100,
    max: 2 * SECOND,
    description:
      "Cluster mode: the most any one JetStream call on the write and read path (the stream's last sequence, a message, the leader lease, a member record) waits for its answer before it is retried or given up.",
    flag: '--nats-call-timeout',
    env: 'KVLOG_NATS_CALL_TIMEOUT',
  },
  clusterTailMessages: {
    key: 'clusterTailMessages',
    type: 'integer',
    default: 10_000,
    min: 1,
    description:
      "Cluster mode: how many of the last applied stream messages each member keeps byte for byte, so a new leader can republish what the stream lost (a nats-servers' correlated power loss) and members can fill holes; the stream may lose at most this many acknowledged messages and still be refilled.",
    flag: '--cluster-tail-messages',
    env: 'KVLOG_CLUSTER_TAIL_MESSAGES',
  },
  clusterDiskReserve: {
    key: 'clusterDiskReserve',
    type: 'bytes',
    default: 64 * MiB,
    min: 0,
    description:
      "Cluster mode: the free space a member keeps on its copy's filesystem. Below it the member stops applying the log and is not ready (/readyz, etcd's health) instead of letting its copy's write fail with ENOSPC, and applies on by itself once this much is free again. 0 = no check.",
    flag: '--cluster-disk-reserve',
    env: 'KVLOG_CLUSTER_DISK_RESERVE',
  },
  clusterRequestTimeout: {
    key: 'clusterRequestTimeout',
    type: 'duration',
    default: 10 * SECOND,
    min: 100,
    description:
      'Cluster mode: how long a write may wait for a leader and its application here, or a read for this member to catch up, before UNAVAILABLE.',
    flag: '--cluster-request-timeout',
    env: 'KVLOG_CLUSTER_REQUEST_TIMEOUT',
  },
  clusterMaxGroupCommands: {
    key: 'clusterMaxGroupCommands',
    type: 'integer',
    default: 1024,
    min: 1,
    description: 'Cluster mode: at most this many write requests in one stream message (group commit on the leader).',
    flag: '--cluster-max-group-commands',
    env: 'KVLOG_CLUSTER_MAX_GROUP_COMMANDS',
  },
  clusterMaxGroupBytes: {
    key: 'clusterMaxGroupBytes',
    type: 'bytes',
    default: 512 * KiB,
    min: KiB,
    description:
      "Cluster mode: a stream message takes no more requests once it holds this many bytes (one request may exceed it; the nats-servers' max_payload must exceed maxRequestBytes).",
    flag: '--cluster-max-group-bytes',
    env: 'KVLOG_CLUSTER_MAX_GROUP_BYTES',
  },
  clusterSnapshotInterval: {
    key: 'clusterSnapshotInterval',
    type: 'integer',
    default: 10_000,
    min: 0,
    description:
      "Cluster mode: the leader stores a snapshot of its copy in the cluster's JetStream object store once this many stream messages were applied since the newest one; a new or long-absent member restores it and replays only what follows. 0 = no snapshots and the stream is never purged.",
    flag: '--cluster-snapshot-interval',
    env: 'KVLOG_CLUSTER_SNAPSHOT_INTERVAL',
  },
  clusterSnapshotKeep: {
    key: 'clusterSnapshotKeep',
    type: 'integer',
    default: 2,
    min: 1,
    description:
      'Cluster mode: how many snapshots the object store keeps (the newest); the stream is purged below the oldest kept one, never past a running member.',
    flag: '--cluster-snapshot-keep',
    env: 'KVLOG_CLUSTER_SNAPSHOT_KEEP',
  },
  clusterSnapshotCheckInterval: {
    key: 'clusterSnapshotCheckInterval',
    type: 'duration',
    default: 10 * SECOND,
    min: 100,
    description: 'Cluster mode: how often the leader checks whether a snapshot is due, and purges the stream below the kept snapshots.',
    flag: '--cluster-snapshot-check-interval',
    env: 'KVLOG_CLUSTER_SNAPSHOT_CHECK_INTERVAL',
  },
  clusterCorruptCheckInterval: {
    key: 'clusterCorruptCheckInterval',
    type: 'duration',
    default: 300 * SECOND,
    min: 0,
    description:
      "Cluster mode: how often the leader asks every member for a hash of its copy at the leader's revision (etcd's corruption check); a member whose hash differs from the majority's gets a CORRUPT alarm. 0: never.",
    flag: '--cluster-corrupt-check-interval',
    env: 'KVLOG_CLUSTER_CORRUPT_CHECK_INTERVAL',
  },
  clusterPurgeGrace: {
    key: 'clusterPurgeGrace',
    type: 'duration',
    default: 300 * SECOND,
    min: 0,
    description:
      'Cluster mode: the stream is not purged past the copy of a member seen alive this recently, so one that was paused or cut off for less catches up from the stream instead of restoring a snapshot at its next start.',
    flag: '--cluster-purge-grace',
    env: 'KVLOG_CLUSTER_PURGE_GRACE',
  },
  clusterApplyMaxAhead: {
    key: 'clusterApplyMaxAhead',
    type: 'integer',
    default: 512,
    min: 1,
    max: 100_000,
    description:
      "Cluster mode: stream messages a member hands to its copy's writer ahead of the one being applied, at most; its log consumer pulls this many at a time and waits beyond it.",
    flag: '--cluster-apply-max-ahead',
    env: 'KVLOG_CLUSTER_APPLY_MAX_AHEAD',
  },
  clusterApplyHoldMax: {
    key: 'clusterApplyHoldMax',
    type: 'integer',
    default: 64,
    min: 1,
    max: 100_000,
    description:
      'Cluster mode: delivered stream messages a member holds back, at most, while the stream already holds the next, so they reach its copy together and share one fsync (1: each is handed over as it arrives).',
    flag: '--cluster-apply-hold-max',
    env: 'KVLOG_CLUSTER_APPLY_HOLD_MAX',
  },
  clusterConsumerStallTimeout: {
    key: 'clusterConsumerStallTimeout',
    type: 'duration',
    default: 1500,
    min: 100,
    description:
      'Cluster mode: a member whose log consumer delivers nothing for this long while the stream holds more makes the consumer again (checked every third of it); the consumer is lost with the nats-server that holds it.',
    flag: '--cluster-consumer-stall-timeout',
    env: 'KVLOG_CLUSTER_CONSUMER_STALL_TIMEOUT',
  },
  clusterConsumerInactiveThreshold: {
    key: 'clusterConsumerInactiveThreshold',
    type: 'duration',
    default: 30 * SECOND,
    min: SECOND,
    description:
      "Cluster mode: the nats-server drops a member's log consumer that no client pulled from for this long (one left behind by a member that stopped or replaced it).",
    flag: '--cluster-consumer-inactive-threshold',
    env: 'KVLOG_CLUSTER_CONSUMER_INACTIVE_THRESHOLD',
  },
  clusterFillRetryInterval: {
    key: 'clusterFillRetryInterval',
    type: 'duration',
    default: SECOND,
    min: 10,
    description:
      'Cluster mode: how often a member tries again to fill a hole in the stream from the other members while one that may keep the messages does not answer.',
    flag: '--cluster-fill-retry-interval',
    env: 'KVLOG_CLUSTER_FILL_RETRY_INTERVAL',
  },
  clusterStrictReconfigCheck: {
    key: 'clusterStrictReconfigCheck',
    type: 'boolean',
    default: true,
    description:
      'Cluster mode: etcd\'s --strict-reconfig-check. MemberRemove of a live member is refused (MEMBERSHIP_UNHEALTHY, etcd\'s "unhealthy cluster") when the live members left would be fewer than the cluster needs; a member that is down may always be removed. MemberAdd of a voting member is refused while a voting member is down (MEMBERSHIP_UNHEALTHY), or when the members that have started would no longer be a majority of the voting members with it (NOT_ENOUGH_STARTED_MEMBERS, etcd\'s "not enough started members"; the same rule for MemberRemove and MemberPromote); of a learner while there is one (TOO_MANY_LEARNERS). false: no check.',
    flag: '--cluster-strict-reconfig-check',
    env: 'KVLOG_CLUSTER_STRICT_RECONFIG_CHECK',
  },
  clusterTailReplyBytes: {
    key: 'clusterTailReplyBytes',
    type: 'bytes',
    default: 256 * KiB,
    min: KiB,
    max: 64 * MiB,
    description:
      "Cluster mode: the most bytes of kept stream messages a member puts in one reply when another fills a hole or refills the stream from its kept tail (at least one message, whatever its size); keep it under the nats-servers' max_payload.",
    flag: '--cluster-tail-reply-bytes',
    env: 'KVLOG_CLUSTER_TAIL_REPLY_BYTES',
  },
  authTokenTtl: {
    key: 'authTokenTtl',
    type: 'duration',
    default: 300 * SECOND,
    min: SECOND,
    max: 24 * 3600 * SECOND,
    description:
      "An auth token (etcd's simple token) expires this long after its last use; clients then authenticate again (etcd's --auth-token-ttl).",
    flag: '--auth-token-ttl',
    env: 'KVLOG_AUTH_TOKEN_TTL',
  },
  authToken: {
    key: 'authToken',
    type: 'string',
    default: 'simple',
    description:
      "Token kind (etcd's --auth-token): 'simple' (random, kept in this process, authTokenTtl after last use), or 'jwt,sign-method=RS256,priv-key=FILE[,pub-key=FILE][,ttl=5m]' (signed, stateless, valid on every member until ttl; sign methods RS/PS/ES/HS 256/384/512; with only pub-key the server verifies but cannot issue).",
    flag: '--auth-token',
    env: 'KVLOG_AUTH_TOKEN',
  },
  authPasswordHashCost: {
    key: 'authPasswordHashCost',
    type: 'integer',
    default: 14,
    min: 10,
    max: 20,
    description:
      'Passwords are stored as scrypt hashes with N = 2^this (14: about 45 ms per hash on a 2020 core). Hashes made with another cost still verify.',
    flag: '--auth-password-hash-cost',
    env: 'KVLOG_AUTH_PASSWORD_HASH_COST',
  },
  authMaxPendingLogins: {
    key: 'authMaxPendingLogins',
    type: 'integer',
    default: 64,
    min: 1,
    max: 100_000,
    description:
      'Password checks run one at a time; this many may wait, more logins are refused at once (UNAVAILABLE) so that a flood of them cannot queue for minutes.',
    flag: '--auth-max-pending-logins',
    env: 'KVLOG_AUTH_MAX_PENDING_LOGINS',
  },
  authHashThreadNice: {
    key: 'authHashThreadNice',
    type: 'integer',
    default: 10,
    min: 0,
    max: 19,
    description:
      "The CPU priority, as a nice value, of the thread that runs the password checks beyond authHashNormalPerSecond (Linux, where each thread has its own; elsewhere it runs at the process's). 10: a thread at nice 0 sharing a core with it gets about nine tenths of that core, so a flood of logins takes little from the requests being served, while a login on a machine whose cores are busy with other work still gets a tenth of a core (at 19 it would get about a seventieth, and wait seconds). 0: the process's priority.",
    flag: '--auth-hash-thread-nice',
    env: 'KVLOG_AUTH_HASH_THREAD_NICE',
  },
  authHashNormalPerSecond: {
    key: 'authHashNormalPerSecond',
    type: 'integer',
    default: 10,
    min: 0,
    max: 1000,
    description:
      "Password checks a second that may run at the process's own CPU priority; the rest run on a second thread at authHashThreadNice, which yields to the requests being served. A flood of logins then takes at most this many checks' CPU a second from the requests being served (a check costs ~45 ms of one core at authPasswordHashCost 14), and a login still completes on a machine whose cores are busy with other work. 0: every check at authHashThreadNice.",
    flag: '--auth-hash-normal-per-second',
    env: 'KVLOG_AUTH_HASH_NORMAL_PER_SECOND',
  },
  clientCertAuth: {
    key: 'clientCertAuth',
    type: 'boolean',
    default: false,
    description:
      "With auth enabled, a request without a token is made as the user named by its verified TLS client certificate's CN (etcd's --client-cert-auth; needs tlsClientCaFile).",
    flag: '--client-cert-auth',
    env: 'KVLOG_CLIENT_CERT_AUTH',
  },
  tokenAuthFile: {
    key: 'tokenAuthFile',
    type: 'string',
    default: '',
    description:
      "Static bearer tokens in kube-apiserver's --token-auth-file CSV format (token,user,uid[,groups]); each names a kvlog user, on every door. Read at startup.",
    flag: '--token-auth-file',
    env: 'KVLOG_TOKEN_AUTH_FILE',
  },
  followEtcd: {
    key: 'followEtcd',
    type: 'string',
    default: '',
    description:
      "Mirror a running etcd (comma-separated endpoints) until cutover: an empty dataDir is first imported from it with etcd's revisions, then every etcd revision is applied as it happens; reads and watches are served, writes are refused with READ_ONLY until `kvlog import cutover`. A store that was cut over refuses to follow again. Single node only. '' = not following.",
    flag: '--follow-etcd',
    env: 'KVLOG_FOLLOW_ETCD',
  },
  followEtcdStatusInterval: {
    key: 'followEtcdStatusInterval',
    type: 'duration',
    default: 1000,
    min: 10,
    max: 60_000,
    description:
      "While following an etcd: how often its current revision is asked for, to report the mirror's lag (revisions and seconds behind) when no events arrive.",
    flag: '--follow-etcd-status-interval',
    env: 'KVLOG_FOLLOW_ETCD_STATUS_INTERVAL',
  },
  followEtcdCutoverTimeout: {
    key: 'followEtcdCutoverTimeout',
    type: 'duration',
    default: 60_000,
    min: 10,
    max: 3_600_000,
    description:
      "While following an etcd: how long a cutover waits for the mirror to reach the source's revision before it gives up (UNAVAILABLE) and goes on following; a cutover request may ask for less or more.",
    flag: '--follow-etcd-cutover-timeout',
    env: 'KVLOG_FOLLOW_ETCD_CUTOVER_TIMEOUT',
  },
  followEtcdCaFile: {
    key: 'followEtcdCaFile',
    type: 'string',
    default: '',
    description:
      "While following an etcd: the CA that signs its server certificate (etcdctl's --cacert); set, or an https:// endpoint, means TLS. '' = plain gRPC (or the system's CAs for https://).",
    flag: '--follow-etcd-ca-file',
    env: 'KVLOG_FOLLOW_ETCD_CA_FILE',
  },
  followEtcdCertFile: {
    key: 'followEtcdCertFile',
    type: 'string',
    default: '',
    description: "While following an etcd: the client certificate to present (etcdctl's --cert; needs followEtcdKeyFile). '' = none.",
    flag: '--follow-etcd-cert-file',
    env: 'KVLOG_FOLLOW_ETCD_CERT_FILE',
  },
  followEtcdKeyFile: {
    key: 'followEtcdKeyFile',
    type: 'string',
    default: '',
    description: "While following an etcd: the client certificate's private key (etcdctl's --key). '' = none.",
    flag: '--follow-etcd-key-file',
    env: 'KVLOG_FOLLOW_ETCD_KEY_FILE',
  },
  followEtcdUser: {
    key: 'followEtcdUser',
    type: 'string',
    default: '',
    description:
      "While following an etcd with auth enabled: NAME:PASSWORD of a user that may read every key and list leases (etcdctl's --user; root in practice). '' = no auth.",
    flag: '--follow-etcd-user',
    env: 'KVLOG_FOLLOW_ETCD_USER',
  },
  maxTxnTotalOps: {
    key: 'maxTxnTotalOps',
    type: 'integer',
    default: 1024,
    min: 1,
    max: 1_000_000,
    description:
      'Most compares and ops in one transaction counted across every nested transaction and both branches (TOO_MANY_OPS), checked before it runs; maxTxnOps bounds each branch alone.',
    flag: '--max-txn-total-ops',
    env: 'KVLOG_MAX_TXN_TOTAL_OPS',
  },
  maxJsonDepth: {
    key: 'maxJsonDepth',
    type: 'integer',
    default: 512,
    min: 8,
    max: 4096,
    description:
      'Deepest nesting of arrays and objects in a JSON request body or a JSON object written through the resource API (JSON_TOO_DEEP).',
    flag: '--max-json-depth',
    env: 'KVLOG_MAX_JSON_DEPTH',
  },
  authorAgentMaxChars: {
    key: 'authorAgentMaxChars',
    type: 'integer',
    default: 64,
    min: 0,
    max: 1024,
    description:
      "A write made without a user (auth off) records the client's agent in its author: through the HTTP doors its User-Agent (else its address), through the etcd door its gRPC user-agent; cut to this many characters; 0 records none.",
    flag: '--author-agent-max-chars',
    env: 'KVLOG_AUTHOR_AGENT_MAX_CHARS',
  },
  cors: {
    key: 'cors',
    type: 'string',
    default: '',
    description:
      "Origins (scheme://host[:port], comma-separated) whose web pages may open the WebSocket watch or send writes to the HTTP API and the JSON gateway (FORBIDDEN_ORIGIN for others); '*' = any. '' = same origin only. Requests without an Origin header (etcdctl, kubectl, curl) are not affected.",
    flag: '--cors',
    env: 'KVLOG_CORS',
  },
  hostWhitelist: {
    key: 'hostWhitelist',
    type: 'string',
    default: '',
    description:
      "Host header values (comma-separated names, no port) the HTTP listener and the JSON gateway answer (FORBIDDEN_HOST for others); '*' = any. '' = on a loopback listener only localhost, 127.0.0.1 and [::1] (no DNS rebinding), on any other listener any host.",
    flag: '--host-whitelist',
    env: 'KVLOG_HOST_WHITELIST',
  },
  loginMaxFailuresPerSource: {
    key: 'loginMaxFailuresPerSource',
    type: 'integer',
    default: 10,
    min: 1,
    max: 1_000_000,
    description:
      'Failed logins from one client address within loginFailureWindow after which its logins are refused (TOO_MANY_ATTEMPTS) until the window ends; other addresses are not affected.',
    flag: '--login-max-failures-per-source',
    env: 'KVLOG_LOGIN_MAX_FAILURES_PER_SOURCE',
  },
  loginMaxFailuresPerUser: {
    key: 'loginMaxFailuresPerUser',
    type: 'integer',
    default: 20,
    min: 1,
    max: 1_000_000,
    description:
      'Failed logins as one user within loginFailureWindow after which that user may log in only from addresses with no failed login in the window (TOO_MANY_ATTEMPTS for the others).',
    flag: '--login-max-failures-per-user',
    env: 'KVLOG_LOGIN_MAX_FAILURES_PER_USER',
  },
  loginMaxPendingPerSource: {
    key: 'loginMaxPendingPerSource',
    type: 'integer',
    default: 4,
    min: 1,
    max: 10_000,
    description:
      'Password checks under way at once for one client address; more wait their turn, so one address cannot fill the queue of authMaxPendingLogins. Addresses with a failed login in the window share a single check at a time.',
    flag: '--login-max-pending-per-source',
    env: 'KVLOG_LOGIN_MAX_PENDING_PER_SOURCE',
  },
  loginFailureWindow: {
    key: 'loginFailureWindow',
    type: 'duration',
    default: 60 * SECOND,
    min: 100,
    max: 24 * 3600 * SECOND,
    description: 'How long a failed login counts toward loginMaxFailuresPerSource and loginMaxFailuresPerUser.',
    flag: '--login-failure-window',
    env: 'KVLOG_LOGIN_FAILURE_WINDOW',
  },
}

/** Every setting, in table order. */
export const SETTINGS: readonly Setting[] = Object.values(SCHEMA)

/** Every setting's key, in table order. */
export const SETTING_KEYS: readonly (keyof Config)[] = SETTINGS.map((s) => s.key)

function defaults(): Config {
  const config: Record<string, unknown> = {}
  for (const setting of SETTINGS) config[setting.key] = setting.default
  return config as unknown as Config
}

/** The configuration with nothing set. Frozen: copy it (`{ ...DEFAULT_CONFIG }`) to change values. */
export const DEFAULT_CONFIG: Readonly<Config> = Object.freeze(defaults())
