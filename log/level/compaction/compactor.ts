/**
 * The compaction primitive: compact(R) raises the compact revision (the floor) to R and removes what no
 * read at or above R needs. Policies and scheduling live in compaction/; this is the mechanism.
 *
 * Two methods (compactionMethod). 'drop', the default, walks the hist index and then drops the log below R
 * as whole LevelDB table files (drop-job.ts has how, and its crash safety): the job around it is runDrop
 * below, with the same floor record, queue, duty cycle and closing range compaction; the walk runs in the
 * compaction thread as the scan does (compact-thread.ts), the writes on this one. 'scan' reads the log
 * below R entry by entry and is what the rest of this header describes.
 *
 * What survives: every log entry at or above R, and for every key its newest version below R unless that
 * is a delete. (That is one version more than etcd keeps for keys written at exactly R, so a watch resumed
 * from R still gets the prevKv of those events.) A surviving version is stored once: if it is still the
 * key's live version, in the kv record only (its op leaves its log entry); else where it was written, in
 * its log entry below R. Its hist record (IN_LOG) points at it either way (version-reader.ts). The entries
 * below R are scanned in order in batches (compact-batch.ts); each op's prevRevision names the version it
 * superseded, which goes from hist and from its entry; deletes go too; an entry goes once no op is left in
 * it. A write that later replaces a live version below R copies it into hist first (writer.ts).
 *
 *   log ──────────────────────────────────────────────────────────────────────────────────────▶ revision
 *   │ kept entries: survivors of       │ scanned by this job in batches:   │ untouched: every entry │
 *   │ earlier jobs (status.belowFloor) │ F ≤ rev < R, progress at `next`   │ at or above R          │
 *   └──────────────────────────────────┴───────────────────────────────────┴────────────────────────┘
 *                                      F = the floor before                R = the new floor
 *
 * A job starts at F: an op that supersedes a kept entry's version is at or above F, so the scan finds it.
 *
 * The segment table describes the readable log (at or above the floor) only: a scanned entry leaves it
 * whether it is deleted or kept, and the kept ones are counted in belowFloor instead. Reads never see the
 * kept entries as history: history and watches start at or above the floor, and an entry below it is only
 * reached through a hist record, for the version it still holds.
 *
 * Crash safety, as states of the meta record "compact":
 *
 *   { floor: F }  ──compact(R)──▶  { floor: R, job: { to: R, next: N, from } }  ──batch──▶ next advances ──▶ { floor: R }
 *       idle                          scheduled: reads below R fail                            finished
 *
 * Every batch rewrites its log entries and hist records, advances `next` and the belowFloor figures in one
 * LevelDB write, so a crash leaves a consistent state and the job resumes at `next` on open, redoing at
 * most the batch that did not land. Batches go through the writer's queue, riding in transaction groups'
 * writes, one at a time, each sized after those groups (compactionBatchSize); the scan reads and plans
 * several batches at a time (batchesPerRead), the next ones while these are written (compact-scan.ts). The
 * scan runs in the compaction thread by default (compact-thread.ts), so only the writes are the main
 * thread's. Compaction pauses after each batch so that it runs at most maxDutyPercent of the time:
 * writers are never blocked for long.
 *
 * Giving space back: the removed entries and hist records are LevelDB deletion markers until a LevelDB
 * compaction drops them. By default (compactsRange) a job ends by compacting the scanned log range and
 * waits until the files LevelDB dropped are freed, so the space is back when compact() resolves. That
 * deletes the range's table files in a burst, and LevelDB 1.20 unlinks obsolete files while holding the
 * database lock that every write takes: an unlink costs milliseconds per file on ext4 with discard, so a
 * burst of them would stall all writes for tens of milliseconds at a time; deferred-deletes.ts takes the
 * unlinks off that lock (bench:compaction --trace shows the stalls; docs/benchmarks.md has the figures).
 * And the compactRange starts between memtable flushes: started during one,
 * it holds every write until the flush ends (range-compaction.ts). Off, LevelDB's background compaction
 * gives the space back over time, and reclaimSpace() at once (the automatic compaction calls it after
 * large removals).
 */
import { Packr } from 'msgpackr'
import { compacted, futureRevision } from '../../errors.js'
import { SingleOpEntries } from './compact-batch.js'
import { scanJob, writeInTurn } from './compact-scan.js'
import type { CompactionThread } from './compact-thread.js'
import type { PlannedWrite } from './compact-transfer.js'
import { dropLogBelow, walkHist, type DropJobDeps } from './drop-job.js'
import { HIST_END, HIST_START, LOG_START, logKey, metaKey } from '../keyspace.js'
import type { Db } from '../latest-view.js'
import { decodeEntry } from '../records.js'
import type { BatchOp, SegmentTable } from '../segments.js'
import type { CompactionMethod } from '../../../config/schema.js'
import type { BelowFloor, CompactResult } from '../../types.js'
import type { Writer } from '../writer.js'

