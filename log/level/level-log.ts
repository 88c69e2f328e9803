/**
 * LevelLog: the Log on one LevelDB database (classic-level). It owns the database and wires the parts:
 * writer.ts (group commit), latest-view.ts / hist-view.ts (reads), history-read.ts, compaction/ (compactor.ts),
 * segments.ts. Keyspace layout: keyspace.ts.
 *
 * Open = recovery: the current revision is the key of the last log entry (entries are written in the same
 * batch as everything they change, so the durable state is always a prefix of acknowledged batches);
 * nothing is replayed. An interrupted compaction resumes in the background.
 */
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { ClassicLevel } from './classic-level.js'
import type { AlarmKind, DeleteOptions, DeleteResponse, PutOptions, PutResponse } from '../backend.js'
import type { Replica, ReplicaRecord, ReplicatedResult, ReplicatedWrite } from '../replica.js'
import { Compactor, compactionBatchSize } from './compaction/compactor.js'
import { CompactionThread } from './compaction/compact-thread.js'
import { compacted, futureRevision, KvlogError } from '../errors.js'
import { checkMetaCondition, type MetaCondition } from '../meta-condition.js'
import { readHistory } from './history-read.js'
import { HistView } from './hist-view.js'
import { LOG_END, LOG_START, logKey, logKeyRevision, metaKey } from './keyspace.js'
import { LeaseTable } from './leases.js'
import { type LeaseGrant, type LeaseTimeToLive } from '../types.js'
import { MetaStore, META_EXT_PREFIX, packr } from './meta-store.js'
import { LatestView, syncGetOptions, type Db } from './latest-view.js'
import { DEFAULT_LEVEL_LOG_OPTIONS, type LevelLogOptions } from './options.js'
import { PageCounts } from '../page-counts.js'
import { rangeRead, rangeReadInto } from '../range-read.js'
import { compactRangeBetweenFlushes } from './io/range-compaction.js'
import { ReadViews, type ReadView } from './read-views.js'
import { decodeEntry } from './records.js'
import { DeferredDeletes } from './io/deferred-deletes.js'
import { dataFileBytes } from './io/data-size.js'
import { TableWriteback } from './io/table-writeback.js'
import { inlineWrite } from './io/inline-write.js'
import { SegmentTable } from './segments.js'
import { snapshotChunks } from './snapshot.js'
import { type SnapshotStream } from '../types.js'
import type { Bounds } from '../keys.js'
import type { StateView } from '../state-view.js'
import type {
  BytesLike,
  CommitListener,
  CompactResult,
  HistoryOptions,
  HistoryResult,
  KeyValue,
  KvSink,
  LogStatus,
  RangeOptions,
  RangeResult,
  RangeSummary,
  TxnRequest,
  TxnResult,
} from '../types.js'
import {
  canPut,
  checkLeaseId,
  canWrite,
  checkRevision,
  normalizeBounds,
  normalizeRangeOptions,
  normalizePut,
  normalizeTxn,
  type Limits,
  type NRangeOptions,
  type NTxn,
} from '../validate.js'
import { deleteResponse, oneOpTxn, putResponse } from '../write-results.js'
import { Writer, type PlannedTxn, type WriterStats } from './writer.js'
import type { BatchOp } from './segments.js'
import { OverlayView } from '../state-view.js'
import { evaluateTxn } from '../txn-eval.js'

const NO_OPS: NTxn = { type: 'txn', compare: [], success: [], failure: [] }

const FORMAT_VERSION = 1

/**
 * Request limits lifted for writes whose size and shape were decided elsewhere (a lease's keys, a mirrored
 * revision, a cluster write its submitter checked), so every copy reaches the submitter's verdict.
 */
function unlimited(limits: Limits): Limits {
  return { ...limits, maxTxnOps: Infinity, maxTxnTotalOps: Infinity, maxRequestBytes: Infinity, maxTxnDepth: Infinity }
}

