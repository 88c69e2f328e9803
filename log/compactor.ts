/**
 * The compaction primitive: compact(R) raises the compact revision (the floor) to R and removes what no
 * read at or above R needs. Policies and scheduling live in compaction/; this is the mechanism.
 *
 * What survives: every log entry at or above R, and for every key its newest version below R unless that
 * is a delete. (That is one version more than etcd keeps for keys written at exactly R, so a watch resumed
 * from R still gets the prevKv of those events.) The entries below R are read in order; each op's
 * prevRevision names the version it superseded, which goes; each surviving put is copied from its log
 * entry into the hist record (MATERIALIZED) before the entry goes.
 *
 * Crash safety, as states of the meta record "compact":
 *
 *   { floor: F }  ──compact(R)──▶  { floor: R, job: { to: R, next: N } }  ──batch──▶ next advances ──▶ { floor: R }
 *       idle                          scheduled: reads below R fail               finished
 *
 * Every batch deletes its log entries, rewrites the hist records and advances `next` in one LevelDB write,
 * so a crash leaves a consistent state and the job resumes at `next` on open. Batches go through the
 * writer's queue, between transaction groups, and compaction pauses between batches so that it runs at
 * most maxDutyPercent of the time: writers are never blocked for long.
 */
import { Packr } from 'msgpackr'
import { compacted, futureRevision } from './errors.js'
import { histKey, keyId, LOG_START, logKey, logKeyRevision, metaKey } from './keys.js'
import type { Db } from './latest-view.js'
import { decodeEntry, encodeMaterialized, OP_PUT, opKeyValue } from './records.js'
import type { BatchOp, SegmentTable } from './segments.js'
import type { CompactResult, KeyValue } from './types.js'
import type { Writer } from './writer.js'

const COMPACT_KEY = metaKey('compact')
const packr = new Packr({ useRecords: false })

interface CompactState {
  floor: number
  job?: { to: number; next: number }
}

export interface CompactorDeps {
  db: Db
  writer: Writer
  segments: SegmentTable
  batchRevisions: number
  /** Pause between batches so compaction runs at most this percent of the time (100 = no pause). */
  maxDutyPercent: number
  currentRevision(): number
}

export class Compactor {
  private state: CompactState = { floor: 0 }
  /** Serializes compactions: each waits for the one before. */
  private chain: Promise<unknown> = Promise.resolve()
  private stopping = false

  constructor(private readonly deps: CompactorDeps) {}

  async load(): Promise<void> {
    const bytes = await this.deps.db.get(COMPACT_KEY)
    if (bytes !== undefined) this.state = packr.unpack(bytes) as CompactState
  }

  get floor(): number {
    return this.state.floor
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
      const next = this.state.job?.next ?? 0
      await this.save({ floor: revision, job: { to: revision, next } })
      scheduled({ compactRevision: revision, removedRevisions: 0, removedVersions: 0, durationMs: Date.now() - started })
      return this.run(started)
    })
    if (physical) return done
    done.catch(() => undefined) // a failure after scheduling is the background's; the next open resumes
    return Promise.race([whenScheduled, done])
  }

  /** Stops at the next batch boundary; the job stays scheduled and resumes on the next open. */
  async stop(): Promise<void> {
    this.stopping = true
    await this.chain.catch(() => undefined)
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
    const pauseFactor = 100 / this.deps.maxDutyPercent - 1
    while (!this.stopping) {
      const t0 = performance.now()
      // Each batch records its progress in this.state.job: start the next read there, not where the job
      // began, or every read would wade through the deletion markers of all earlier batches.
      const done = await this.batch(job.to, this.state.job?.next ?? job.next, result)
      if (done) break
      // Background work yields: writers get (100 - duty)% of the time between batches.
      if (pauseFactor > 0) await new Promise((r) => setTimeout(r, (performance.now() - t0) * pauseFactor))
    }
    if (!this.stopping) {
      await this.save({ floor: this.state.floor })
      // Give the log's disk space back now; hist records are scattered and LevelDB reclaims them over time.
      await this.deps.db.compactRange(LOG_START, logKey(job.to))
    }
    result.durationMs = Date.now() - started
    return result
  }

  /** Removes up to batchRevisions entries from `next`; true when nothing below `to` is left. */
  private async batch(to: number, next: number, result: CompactResult): Promise<boolean> {
    const { db, batchRevisions } = this.deps
    const rows = await db.iterator({ gte: logKey(next), lt: logKey(to), limit: batchRevisions }).all()
    if (rows.length === 0) return true

    const ops: BatchOp[] = []
    // The newest put of each key within this batch: written out as MATERIALIZED once the batch is scanned.
    const survivors = new Map<string, { rev: number; kv: KeyValue }>()
    const removed = new Map<number, { rev: number; bytes: number; timestamp: number }>()
    for (const [k, v] of rows) {
      const rev = logKeyRevision(k)
      const entry = decodeEntry(v)
      removed.set(rev, { rev, bytes: v.length, timestamp: entry.timestamp })
      ops.push({ type: 'del', key: k })
      for (const op of entry.ops) {
        const id = keyId(op.key)
        if (op.prevRevision > 0) {
          ops.push({ type: 'del', key: histKey(op.key, op.prevRevision) })
          result.removedVersions++
        }
        if (op.kind === OP_PUT) {
          survivors.set(id, { rev, kv: opKeyValue(op, rev) })
        } else {
          survivors.delete(id)
          ops.push({ type: 'del', key: histKey(op.key, rev) })
          result.removedVersions++
        }
      }
    }
    for (const { rev, kv } of survivors.values()) {
      ops.push({ type: 'put', key: histKey(kv.key, rev), value: encodeMaterialized(kv) })
    }
    const last = logKeyRevision(rows[rows.length - 1][0])
    const job = { to, next: last + 1 }
    await this.deps.writer.submitRaw(() => {
      const perSegment = new Map<number, { entries: number; bytes: number; lastTimestamp: number }>()
      for (const r of removed.values()) {
        const segment = this.deps.segments.segmentOf(r.rev)
        if (segment === undefined) continue
        const acc = perSegment.get(segment.id) ?? { entries: 0, bytes: 0, lastTimestamp: 0 }
        acc.entries++
        acc.bytes += r.bytes
        acc.lastTimestamp = Math.max(acc.lastTimestamp, r.timestamp)
        perSegment.set(segment.id, acc)
      }
      this.deps.segments.trim(last + 1, perSegment, ops)
      this.state = { floor: this.state.floor, job }
      ops.push({ type: 'put', key: COMPACT_KEY, value: packr.pack(this.state) })
      return ops
    })
    result.removedRevisions += rows.length
    return rows.length < batchRevisions
  }
}
