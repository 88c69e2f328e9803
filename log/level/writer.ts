/**
 * The one writer, with group commit (docs/architecture.md, "One writer, group commit").
 *
 * Everything that changes the database goes through this queue: transactions and compaction batches. The
 * writer takes everything queued (up to maxBatchTxns transactions), evaluates each transaction in order
 * against the state left by the previous ones (an overlay), gives each writing transaction the next
 * revision, writes one LevelDB batch, and only once that batch is durable does it answer the callers and
 * publish the entries, in revision order. A failed transaction (e.g. LEASE_NOT_FOUND) leaves no trace.
 *
 *   queue ──▶ take group ──▶ evaluate txns (overlay) ──▶ db.batch(sync) ──▶ advance snapshot ──▶ ack + publish
 *
 * The batch goes to LevelDB's thread (libuv's pool) while the main thread prepares the next group; a lone
 * write while nothing else is being written is written inline instead (io/inline-write.ts, writesInline).
 *
 * If LevelDB fails a batch, the outcome on disk is unknown to us, so the writer stops: every queued and
 * later write fails with UNAVAILABLE, and a restart recovers the durable prefix.
 */
import { compacted, futureRevision, KvlogError } from '../errors.js'
import { failpoint, failpointsOn } from '../failpoints.js'
import { histKey, kvKey, logKey } from './keyspace.js'
import type { Db } from './latest-view.js'
import { LatestView } from './latest-view.js'
import { HistView } from './hist-view.js'
import { ReadViews } from './read-views.js'
import { encodeEntry, encodeKvRecord, encodeMaterialized, HIST_IN_LOG_RECORD, HIST_TOMBSTONE_RECORD } from './records.js'
import { OP_PUT, type LoggedOp } from '../ops.js'
import { SegmentTable, writeBatch, type BatchOp } from './segments.js'
import type { InlineWrite } from './io/inline-write.js'
import { OverlayView, type StateView } from '../state-view.js'
import { evaluateTxn } from '../txn-eval.js'
import type { Author, CommitListener, Event, LogEntry, Segment, TxnResult } from '../types.js'
import type { NTxn } from '../validate.js'

interface TxnJob {
  kind: 'txn'
  /** The transaction, or a plan that makes it when its turn comes (e.g. a lease revoke's deletes). */
  txn: NTxn | (() => PlannedTxn)
  /** The commit timestamp of its entry when it belongs to a GroupJob (several may share one batch). */
  timestamp?: number
  resolve(result: TxnResult): void
  reject(err: unknown): void
}

/** A batch built at the moment it is written (so it sees the latest in-memory tables), e.g. by compaction. */
interface RawJob {
  kind: 'raw'
  build(): BatchOp[]
  resolve(): void
  reject(err: unknown): void
}

/**
 * Jobs that must be in one batch with a given commit timestamp (a replicated message applied by the
 * cluster engine): never split, never merged with jobs of other kinds. Group jobs queued one after another
 * share one batch (up to maxBatchTxns transactions), each entry keeping its own group's timestamp, so a
 * run of replicated messages costs one write and one fsync.
 */
interface GroupJob {
  kind: 'group'
  txns: TxnJob[]
  raws: RawJob[]
  timestamp: number
  /** false: do not fsync this batch (a later synced one makes it durable with it: LevelDB's log is in order). */
  sync: boolean
}

type Job = TxnJob | RawJob | GroupJob

/** A transaction made at evaluation time, with records that go into the same batch if it succeeds. */
export interface PlannedTxn {
  txn: NTxn
  records: BatchOp[]
}

export interface WriterDeps {
  db: Db
  views: ReadViews
  segments: SegmentTable
  sync: boolean
  maxBatchTxns: number
  /**
   * A group of at most this many transactions (and no raw jobs), issued while nothing else is being
   * written, is written by writeInline on the main thread (0: never).
   */
  inlineWriteMaxTxns: number
  writeInline: InlineWrite | undefined
  compactRevision(): number
  leaseExists(lease: bigint): boolean
  /** Called with each writing transaction's ops as it is evaluated; may add records to its batch. */
  track(ops: readonly LoggedOp[], batch: BatchOp[]): void
  lastTimestamp: number
}