/**
 * LevelDB tuning, shared with bench/store.bench.ts's raw baseline so both write the same way.
 * - The write buffer, cache and table file sizes are settings (leveldbWriteBufferSize, leveldbCacheSize,
 *   leveldbMaxFileSize); the default write buffer is 8x LevelDB's: fewer, larger level-0 files under a
 *   steady write load.
 * - No snappy: on a 2-core machine LevelDB's compaction thread competes with the writer for CPU, and
 *   compressing makes durable batches slower (etcd's bbolt does not compress either).
 * - 8 MiB table files (LevelDB's default 2 MiB): fewer, larger compactions, and more durable puts/s in
 *   bench:store, the raw baseline moving alike (docs/benchmarks.md).
 * - The write-ahead log allocated ahead of its writes (leveldbWalPreallocateBytes; classic-level as built
 *   by log/level/native/), only when every write is synced: then a crash can tear only the last write,
 *   while unsynced writes into allocated space could reach the disk out of order.
 * - Not here, because they work from outside LevelDB (and so the raw baseline does without them): table
 *   files synced while LevelDB writes them (tableSyncInterval, table-writeback.ts) and file deletes taken
 *   off its lock (deferFileDeletes, deferred-deletes.ts).
 */
export function leveldbOptions(
  o: Pick<LevelLogOptions, 'leveldbWriteBufferSize' | 'leveldbCacheSize' | 'leveldbMaxFileSize' | 'leveldbWalPreallocateBytes' | 'fsync'>,
) {
  return {
    writeBufferSize: o.leveldbWriteBufferSize,
    cacheSize: o.leveldbCacheSize,
    compression: false,
    maxFileSize: o.leveldbMaxFileSize,
    walPreallocateBytes: o.fsync === 'always' ? o.leveldbWalPreallocateBytes : 0,
  } as const
}
const FORMAT_KEY = metaKey('format')
/**
 * A missing data directory is made 0700 (LevelDB would make it 0755 under the usual umask): the store
 * holds every value, secrets and password hashes included. A failure is left for LevelDB's open to report.
 */
function makePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
  } catch {
    // reported by db.open()
  }
}

/** Directories of the logs open in this process (resolved paths). */
const openDirs = new Set<string>()

export async function openLevelLog(options: Partial<LevelLogOptions> & { dir: string }): Promise<LevelLog> {
  const o: LevelLogOptions = { ...DEFAULT_LEVEL_LOG_OPTIONS, ...options }
  // Checked before the database is made: abstract-level opens it on the next tick by itself.
  const dir = resolve(o.dir)
  if (openDirs.has(dir)) throw new KvlogError('INTERNAL', `database ${dir} is already open in this process`)
  makePrivateDir(dir)
  const db: Db = new ClassicLevel<Buffer, Buffer>(o.dir, {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    ...leveldbOptions(o),
    // Shares LevelDB's handle with the compaction thread (compact-thread.ts). It would also let a second
    // open of the same directory in this process share it, which openDirs refuses.
    multithreading: o.compactionThread,
  })
  openDirs.add(dir)
  try {
    await db.open()
  } catch (err) {
    openDirs.delete(dir)
    throw err
  }
  const deletes = o.deferFileDeletes ? await DeferredDeletes.start(o.dir, o.fileDeleteBytesPerSecond) : undefined
  const writeback = TableWriteback.start(o.dir, o.tableSyncInterval)
  try {
    await checkFormat(db)
    const segments = await SegmentTable.load(db, o.segmentMaxEntries, o.segmentMaxBytes)
    const { revision, timestamp } = await lastEntry(db)
    return await LevelLog.start(db, o, segments, revision, timestamp, deletes, writeback)
  } catch (err) {
    await db.close()
    openDirs.delete(dir)
    await deletes?.close()
    await writeback?.close()
    throw err
  }
}

async function checkFormat(db: Db): Promise<void> {
  const found = await db.get(FORMAT_KEY)
  if (found === undefined) {
    await db.put(FORMAT_KEY, Buffer.from(String(FORMAT_VERSION)), { sync: true })
  } else if (Number(found.toString()) !== FORMAT_VERSION) {
    throw new KvlogError('INTERNAL', `data format version ${found.toString()} is not supported (want ${FORMAT_VERSION})`)
  }
}