const COMPACT_KEY = metaKey('compact')
const packr = new Packr({ useRecords: false })

interface Job {
  to: number
  next: number
  /** Where the job started scanning (absent in jobs scheduled before entries were kept). */
  from?: number
  /** Method "drop": the last hist key the walk looked at (drop-job.ts). */
  after?: Buffer
  /** Method "drop": the walk is done, the log below `to` is being removed. */
  walked?: boolean
}

interface CompactState {
  floor: number
  job?: Job
  /** Log entries kept below the scan position (they hold surviving versions); absent = none. */
  belowFloor?: BelowFloor
}

/** The record of a store whose floor is `floor` with no job pending (as after a finished compaction). */
export function compactStateRecord(floor: number): { type: 'put'; key: Buffer; value: Buffer } {
  const state: CompactState = { floor }
  return { type: 'put', key: COMPACT_KEY, value: packr.pack(state) }
}

/**
 * Hist records a batch of method "drop" changes per revision of compactionBatchSize. A scan batch's
 * revision is a log entry read and deleted or rewritten plus one or two hist deletions; a walk batch's
 * record is one small hist deletion, so many of them cost the writers' group what one of those does.
 * In bench:compaction, more records per revision made the walk faster, up to this value, with the
 * writers' p99 within the runs' noise of each other (docs/benchmarks.md).
 */
const WALK_RECORDS_PER_REVISION = 20

/** Compaction revisions per transaction of the writers' groups (compactionBatchSize). */
const REVISIONS_PER_GROUP_TXN = 10

/**
 * Revisions per compaction batch, for writers' groups of `groupTxns` transactions lately: each batch rides
 * in one such group (writer.ts), and every put queued behind that group waits for the batch's deletions
 * too. Under a light load groups hold a transaction or two, and a large batch would be most of a group's
 * work: small batches keep the writers' p99 down during a compaction. Under a heavy load the groups are
 * large and so may the batches be: small batches there would make the compaction slower than the writers,
 * and their p99 worse (docs/benchmarks.md).
 */
export function compactionBatchSize(groupTxns: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(REVISIONS_PER_GROUP_TXN * groupTxns)))
}

export interface CompactorDeps {
  db: Db
  writer: Writer
  segments: SegmentTable
  /** Revisions for each batch of the next read (compactionBatchSize), asked before each read. */
  batchRevisions(): number
  /** Batches the scan reads and plans at a time; each is still written on its own (compact-scan.ts). */
  batchesPerRead: number
  /** Pause between batches so compaction runs at most this percent of the time (100 = no pause). */
  maxDutyPercent: number
  /** End with a LevelDB compaction of the scanned log span (see "Giving space back" above). */
  compactsRange: boolean
  /** LevelDB's compactRange, started between memtable flushes (range-compaction.ts). */
  compactRange(start: Buffer, end: Buffer): Promise<void>
  /** Resolves once the files LevelDB has dropped are freed (deferred-deletes.ts), so the space is back. */
  filesFreed(): Promise<void>
  currentRevision(): number
  /** Where each job's scan or hist walk runs: in the compaction thread (compact-thread.ts), or on this thread if undefined. */
  thread: CompactionThread | undefined
  /** 'scan' the log below the floor (compact-scan.ts), or walk the hist index and 'drop' it (drop-job.ts). */
  method: CompactionMethod
  /** Resolves once no reader holds a view older than the last write (read-views.ts: released). */
  readersDone(): Promise<void>
}

export class Compactor {
  private state: CompactState = { floor: 0 }
  /** Serializes compactions: each waits for the one before. */
  private chain: Promise<unknown> = Promise.resolve()
  private stopping = false
  /**
   * Entries below the scan position known to hold one op: deleted without a read (compact-batch.ts).
   * Used when the scan runs on this thread; the compaction thread keeps its own.
   */
  private readonly singles = new SingleOpEntries()
  /** Settles when stop() is called: a job waiting for readers (drop-job.ts) stops waiting. */
  private readonly stopped: Promise<void>
  private signalStop!: () => void

  constructor(private readonly deps: CompactorDeps) {
    this.stopped = new Promise((resolve) => (this.signalStop = resolve))
  }

  async load(): Promise<void> {
    const bytes = await this.deps.db.get(COMPACT_KEY)
    if (bytes !== undefined) this.state = packr.unpack(bytes) as CompactState
  }