export interface WriterStats {
  batches: number
  txns: number
  /** Sum of transactions over batches, for the mean group size. */
  batchedTxns: number
  /**
   * Transactions per group lately: a moving average over the groups that held any (weight 1/16 each),
   * which follows a change of load within a few dozen groups. It sizes compaction batches (compactor.ts).
   */
  recentGroupTxns: number
  /** Batches written on the main thread (io/inline-write.ts) rather than LevelDB's thread pool. */
  inlineBatches: number
}

/** Weight of the newest group in WriterStats.recentGroupTxns. */
const RECENT_GROUP_WEIGHT = 1 / 16

export class Writer {
  private queue: Job[] = []
  private running = false
  private drained: Array<() => void> = []
  private failure: KvlogError | undefined
  private lastTimestamp: number
  private readonly listeners = new Set<CommitListener>()
  readonly stats: WriterStats = { batches: 0, txns: 0, batchedTxns: 0, recentGroupTxns: 0, inlineBatches: 0 }

  constructor(private readonly deps: WriterDeps) {
    this.lastTimestamp = deps.lastTimestamp
  }

  subscribe(listener: CommitListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Queues a transaction; a function is called when the transaction's turn comes, to make it. */
  submit(txn: NTxn | (() => PlannedTxn)): Promise<TxnResult> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'txn', txn, resolve, reject }))
  }

  submitRaw(build: () => BatchOp[]): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue({ kind: 'raw', build, resolve, reject }))
  }

  /**
   * Writes the transactions and raw jobs in one batch whose entries carry `timestamp` (raw jobs build after
   * the transactions, in order). Each promise settles as submit()'s and submitRaw()'s do; all are durable
   * together or not at all.
   */
  submitGroup(
    timestamp: number,
    txns: Array<NTxn | (() => PlannedTxn)>,
    raws: Array<() => BatchOp[]>,
    sync = true,
  ): { txns: Array<Promise<TxnResult>>; raws: Array<Promise<void>> } {
    const job: GroupJob = { kind: 'group', txns: [], raws: [], timestamp, sync }
    const out = {
      txns: txns.map((txn) => new Promise<TxnResult>((resolve, reject) => job.txns.push({ kind: 'txn', txn, timestamp, resolve, reject }))),
      raws: raws.map((build) => new Promise<void>((resolve, reject) => job.raws.push({ kind: 'raw', build, resolve, reject }))),
    }
    this.enqueue(job)
    return out
  }

  /** Resolves once everything queued so far is written (or failed). */
  idle(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.drained.push(resolve))
  }

  private enqueue(job: Job): void {
    if (this.failure !== undefined) {
      if (job.kind !== 'group') return job.reject(this.failure)
      for (const j of [...job.txns, ...job.raws]) j.reject(this.failure)
      return
    }
    this.queue.push(job)
    if (!this.running) {
      this.running = true
      // Start on the next turn of the event loop so writes issued together share the first batch.
      setImmediate(() => void this.run())
    }
  }

  private async run(): Promise<void> {
    let inflight: PreparedGroup | undefined
    while (this.queue.length > 0 || inflight !== undefined) {
      if (this.queue.length === 0) {
        await this.finish(inflight!)
        inflight = undefined
        continue
      }
      const prepared = await this.prepare(this.takeGroup(inflight === undefined), inflight)
      if (inflight === undefined) {
        inflight = this.start(prepared, true)
        continue
      }
      // Issue the next batch the moment this one is durable, then answer this one's callers while the
      // next one is being written: the LevelDB thread never waits for acknowledgements. The read snapshot
      // must be taken before the next batch starts, so that it holds exactly this group's revision.
      const durable = await this.settle(inflight)
      if (durable) this.advance(inflight)
      const next = this.start(prepared)
      if (durable) this.answer(inflight)
      inflight = next
    }
    this.running = false
    for (const done of this.drained.splice(0)) done()
  }

  /**
   * The next group: transactions in queue order up to maxBatchTxns (half of a large queue when nothing is
   * being written, so the halves overlap), plus the raw jobs queued among them. Raw jobs (compaction,
   * meta records) ride in the same LevelDB batch, so they cost no fsync of their own; they do not
   * interact with transactions, so their order relative to them does not matter.
   */
  private takeGroup(idle: boolean): Group {
    const head = this.queue[0]
    if (head.kind === 'group') return this.takeGroupJobs()
    // Count only as far as a group can take: this runs for every group, and queues can be long.
    let txns = 0
    for (let i = 0; i < this.queue.length && txns < this.deps.maxBatchTxns; i++) if (this.queue[i].kind === 'txn') txns++
    let limit = txns
    if (idle && limit >= 2 * SPLIT_MIN) limit = Math.ceil(limit / 2)
    const group: Group = { txns: [], raws: [] }
    let n = 0
    while (n < this.queue.length) {
      const job = this.queue[n]
      if (job.kind === 'group') break
      if (job.kind === 'txn') {
        if (group.txns.length === limit) break
        group.txns.push(job)
      } else group.raws.push(job)
      n++
    }
    this.queue.splice(0, n)
    return group
  }

  /**
   * The group jobs at the head of the queue, as one group: the first whatever its size, then the next ones
   * while the transactions fit in maxBatchTxns. Their raw jobs follow all transactions, in queue order;
   * the batch is fsynced if any of them asks for it, and the group's timestamp is the last job's.
   */
  private takeGroupJobs(): Group {
    const group: Group = { txns: [], raws: [], sync: false }
    let n = 0
    while (n < this.queue.length) {
      const job = this.queue[n]
      if (job.kind !== 'group' || (n > 0 && group.txns.length + job.txns.length > this.deps.maxBatchTxns)) break
      group.txns.push(...job.txns)
      group.raws.push(...job.raws)
      group.timestamp = job.timestamp
      group.sync ||= job.sync
      n++
    }
    this.queue.splice(0, n)
    return group
  }

  /** Evaluates a group over the committed snapshot plus the group still being written, if any. */
  private async prepare({ txns: group, raws, timestamp, sync }: Group, inflight: PreparedGroup | undefined): Promise<PreparedGroup> {
    const { db, views } = this.deps
    const base = views.acquire()
    const committed = base.revision
    const latest = new LatestView(db, base.snapshot)
    const below = inflight === undefined ? latest : inflight.changes.withBase(latest)
    const changes = new OverlayView(below)
    const first = inflight === undefined ? committed : inflight.revision
    const prepared: PreparedGroup = {
      group,
      raws: [],
      changes,
      revision: first,
      timestamp: timestamp ?? Math.max(Date.now(), this.lastTimestamp, inflight?.timestamp ?? 0),
      batch: [],
      entries: [],
      answers: [],
      sync: this.deps.sync && sync !== false,
    }
    const readAt = (rev: number): StateView => {
      if (rev > prepared.revision) throw futureRevision(rev, prepared.revision)
      const floor = this.deps.compactRevision()
      if (rev < floor) throw compacted(rev, floor, committed)
      if (rev > committed) throw new KvlogError('UNAVAILABLE', `revision ${rev} is still being committed; retry`)
      return new HistView(db, base.snapshot, rev)
    }
    const segmentWrites = new Map<number, Segment>()
    try {
      for (const job of group) {
        let txn: NTxn
        let records: BatchOp[] = []
        try {
          if (typeof job.txn === 'function') ({ txn, records } = job.txn())
          else txn = job.txn
        } catch (err) {
          prepared.answers.push(() => job.reject(err))
          continue
        }
        // A lone write with no compares fails (if at all) before it changes anything, so it can write to
        // the group's overlay directly; anything else gets a layer of its own, dropped on failure.
        const view = isLoneWrite(txn) ? changes : changes.child()
        const ctx = {
          view,
          revision: prepared.revision + 1,
          readAt,
          leaseExists: this.deps.leaseExists,
          ops: [] as LoggedOp[],
          events: [] as Event[],
        }
        try {
          const { succeeded, results } = await evaluateTxn(txn, ctx)
          const wrote = ctx.ops.length > 0
          if (wrote) {
            prepared.revision++
            if (view !== changes) view.mergeIntoParent()
            const timestamp = job.timestamp ?? prepared.timestamp
            const bytes = appendEntry(prepared.batch, prepared.revision, timestamp, ctx, this.deps.compactRevision(), txn.author)
            this.deps.track(ctx.ops, prepared.batch)
            this.deps.segments.append(prepared.revision, timestamp, bytes, segmentWrites)
            const entry: LogEntry = { revision: prepared.revision, timestamp, events: ctx.events }
            if (txn.author !== undefined) entry.author = txn.author
            prepared.entries.push(entry)
          }
          prepared.batch.push(...records)
          const result: TxnResult = { succeeded, results, revision: prepared.revision, wrote }
          prepared.answers.push(() => job.resolve(result))
        } catch (err) {
          prepared.answers.push(() => job.reject(err))
        }
      }
    } finally {
      views.release(base)
    }
    // Raw jobs build their ops now, after this group's segment appends, so a segment record written below
    // holds both the appends and any trim.
    for (const job of raws) {
      try {
        prepared.batch.push(...job.build())
        prepared.raws.push(job)
      } catch (err) {
        job.reject(err)
      }
    }
    for (const segment of segmentWrites.values()) prepared.batch.push(SegmentTable.write(segment))
    return prepared
  }

  /**
   * Issues the group's batch (after the previous one finished, so LevelDB applies them in order). `idle`:
   * nothing is being written, so a small group may be written inline and is durable on return.
   */
  private start(prepared: PreparedGroup, idle = false): PreparedGroup {
    if (failpointsOn && prepared.batch.length > 0) failpoint('beforeCommit')
    if (this.failure !== undefined) {
      prepared.written = Promise.reject(this.failure)
    } else if (prepared.batch.length === 0) {
      prepared.written = Promise.resolve()
    } else if (idle && this.writesInline(prepared)) {
      try {
        this.deps.writeInline!(prepared.batch, prepared.sync)
        this.stats.inlineBatches++
        prepared.written = Promise.resolve()
      } catch (err) {
        prepared.written = Promise.reject(err instanceof Error ? err : new Error(String(err)))
      }
    } else {
      prepared.written = writeBatch(this.deps.db, prepared.batch, prepared.sync)
    }
    prepared.written.catch(() => undefined)
    return prepared
  }

  /**
   * A lone write (or a group as small as inlineWriteMaxTxns) waits for its fsync either way; inline, the
   * event loop waits with it instead of two thread hand-offs. Only while the recent groups were that small
   * too: under load a group of one is the first of many requests arriving, and an inline fsync would hold
   * back the rest of them (their group would start one fsync later). Compaction's raw jobs are big batches
   * nobody waits on, so they keep the thread pool.
   */
  private writesInline(prepared: PreparedGroup): boolean {
    const n = prepared.group.length
    const max = this.deps.inlineWriteMaxTxns
    return this.deps.writeInline !== undefined && prepared.raws.length === 0 && n > 0 && n <= max && this.stats.recentGroupTxns < max + 1
  }

  /** Waits for the group's batch; then advances the snapshot, answers the callers and publishes. */
  private async finish(prepared: PreparedGroup): Promise<void> {
    if (!(await this.settle(prepared))) return
    if (failpointsOn) failpoint('afterCommit')
    this.advance(prepared)
    this.answer(prepared)
  }

  /** Waits for the group's batch; on failure stops the writer and fails everything queued. */
  private async settle(prepared: PreparedGroup): Promise<boolean> {
    try {
      await prepared.written
      return true
    } catch (err) {
      this.failure ??= new KvlogError('UNAVAILABLE', `the store failed to write and stopped: ${String(err)}`)
      for (const job of [...prepared.group, ...prepared.raws]) job.reject(this.failure)
      for (const job of this.queue.splice(0)) {
        if (job.kind !== 'group') job.reject(this.failure)
        else for (const j of [...job.txns, ...job.raws]) j.reject(this.failure)
      }
      return false
    }
  }

  /** The group is durable: reads from now on see it (call before the next batch is issued). */
  private advance(prepared: PreparedGroup): void {
    this.stats.txns += prepared.group.length
    if (prepared.group.length > 0) {
      this.stats.recentGroupTxns += (prepared.group.length - this.stats.recentGroupTxns) * RECENT_GROUP_WEIGHT
    }
    if (prepared.entries.length > 0) {
      this.lastTimestamp = prepared.timestamp
      this.stats.batches++
      this.stats.batchedTxns += prepared.group.length
    }
    // A fresh snapshot also after a batch of raw ops only (same revision): the old one would keep what
    // compaction just deleted pinned in LevelDB, so its space could never be given back.
    if (prepared.batch.length > 0) this.deps.views.advance(prepared.revision)
  }

  /** Answers the group's callers and publishes its entries, in revision order. */
  private answer(prepared: PreparedGroup): void {
    for (const job of prepared.raws) job.resolve()
    for (const answer of prepared.answers) answer()
    if (prepared.entries.length > 0) this.publish(prepared.entries)
  }

  private publish(entries: LogEntry[]): void {
    for (const listener of this.listeners) {
      try {
        listener(entries)
      } catch (err) {
        // A listener must not break the writer; the watch hub catches its own errors.
        process.emitWarning(`kvlog: commit listener threw: ${String(err)}`)
      }
    }
  }
}