async function lastEntry(db: Db): Promise<{ revision: number; timestamp: number }> {
  const last = await db.iterator({ gte: LOG_START, lt: LOG_END, reverse: true, limit: 1 }).all()
  if (last.length === 0) return { revision: 1, timestamp: 0 }
  return { revision: logKeyRevision(last[0][0]), timestamp: decodeEntry(last[0][1]).timestamp }
}

export class LevelLog implements Replica {
  private closed = false
  private resumed: Promise<CompactResult> | undefined
  private leaseTimer: NodeJS.Timeout | undefined
  /** Leases being revoked for expiry, so a slow revoke is not queued twice. */
  private readonly expiring = new Set<bigint>()
  private readonly metaListeners = new Set<(name: string, value: unknown) => void>()
  private metaTurn: Promise<void> = Promise.resolve()
  /** The counts of the rest of paged ranges, for their next pages (page-counts.ts). */
  private readonly pageCounts: PageCounts

  private constructor(
    private readonly db: Db,
    private readonly options: LevelLogOptions,
    private readonly views: ReadViews,
    private readonly segments: SegmentTable,
    private readonly writer: Writer,
    private readonly compactor: Compactor,
    private readonly meta: MetaStore,
    private readonly leaseTable: LeaseTable,
    /** Frees the files LevelDB deletes off its lock (deferred-deletes.ts); undefined when off. */
    readonly deletes: DeferredDeletes | undefined,
    /** Syncs the table files LevelDB is writing, a piece at a time (table-writeback.ts); undefined when off. */
    readonly writeback: TableWriteback | undefined,
  ) {
    this.pageCounts = new PageCounts(options.rangePageCounts)
  }

  static async start(
    db: Db,
    o: LevelLogOptions,
    segments: SegmentTable,
    revision: number,
    timestamp: number,
    deletes: DeferredDeletes | undefined,
    writeback: TableWriteback | undefined,
  ): Promise<LevelLog> {
    const views = new ReadViews(db, revision)
    // The writer checks the floor through the compactor, which writes through the writer.
    const late: { compactor?: Compactor } = {}
    const leases = new LeaseTable(o.leaseMinTtl)
    await leases.load(db)
    const writer = new Writer({
      db,
      views,
      segments,
      sync: o.fsync === 'always',
      maxBatchTxns: o.maxBatchTxns,
      inlineWriteMaxTxns: o.inlineWriteMaxTxns,
      writeInline: inlineWrite(db),
      compactRevision: () => late.compactor?.floor ?? 0,
      leaseExists: (id) => leases.has(id),
      track: (ops, batch) => leases.track(ops, batch),
      lastTimestamp: timestamp,
    })
    const thread = o.compactionThread ? new CompactionThread(o.dir, o.compactionThreadNice) : undefined
    const compactor = new Compactor({
      db,
      writer,
      segments,
      maxDutyPercent: o.compactionMaxDutyPercent,
      batchesPerRead: o.compactionBatchesPerRead,
      batchRevisions: () => compactionBatchSize(writer.stats.recentGroupTxns, o.compactionMinBatchRevisions, o.compactionBatchRevisions),
      compactsRange: o.compactionCompactsRange,
      method: o.compactionMethod,
      readersDone: () => views.released(),
      compactRange: (start, end) => compactRangeBetweenFlushes(db, o.dir, start, end),
      filesFreed: async () => deletes?.drained(),
      currentRevision: () => views.revision,
      thread,
    })
    late.compactor = compactor
    await compactor.load()
    const meta = new MetaStore(db, writer)
    await meta.load()
    const log = new LevelLog(db, o, views, segments, writer, compactor, meta, leases, deletes, writeback)
    // Started once nothing can fail any more (close() ends it): see CompactionThread.warm.
    thread?.warm()
    log.resumed = compactor.resume()
    log.resumed?.catch(() => undefined)
    // 0: the store never expires leases itself (a replica whose leases are expired through its log).
    if (o.leaseCheckInterval > 0) log.expireLeases(o.leaseCheckInterval)
    return log
  }

  /**
   * Starts revoking expired leases every `interval` ms (a store opened with leaseCheckInterval 0 that
   * starts owning its leases, e.g. a mirror of etcd at cutover). Does nothing if it already does.
   */
  expireLeases(interval: number): void {
    if (this.leaseTimer !== undefined || this.closed) return
    this.leaseTimer = setInterval(() => this.revokeExpired(), interval)
    this.leaseTimer.unref()
  }