  get floor(): number {
    return this.state.floor
  }

  get belowFloor(): BelowFloor {
    return { ...(this.state.belowFloor ?? { entries: 0, bytes: 0 }) }
  }

  get job(): { target: number; progress: number } | undefined {
    return this.state.job && { target: this.state.job.to, progress: this.state.job.next }
  }

  /** Finishes an interrupted compaction (found by load()) in the background of the returned promise. */
  resume(): Promise<CompactResult> | undefined {
    if (this.state.job === undefined) return undefined
    return this.enqueue(() => this.run(Date.now()))
  }

  /**
   * physical (default): resolves when the removal is done. Otherwise resolves once the new floor is durable
   * (reads below it fail from then on) and the removal goes on in the background, like etcd's Compact
   * without `physical`.
   */
  compact(revision: number, physical = true): Promise<CompactResult> {
    let scheduled!: (r: CompactResult) => void
    const whenScheduled = new Promise<CompactResult>((resolve) => (scheduled = resolve))
    const done = this.enqueue(async () => {
      const started = Date.now()
      const current = this.deps.currentRevision()
      if (revision <= this.state.floor) throw compacted(revision, this.state.floor, current)
      if (revision > current) throw futureRevision(revision, current)
      // Below the old floor only kept entries are left; what supersedes them is at or above it.
      const next = this.state.job?.next ?? this.state.floor
      const from = this.state.job === undefined ? next : this.state.job.from
      await this.save({ ...this.state, floor: revision, job: { to: revision, next, ...(from === undefined ? {} : { from }) } })
      scheduled({ compactRevision: revision, removedRevisions: 0, removedVersions: 0, durationMs: Date.now() - started })
      return this.run(started)
    })
    if (physical) return done
    done.catch(() => undefined) // a failure after scheduling is the background's; the next open resumes
    return Promise.race([whenScheduled, done])
  }

  /**
   * Stops once the batches being written are durable (at most one read's: compact-scan.ts); the job stays
   * scheduled and resumes on the next open.
   */
  async stop(): Promise<void> {
    this.stopping = true
    this.signalStop()
    this.deps.thread?.stop()
    await this.chain.catch(() => undefined)
    await this.deps.thread?.close()
  }