function isLoneWrite(txn: NTxn): boolean {
  if (txn.compare.length > 0 || txn.failure.length > 0 || txn.success.length !== 1) return false
  const op = txn.success[0]
  return op.type === 'put' || (op.type === 'delete' && op.bounds.single)
}

/** A group evaluated and (once started) being written. */
interface Group {
  txns: TxnJob[]
  raws: RawJob[]
  /** The commit timestamp of a GroupJob's entries; otherwise the clock's (never below the last one). */
  timestamp?: number
  sync?: boolean
}

interface PreparedGroup {
  group: TxnJob[]
  /** Raw jobs whose ops ride in this group's batch. */
  raws: RawJob[]
  /** The group's writes, as an overlay: the next group is evaluated over them until this one is durable. */
  changes: OverlayView
  /** The revision after the group. */
  revision: number
  timestamp: number
  batch: BatchOp[]
  entries: LogEntry[]
  answers: Array<() => void>
  /** fsync the batch (the writer's setting, unless a group asked not to). */
  sync: boolean
  written?: Promise<void>
}

/** Below this many queued transactions an idle writer takes them all instead of splitting. */
const SPLIT_MIN = 16

/**
 * Adds one entry's log, kv and hist writes to the batch; returns the encoded entry's size.
 *
 * A write that replaces or deletes a live version below the compact revision copies that version into
 * its hist record (MATERIALIZED): compaction may have taken its op out of its log entry (compact-batch.ts),
 * leaving the kv record being replaced here as its one copy, and reads at or above the floor still need it.
 */