  get revision(): number {
    return this.views.revision
  }

  get compactRevision(): number {
    return this.compactor.floor
  }

  get writerStats(): WriterStats {
    return { ...this.writer.stats }
  }

  /** The request limits this log validates with (the cluster engine checks requests before sending them). */
  get limits(): Limits {
    return this.options
  }

  /** Under the NOSPACE alarm, writes that add data (any put) are refused; reads and deletes go on. */
  private refuseIfNoSpace(addsData: boolean): void {
    if (addsData && this.meta.hasAlarm('NOSPACE')) {
      throw new KvlogError('NO_SPACE', 'database space exceeded: only reads and deletes are accepted until space is freed')
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new KvlogError('CLOSED', 'the store is closed')
  }

  // -------------------------------------------------------------------------------------------------------
  // Writes

  async txn(request: TxnRequest): Promise<TxnResult> {
    this.checkOpen()
    const txn = normalizeTxn(request, this.limits)
    this.refuseIfNoSpace(canPut(txn.success) || canPut(txn.failure))
    if (canWrite(txn.success) || canWrite(txn.failure)) return this.writer.submit(txn)
    // Read-only: evaluated on the current snapshot, never queued behind writes, gets no revision.
    return this.withView(async (view) => {
      const ctx = {
        view: new OverlayView(new LatestView(this.db, view.snapshot)),
        revision: view.revision + 1,
        readAt: (rev: number) => this.stateAt(view, rev),
        leaseExists: () => false,
        ops: [],
        events: [],
      }
      const { succeeded, results } = await evaluateTxn(txn, ctx)
      return { succeeded, results, revision: view.revision, wrote: false }
    })
  }

  async put(key: BytesLike, value: BytesLike, options: PutOptions = {}): Promise<PutResponse> {
    this.checkOpen()
    const txn = normalizePut(key, value, options as Record<string, unknown>, this.limits)
    this.refuseIfNoSpace(true)
    const r = await this.writer.submit(txn)
    return putResponse(r)
  }

  async delete(key: BytesLike, options: DeleteOptions = {}): Promise<DeleteResponse> {
    return deleteResponse(await this.txn(oneOpTxn(options, (op) => ({ type: 'delete', key, ...op }))))
  }

  // -------------------------------------------------------------------------------------------------------
  // Reads

  async get(key: BytesLike, options: { revision?: number } = {}): Promise<KeyValue | undefined> {
    const r = await this.range(key, { revision: options.revision })
    return r.kvs[0]
  }

  range(key: BytesLike, options: RangeOptions = {}): Promise<RangeResult> {
    return this.readRange(key, options, (state, bounds, o, rev) => rangeRead(state, bounds, o, rev, this.pageCounts))
  }

  rangeInto(key: BytesLike, options: RangeOptions = {}, sink: KvSink): Promise<RangeSummary> {
    return this.readRange(key, options, (state, bounds, o, rev) => rangeReadInto(state, bounds, o, rev, sink, this.pageCounts))
  }

  private async readRange<T>(
    key: BytesLike,
    options: RangeOptions,
    read: (state: StateView, bounds: Bounds, o: NRangeOptions, rev: number) => Promise<T>,
  ): Promise<T> {
    this.checkOpen()
    const o = normalizeRangeOptions(options)
    const bounds = normalizeBounds(key, options.rangeEnd, 'range')
    return this.withView((view) => {
      const rev = o.revision === 0 ? view.revision : o.revision
      return read(this.stateAt(view, rev), bounds, o, rev)
    })
  }

  async history(key: BytesLike, options: HistoryOptions = {}): Promise<HistoryResult> {
    this.checkOpen()
    const bounds = normalizeBounds(key, options.rangeEnd, 'history')
    const from = checkRevision(options.fromRevision, 'history.fromRevision')
    const to = checkRevision(options.toRevision, 'history.toRevision')
    const limit = checkRevision(options.limit, 'history.limit')
    return this.withView(async (view) => {
      const floor = this.compactor.floor
      const start = from === 0 ? Math.max(floor, 1) : from
      const end = to === 0 ? view.revision : to
      if (start < floor) throw compacted(start, floor, view.revision)
      if (end > view.revision) throw futureRevision(end, view.revision)
      const r = await readHistory(this.db, view.snapshot, { bounds, from: start, to: end, limit, prevKv: options.prevKv === true })
      return { ...r, revision: view.revision, compactRevision: floor }
    })
  }

  /** The state at `rev` in this view: checks the floor after the view was taken (see compactor.ts). */
  private stateAt(view: ReadView, rev: number): StateView {
    if (rev > view.revision) throw futureRevision(rev, view.revision)
    const floor = this.compactor.floor
    if (rev < floor) throw compacted(rev, floor, view.revision)
    return rev === view.revision ? new LatestView(this.db, view.snapshot) : new HistView(this.db, view.snapshot, rev)
  }

  private async withView<T>(read: (view: ReadView) => Promise<T>): Promise<T> {
    const view = this.views.acquire()
    try {
      return await read(view)
    } finally {
      this.views.release(view)
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Leases (leases.ts)

  async leaseGrant(ttl: number, id: bigint = 0n): Promise<LeaseGrant> {
    this.checkOpen()
    this.refuseIfNoSpace(true)
    const grant = this.leaseTable.planGrant(ttl, checkLeaseId(id, 'id'))
    await this.writer.submitRaw(() => {
      // Checked again at its turn: a concurrent grant may have taken a client-chosen id meanwhile.
      if (this.leaseTable.has(grant.id)) throw new KvlogError('LEASE_EXISTS', `lease ${grant.id} already exists`)
      return [this.leaseTable.put(grant.id, grant.ttl, Date.now() + grant.ttl * 1000)]
    })
    return grant
  }

  async leaseRevoke(id: bigint): Promise<{ revision: number }> {
    this.checkOpen()
    const lease = checkLeaseId(id, 'id')
    const limits = unlimited(this.limits)
    const r = await this.writer.submit(() => {
      const { keys, records } = this.leaseTable.revoke(lease)
      const txn = normalizeTxn({ success: keys.map((key) => ({ type: 'delete' as const, key })) }, limits)
      return { txn, records }
    })
    return { revision: r.revision }
  }

  async leaseKeepAlive(id: bigint): Promise<LeaseGrant> {
    this.checkOpen()
    const lease = checkLeaseId(id, 'id')
    let ttl = 0
    await this.writer.submitRaw(() => {
      const granted = this.leaseTable.grantedTtl(lease)
      if (granted === undefined) throw new KvlogError('LEASE_NOT_FOUND', `requested lease not found: ${lease}`, { lease: lease.toString() })
      ttl = granted
      return [this.leaseTable.put(lease, granted, Date.now() + granted * 1000)]
    })
    return { id: lease, ttl }
  }

  leaseTimeToLive(id: bigint, options: { keys?: boolean } = {}): LeaseTimeToLive | undefined {
    this.checkOpen()
    return this.leaseTable.timeToLive(checkLeaseId(id, 'id'), options.keys === true, Date.now())
  }

  leases(): bigint[] {
    this.checkOpen()
    return this.leaseTable.ids()
  }

  /** Revokes every lease past its deadline, each in its own revision (as etcd does). */
  private revokeExpired(): void {
    if (this.closed) return
    for (const id of this.leaseTable.expired(Date.now())) {
      if (this.expiring.has(id)) continue
      this.expiring.add(id)
      this.leaseRevoke(id)
        .catch(() => undefined) // gone meanwhile (revoked by hand), or the store is closing
        .finally(() => this.expiring.delete(id))
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // The replication contract (../replica.ts): log/jetstream/ and the etcd follower apply to this copy

  /**
   * Replica.applyReplicated (../replica.ts): one writer group whose entries carry `timestamp`, the marker
   * records written as raw ops of its batch; lease records ride as transactions without ops.
   */
  async applyReplicated(
    timestamp: number,
    writes: readonly ReplicatedWrite[],
    marker: ReplicaRecord | readonly ReplicaRecord[],
    sync = true,
  ): Promise<Array<PromiseSettledResult<ReplicatedResult>>> {
    this.checkOpen()
    const txns: Array<NTxn | (() => PlannedTxn)> = []
    const raws: Array<() => BatchOp[]> = []
    const results: Array<() => Promise<ReplicatedResult>> = []
    const failNow = (err: unknown) => results.push(() => Promise.reject(err))
    for (const w of writes) {
      try {
        if (w.type === 'txn') {
          const txn = normalizeTxn(w.request, w.unlimited === true ? unlimited(this.limits) : this.limits)
          this.refuseIfNoSpace(canPut(txn.success) || canPut(txn.failure))
          const i = txns.push(txn) - 1
          results.push(() => out.txns[i])
        } else if (w.type === 'leaseGrant') {
          this.refuseIfNoSpace(true)
          const grant = this.leaseTable.planGrant(w.ttl, checkLeaseId(w.id, 'id'))
          // Lease records ride as transactions without ops, so every write is evaluated in message order.
          const i =
            txns.push(() => {
              if (this.leaseTable.has(grant.id)) throw new KvlogError('LEASE_EXISTS', `lease ${grant.id} already exists`)
              return { txn: NO_OPS, records: [this.leaseTable.put(grant.id, grant.ttl, timestamp + grant.ttl * 1000)] }
            }) - 1
          results.push(() => out.txns[i].then(() => grant))
        } else if (w.type === 'leaseKeepAlive') {
          const lease = checkLeaseId(w.id, 'id')
          let ttl = 0
          const i =
            txns.push(() => {
              const granted = this.leaseTable.grantedTtl(lease)
              if (granted === undefined)
                throw new KvlogError('LEASE_NOT_FOUND', `requested lease not found: ${lease}`, { lease: lease.toString() })
              ttl = granted
              return { txn: NO_OPS, records: [this.leaseTable.put(lease, granted, timestamp + granted * 1000)] }
            }) - 1
          results.push(() => out.txns[i].then(() => ({ id: lease, ttl })))
        } else {
          const lease = checkLeaseId(w.id, 'id')
          const limits = unlimited(this.limits)
          const i =
            txns.push(() => {
              const { keys, records } = this.leaseTable.revoke(lease)
              const txn = normalizeTxn({ success: keys.map((key) => ({ type: 'delete' as const, key })) }, limits)
              return { txn, records }
            }) - 1
          results.push(() => out.txns[i])
        }
      } catch (err) {
        failNow(err)
      }
    }
    const records = (Array.isArray(marker) ? marker : [marker]) as readonly ReplicaRecord[]
    const ops: BatchOp[] = records.map((r) => ({ type: 'put', key: metaKey(META_EXT_PREFIX + r.name), value: packr.pack(r.value) }))
    raws.push(() => ops)
    const out = this.writer.submitGroup(timestamp, txns, raws, sync)
    const settled = await Promise.allSettled(results.map((r) => r()))
    await out.raws[out.raws.length - 1]
    return settled
  }

  expiredLeases(now: number): bigint[] {
    return this.leaseTable.expired(now)
  }

  /** Resolves once no compaction is running (the floor's removal has finished or stopped). */
  async compactionIdle(): Promise<void> {
    await this.compactor.idle()
  }

  // -------------------------------------------------------------------------------------------------------
  // Compaction, status, lifecycle

  async compact(revision: number, options: { physical?: boolean } = {}): Promise<CompactResult> {
    this.checkOpen()
    return this.compactor.compact(checkRevision(revision, 'compact.revision'), options.physical !== false)
  }

  async status(): Promise<LogStatus> {
    this.checkOpen()
    const job = this.compactor.job
    return {
      revision: this.revision,
      compactRevision: this.compactor.floor,
      dbSize: await dataFileBytes(this.options.dir),
      segments: this.segments.list(),
      belowFloor: this.compactor.belowFloor,
      ...(job ? { compaction: job } : {}),
      formatVersion: FORMAT_VERSION,
    }
  }

  async revisionAt(timestamp: number): Promise<number> {
    this.checkOpen()
    return this.withView(async (view) => {
      const segment = this.segments.list().find((s) => s.lastTimestamp >= timestamp)
      if (segment === undefined) return view.revision + 1
      // Commit times never decrease: binary search the segment for the first entry at or after `timestamp`.
      let lo = Math.max(segment.firstRevision, this.compactor.floor)
      let hi = Math.min(segment.lastRevision, view.revision)
      const options = { snapshot: view.snapshot, keyEncoding: 'buffer', valueEncoding: 'buffer' } as const
      while (lo < hi) {
        const mid = Math.floor((lo + hi) / 2)
        const bytes = this.db.getSync(logKey(mid), options)
        if (bytes === undefined || decodeEntry(bytes).timestamp < timestamp) lo = mid + 1
        else hi = mid
      }
      return lo
    })
  }

  /** A consistent copy of the whole database at the current revision (snapshot.ts); `chunkBytes` per chunk. */
  async snapshot(chunkBytes = 64 * 1024): Promise<SnapshotStream> {
    return (await this.snapshotWithMeta(undefined, chunkBytes)).stream
  }

  /**
   * snapshot(), together with the readMeta record `name` exactly as the copy holds it (read from the same
   * LevelDB snapshot): the cluster engine learns which stream sequence the copy is at.
   */
  async snapshotWithMeta(name: string | undefined, chunkBytes = 64 * 1024): Promise<{ stream: SnapshotStream; meta: unknown }> {
    this.checkOpen()
    const view = this.views.acquire()
    let meta: unknown
    if (name !== undefined) {
      try {
        const bytes = this.db.getSync(metaKey(META_EXT_PREFIX + name), syncGetOptions(view.snapshot))
        meta = bytes === undefined ? undefined : packr.unpack(bytes)
      } catch (err) {
        this.views.release(view)
        throw err
      }
    }
    const estimatedBytes = await this.db.approximateSize(Buffer.alloc(0), Buffer.alloc(64, 0xff)).catch(() => 0)
    const { db, views } = this
    let released = false
    const release = () => {
      if (released) return
      released = true
      views.release(view)
    }
    const inner = (async function* () {
      try {
        yield* snapshotChunks(db, view.snapshot, chunkBytes)
      } finally {
        release()
      }
    })()
    // return() releases the snapshot also when iteration never started (a generator's finally would not run).
    const iterator: AsyncIterator<Buffer> = {
      next: () => inner.next(),
      return: async (value?: unknown) => {
        release()
        return inner.return(value as undefined)
      },
    }
    return { stream: { revision: view.revision, estimatedBytes, chunks: { [Symbol.asyncIterator]: () => iterator } }, meta }
  }

  async reclaimSpace(): Promise<void> {
    this.checkOpen()
    await compactRangeBetweenFlushes(this.db, this.options.dir, Buffer.alloc(0), Buffer.alloc(64, 0xff))
    // The files LevelDB dropped are freed at a paced rate: the space is back once they are.
    await this.deletes?.drained()
  }

  readMeta(name: string): Promise<unknown> {
    this.checkOpen()
    return this.meta.read(name)
  }

  async writeMeta(name: string, value: unknown, condition?: MetaCondition): Promise<void> {
    this.checkOpen()
    // Meta writes take turns, so that a condition is checked against the record the write replaces.
    const write = this.metaTurn.then(async () => {
      if (condition !== undefined) checkMetaCondition(name, await this.meta.read(name), condition)
      await this.meta.write(name, value)
    })
    this.metaTurn = write.catch(() => undefined)
    await write
    for (const listener of this.metaListeners) listener(name, value)
  }

  onMeta(listener: (name: string, value: unknown) => void): () => void {
    this.metaListeners.add(listener)
    return () => this.metaListeners.delete(listener)
  }

  alarms(): AlarmKind[] {
    return this.meta.alarms()
  }

  setAlarm(kind: AlarmKind, active: boolean): Promise<void> {
    this.checkOpen()
    return this.meta.setAlarm(kind, active)
  }

  subscribe(listener: CommitListener): () => void {
    return this.writer.subscribe(listener)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.leaseTimer)
    await this.compactor.stop()
    await this.writer.idle()
    await this.views.closeAll()
    await this.writeback?.close()
    await this.db.close()
    openDirs.delete(resolve(this.options.dir))
    await this.deletes?.close()
  }
}