  /** Resolves once every compaction asked for so far has finished (or failed). */
  async idle(): Promise<void> {
    await this.chain
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task, task)
    this.chain = run.catch(() => undefined)
    return run
  }

  private save(state: CompactState): Promise<void> {
    return this.deps.writer.submitRaw(() => {
      this.state = state
      return [{ type: 'put', key: COMPACT_KEY, value: packr.pack(state) }]
    })
  }

  private async run(started: number): Promise<CompactResult> {
    const result: CompactResult = { compactRevision: this.state.floor, removedRevisions: 0, removedVersions: 0, durationMs: 0 }
    const job = this.state.job
    if (job === undefined) return result
    // A walked job ends with the drop whatever the method is now: its survivors are no longer in the log's
    // keeping, and the scan (which starts at the job's progress, its target by then) would leave the log
    // below the floor in place.
    if (this.deps.method === 'drop' || job.walked === true) return this.runDrop(job, started, result)
    const { db, thread, batchesPerRead } = this.deps
    const batchRevisions = () => this.deps.batchRevisions()
    const pauseFactor = 100 / this.deps.maxDutyPercent - 1
    const write = (last: number, plan: PlannedWrite) => this.write(job, last, plan)
    if (!this.stopping) {
      const scanned =
        thread !== undefined
          ? await thread.scan(job, { batchRevisions, batchesPerRead, pauseFactor }, write)
          : await scanJob(
              {
                db,
                batchRevisions,
                batchesPerRead,
                singles: this.singles,
                stopping: () => this.stopping,
                write: (batches) => writeInTurn(batches, (b) => write(b.last, b.plan), pauseFactor),
              },
              job,
            )
      result.removedRevisions = scanned.removedRevisions
      result.removedVersions = scanned.removedVersions
    }
    if (!this.stopping) {
      await this.save({ floor: this.state.floor, ...(this.state.belowFloor ? { belowFloor: this.state.belowFloor } : {}) })
      // Only if asked: see "Giving space back" above.
      if (this.deps.compactsRange) {
        await this.deps.compactRange(job.from === undefined ? LOG_START : logKey(job.from), logKey(job.to))
        await this.deps.filesFreed()
      }
    }
    result.durationMs = Date.now() - started
    return result
  }

  /** A job of method "drop": the hist walk, then the log below the floor dropped (drop-job.ts). */
  private async runDrop(job: Job, started: number, result: CompactResult): Promise<CompactResult> {
    const { writer } = this.deps
    const deps: DropJobDeps = {
      db: this.deps.db,
      batchRecords: () => WALK_RECORDS_PER_REVISION * this.deps.batchRevisions(),
      pauseFactor: 100 / this.deps.maxDutyPercent - 1,
      stopping: () => this.stopping,
      write: (ops, position) =>
        writer.submitRaw(() => {
          const current = this.state.job ?? job
          this.state = { ...this.state, job: { ...current, ...(position === undefined ? {} : { after: position }) } }
          ops.push({ type: 'put', key: COMPACT_KEY, value: packr.pack(this.state) })
          return ops
        }),
      deleteKeys: (keys) => writer.submitRaw(() => keys.map((key) => ({ type: 'del', key }))),
      readersDone: () => Promise.race([this.deps.readersDone(), this.stopped]),
    }
    if (job.walked !== true) {
      // Stopped before it began: the thread's walk only hears of a stop asked while it runs.
      if (this.stopping) return result
      const { thread } = this.deps
      const walk = thread !== undefined ? await thread.walk(job.to, job.after, deps, deps.write) : await walkHist(deps, job.to, job.after)
      result.removedVersions = walk.removedVersions
      if (!walk.finished || this.stopping) return result
      // The walk has no revision to report as progress: the job's progress goes to its target once it is done.
      await this.save({ ...this.state, job: { ...(this.state.job ?? job), walked: true, next: job.to } })
    }
    const dropped = await dropLogBelow(deps, job.to)
    result.droppedFiles = dropped.files
    result.droppedBytes = dropped.bytes
    if (this.stopping) return result
    await writer.submitRaw(() => {
      const ops: BatchOp[] = []
      result.removedRevisions = this.trimBelow(job.to, ops)
      this.state = { floor: this.state.floor }
      ops.push({ type: 'put', key: COMPACT_KEY, value: packr.pack(this.state) })
      return ops
    })
    if (this.deps.compactsRange) {
      // What was left of the log's range (its deletion markers, the files that straddled its end), then
      // the hist index's deletion markers. The kv table between them is not rewritten.
      await this.deps.compactRange(LOG_START, logKey(job.to))
      await this.deps.compactRange(HIST_START, HIST_END)
      await this.deps.filesFreed()
    }
    result.durationMs = Date.now() - started
    return result
  }

  /**
   * The segment table once every entry below `to` is gone: whole segments leave, the one holding `to` is
   * trimmed (its bytes prorated over its entries; its first timestamp becomes entry `to`'s). Returns how
   * many entries were removed, counting those kept below the floor by earlier scans.
   */
  private trimBelow(to: number, ops: BatchOp[]): number {
    let removed = this.belowFloor.entries
    const trimmed = new Map<number, { entries: number; bytes: number; lastTimestamp: number }>()
    for (const s of this.deps.segments.list()) {
      if (s.lastRevision < to) {
        removed += s.entries
      } else if (s.firstRevision < to) {
        const entries = Math.min(s.entries, to - s.firstRevision)
        const bytes = s.entries > 0 ? Math.round((s.bytes * entries) / s.entries) : 0
        const first = this.deps.db.getSync(logKey(to))
        trimmed.set(s.id, { entries, bytes, lastTimestamp: first === undefined ? 0 : decodeEntry(first).timestamp })
        removed += entries
      }
    }
    this.deps.segments.trim(to, trimmed, ops)
    return removed
  }

  /** Writes a batch's plan, its segment accounting and the job's progress (up to `last`) as one LevelDB write. */
  private write(job: Job, last: number, plan: PlannedWrite): Promise<void> {
    return this.deps.writer.submitRaw(() => {
      const ops = plan.ops
      const perSegment = new Map<number, { entries: number; bytes: number; lastTimestamp: number }>()
      for (const r of plan.scanned) {
        const segment = this.deps.segments.segmentOf(r.rev)
        if (segment === undefined) continue
        const acc = perSegment.get(segment.id) ?? { entries: 0, bytes: 0, lastTimestamp: 0 }
        acc.entries++
        acc.bytes += r.bytes
        acc.lastTimestamp = Math.max(acc.lastTimestamp, r.timestamp)
        perSegment.set(segment.id, acc)
      }
      this.deps.segments.trim(last + 1, perSegment, ops)
      const kept = this.belowFloor
      const belowFloor = { entries: kept.entries + plan.kept.entries, bytes: kept.bytes + plan.kept.bytes }
      this.state = { floor: this.state.floor, job: { ...job, next: last + 1 }, belowFloor }
      ops.push({ type: 'put', key: COMPACT_KEY, value: packr.pack(this.state) })
      return ops
    })
  }
}
