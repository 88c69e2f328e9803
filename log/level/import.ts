/**
 * Writing a store whose revisions were assigned elsewhere (an import from etcd: apiserver/etcd-follow/import-etcd.ts). It works
 * offline, on a new directory that no LevelLog has open, and leaves the same records the engine writes
 * itself, so the store then opens and behaves like any other (reads, history, watches, compaction, writes).
 *
 *   StoreImport.create(dir, { floor })   the store starts at base = max(floor, 1), compacted at `floor`
 *   addBase(kvs)                         the keys live at base, with their own revisions (any number of calls)
 *   append(revision, timestamp, writes)  one entry, at exactly base + 1, then + 2, ... (gapless), with its author
 *   putMeta(name, value)                 a readMeta/writeMeta record (auth, cursors, ...), as writeMeta stores it
 *   finish(leases)                       leases with their deadlines; everything synced; the store is closed
 *
 * The base state is below the floor, so no log entry holds it: each base key gets its kv record and a
 * MATERIALIZED hist record (the version itself, records.ts), which is how the engine keeps a version whose
 * entry is gone. An empty entry at base (when base > 1) makes the store's revision base before the first
 * append: the open takes the revision from the last entry, and an empty entry has no events, so history
 * starts at base + 1. Appended entries go through the writer's own appendEntry, the lease attachment index
 * through the lease table's track, and the segment table counts every entry, as a commit does.
 *
 * Batches are written without fsync and the last one with it: the caller builds the store in a temporary
 * directory and renames it into place only after finish(), so an interrupted import leaves nothing usable
 * behind to trust.
 */
import { ClassicLevel } from './classic-level.js'
import { KvlogError } from '../errors.js'
import { OP_PUT, type LoggedOp } from '../ops.js'
import type { Author, KeyValue, Segment } from '../types.js'
import { compactStateRecord } from './compaction/compactor.js'
import { histKey, kvKey, logKey, metaKey } from './keyspace.js'
import type { Db } from './latest-view.js'
import { LeaseTable } from './leases.js'
import { META_EXT_PREFIX, packr } from './meta-store.js'
import { DEFAULT_LEVEL_LOG_OPTIONS, type LevelLogSettings } from './options.js'
import { encodeEntry, encodeKvRecord, encodeMaterialized } from './records.js'
import { SegmentTable, writeBatch, type BatchOp } from './segments.js'
import { appendEntry } from './writer.js'
import { leveldbOptions } from './level-log.js'

/** One write of an imported revision: the logged op and the version it replaced (prevKv), if any. */
export interface ImportedWrite {
  op: LoggedOp
  prevKv?: KeyValue
}

export interface ImportedLease {
  id: bigint
  /** The TTL it was granted with, in seconds. */
  ttl: number
  /** When it expires, wall-clock milliseconds. */
  deadline: number
}

/** Write a batch once it holds about this many bytes. */
const BATCH_BYTES = 4 * 1024 * 1024

type ImportSettings = Pick<
  LevelLogSettings,
  'segmentMaxEntries' | 'segmentMaxBytes' | 'leveldbWriteBufferSize' | 'leveldbCacheSize' | 'leveldbMaxFileSize'
>

export class StoreImport {
  private batch: BatchOp[] = []
  private batchBytes = 0
  private readonly segmentWrites = new Map<number, Segment>()
  private head: number
  private lastTimestamp = 0
  private appended = false

  private constructor(
    private readonly db: Db,
    readonly floor: number,
    private readonly segments: SegmentTable,
    private readonly leases: LeaseTable,
  ) {
    this.head = Math.max(floor, 1)
  }

  get revision(): number {
    return this.head
  }

  /**
   * Opens a new store in `dir` (which must be missing or empty) compacted at `floor` (0 = never
   * compacted: the store starts empty at revision 1).
   */
  static async create(dir: string, o: { floor: number; timestamp: number; settings?: Partial<ImportSettings> }): Promise<StoreImport> {
    if (!Number.isSafeInteger(o.floor) || o.floor < 0)
      throw new KvlogError('INVALID_ARGUMENT', `import: bad floor ${o.floor}`, { field: 'floor' })
    const settings = { ...DEFAULT_LEVEL_LOG_OPTIONS, ...o.settings }
    // Batches go unsynced until the last (an interrupted import is not used), so the log is appended as
    // LevelDB does: preallocation is for logs whose every write is synced (leveldbOptions).
    const leveldb = leveldbOptions({ ...settings, leveldbWalPreallocateBytes: 0 })
    const db: Db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer', ...leveldb })
    await db.open()
    const found = await db.keys({ limit: 1 }).all()
    if (found.length > 0) {
      await db.close()
      throw new KvlogError('INVALID_ARGUMENT', `import: ${dir} already holds a store`, { field: 'dataDir' })
    }
    const store = new StoreImport(db, o.floor, new SegmentTable(settings.segmentMaxEntries, settings.segmentMaxBytes), new LeaseTable(1))
    if (o.floor > 0) store.push(compactStateRecord(o.floor))
    if (store.head > 1) store.entry(store.head, o.timestamp, [], [])
    return store
  }