export function appendEntry(
  batch: BatchOp[],
  revision: number,
  timestamp: number,
  written: { ops: LoggedOp[]; events: Pick<Event, 'prevKv'>[] },
  floor: number,
  author?: Author,
): number {
  const { ops, events } = written // events[i] is ops[i]'s event (txn-eval.ts records them together)
  const encoded = encodeEntry(author === undefined ? { timestamp, ops } : { timestamp, ops, author })
  batch.push({ type: 'put', key: logKey(revision), value: encoded })
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]
    if (op.kind === OP_PUT) {
      batch.push({
        type: 'put',
        key: kvKey(op.key),
        value: encodeKvRecord({
          key: op.key,
          value: op.value,
          createRevision: op.createRevision,
          modRevision: revision,
          version: op.version,
          lease: op.lease,
        }),
      })
      batch.push({ type: 'put', key: histKey(op.key, revision), value: HIST_IN_LOG_RECORD })
    } else {
      batch.push({ type: 'del', key: kvKey(op.key) })
      batch.push({ type: 'put', key: histKey(op.key, revision), value: HIST_TOMBSTONE_RECORD })
    }
    const prev = events[i].prevKv
    if (op.prevRevision > 0 && op.prevRevision < floor && prev !== undefined) {
      batch.push({ type: 'put', key: histKey(op.key, op.prevRevision), value: encodeMaterialized(prev) })
    }
  }
  return encoded.length
}