  /** Adds keys live at the base revision (each at most once over all calls), with their own revisions. */
  async addBase(kvs: readonly KeyValue[]): Promise<void> {
    if (this.appended) throw new KvlogError('INVALID_ARGUMENT', 'import: the base state comes before the history')
    for (const kv of kvs) {
      if (kv.modRevision > this.head || kv.createRevision > kv.modRevision || kv.createRevision < 1 || kv.version < 1) {
        throw new KvlogError(
          'INVALID_ARGUMENT',
          `import: key ${JSON.stringify(kv.key.toString('latin1'))} has revisions inconsistent with base ${this.head}`,
        )
      }
      const record = encodeKvRecord(kv)
      this.push({ type: 'put', key: kvKey(kv.key), value: record })
      this.push({ type: 'put', key: histKey(kv.key, kv.modRevision), value: encodeMaterialized(kv) })
      if (kv.lease !== 0n) {
        const ops: BatchOp[] = []
        this.leases.track(
          [
            {
              kind: OP_PUT,
              key: kv.key,
              value: kv.value,
              createRevision: kv.createRevision,
              version: kv.version,
              lease: kv.lease,
              prevRevision: 0,
            },
          ],
          ops,
        )
        for (const op of ops) this.push(op)
      }
    }
    await this.flushIfFull()
  }

  /** Appends the entry at exactly the next revision. Timestamps never go backwards (a lower one is raised). */
  async append(revision: number, timestamp: number, writes: readonly ImportedWrite[], author?: Author): Promise<void> {
    if (revision !== this.head + 1) {
      throw new KvlogError('INVALID_ARGUMENT', `import: revision ${revision} does not follow ${this.head} (revisions are gapless)`, {
        field: 'revision',
      })
    }
    if (writes.length === 0) throw new KvlogError('INVALID_ARGUMENT', `import: revision ${revision} has no writes`, { field: 'revision' })
    this.appended = true
    this.entry(
      revision,
      timestamp,
      writes.map((w) => w.op),
      writes.map((w) => ({ prevKv: w.prevKv })),
      author,
    )
    await this.flushIfFull()
  }

  /** A record as Log.writeMeta(name, value) leaves it (readMeta answers it once the store is open). */
  putMeta(name: string, value: unknown): void {
    this.push({ type: 'put', key: metaKey(META_EXT_PREFIX + name), value: packr.pack(value) })
  }

  /** Writes the leases and the rest, synced, and closes the store. */
  async finish(leases: readonly ImportedLease[]): Promise<void> {
    for (const lease of leases) this.push(this.leases.put(lease.id, lease.ttl, lease.deadline))
    await this.flush(true)
    await this.db.close()
  }

  /** Closes without finishing (after a failure: the caller removes the directory). */
  async abandon(): Promise<void> {
    if (this.db.status === 'open') await this.db.close()
  }

  private entry(revision: number, timestamp: number, ops: LoggedOp[], events: Array<{ prevKv?: KeyValue }>, author?: Author): void {
    this.lastTimestamp = Math.max(this.lastTimestamp, timestamp)
    const start = this.batch.length
    const bytes =
      ops.length === 0
        ? this.pushEntry(revision, encodeEntry({ timestamp: this.lastTimestamp, ops }))
        : appendEntry(this.batch, revision, this.lastTimestamp, { ops, events }, this.floor, author)
    this.leases.track(ops, this.batch)
    for (let i = start; i < this.batch.length; i++) {
      const op = this.batch[i]
      this.batchBytes += op.key.length + (op.type === 'put' ? op.value.length : 0)
    }
    this.segments.append(revision, this.lastTimestamp, bytes, this.segmentWrites)
    this.head = revision
  }

  private pushEntry(revision: number, encoded: Buffer): number {
    this.batch.push({ type: 'put', key: logKey(revision), value: encoded })
    return encoded.length
  }

  private push(op: BatchOp): void {
    this.batch.push(op)
    this.batchBytes += op.key.length + (op.type === 'put' ? op.value.length : 0)
  }

  private async flushIfFull(): Promise<void> {
    if (this.batchBytes >= BATCH_BYTES) await this.flush(false)
  }

  private async flush(sync: boolean): Promise<void> {
    for (const segment of this.segmentWrites.values()) this.batch.push(SegmentTable.write(segment))
    this.segmentWrites.clear()
    const ops = this.batch
    this.batch = []
    this.batchBytes = 0
    if (ops.length > 0 || sync) await writeBatch(this.db, ops, sync)
  }
}

/**
 * Every readMeta/writeMeta record of the store in `dir` (closed: no LevelLog may have it open), for copying
 * into a store built with StoreImport.
 */
export async function readMetaRecords(dir: string): Promise<Array<[name: string, value: unknown]>> {
  const db: Db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer', createIfMissing: false })
  await db.open()
  try {
    const start = metaKey(META_EXT_PREFIX)
    const end = Buffer.concat([start.subarray(0, -1), Buffer.from([start[start.length - 1] + 1])])
    const out: Array<[string, unknown]> = []
    for await (const [key, value] of db.iterator({ gte: start, lt: end }))
      out.push([key.subarray(start.length).toString('ascii'), packr.unpack(value)])
    return out
  } finally {
    await db.close()
  }
}
