/**
 * The scan of one compaction job (compactor.ts has the job around it): reads the log entries from the
 * job's progress up to its target, `batchesPerRead` spans of `batchRevisions()` revisions at a time (the
 * size asked anew for each read), plans a batch for each span (compact-batch.ts) and hands each read's
 * batches to `write`, which makes them durable one after another, each with the job's progress up to its
 * span (writeInTurn). It runs on the main thread or in the compaction thread (compact-thread.ts), with the
 * same code either way: only `write` differs.
 *
 * Plan large, write small: a batch rides in one of the writers' groups, so its span stays small (every
 * put queued behind that group waits for it); but each read, and on the compaction thread each message
 * each way, is a thread waking up, so a read takes several spans. One iterator, one getMany of the kv
 * records, one getMany of the entries below the read, and one message each way serve them all.
 *
 * Pipelined: each read's rows are decoded and their liveness read as soon as they are read (scanRows).
 * The rows after a read are above every entry its batches change (only the batch that scans an entry, or
 * a later one, changes it), so they are read while those batches are planned and written, and the next
 * read's batches are planned while the batches before are written. A batch planned before the ones ahead
 * of it are durable sees the entries they change as they leave them (UnwrittenEntries), never as read.
 */
import {
  LiveRevisions,
  planBatch,
  scanRows,
  type BatchPlan,
  type EntrySource,
  type ScannedRows,
  type SingleOpEntries,
} from './compact-batch.js'
import { failpoint, failpointsOn } from '../../failpoints.js'
import { logKey } from '../keyspace.js'
import { ITERATOR_STEP_BYTES, type Db } from '../latest-view.js'

export interface ScanJob {
  /** The job's target: entries below it are scanned. */
  to: number
  /** Where the job's progress says to go on. */
  next: number
}

/** A planned batch: its plan, and the last revision of its span (the job's progress once it is written). */
export interface PlannedBatch {
  last: number
  plan: BatchPlan
}

export interface ScanDeps {
  db: Db
  /** How many revisions each span of the next read holds (compactor.ts: compactionBatchSize). */
  batchRevisions(): number
  /** Spans per read: batches planned at a time and handed to `write` together. */
  batchesPerRead: number
  /** Entries below the scan position known to hold one op (compact-batch.ts); lives as long as the log. */
  singles: SingleOpEntries
  /** Checked after each read's batches are written: true ends the scan there (the job stays scheduled). */
  stopping(): boolean
  /** Makes a read's batches durable in order, each together with the job's progress up to its `last`. */
  write(batches: PlannedBatch[]): Promise<void>
}

export interface ScanResult {
  removedRevisions: number
  removedVersions: number
}

/** One read: its rows, the span size they are planned in, and whether it reached the target. */
interface Read {
  rows: ScannedRows
  spanRevisions: number
  /** It came back short: the scan has reached the target. */
  last: boolean
}

export async function scanJob(deps: ScanDeps, job: ScanJob): Promise<ScanResult> {
  const { db, singles } = deps
  const result: ScanResult = { removedRevisions: 0, removedVersions: 0 }
  // What this job reads of kv records, so each is read once (compact-batch.ts: one per job, never kept).
  const live = new LiveRevisions()
  const unwritten = new UnwrittenEntries()
  const read = async (from: number): Promise<Read> => {
    const spanRevisions = Math.max(1, deps.batchRevisions())
    const limit = spanRevisions * Math.max(1, deps.batchesPerRead)
    const rows = scanRows(
      db,
      await db
        .iterator({
          gte: logKey(from),
          lt: logKey(job.to),
          limit,
          highWaterMarkBytes: ITERATOR_STEP_BYTES,
        })
        .all(),
      live,
    )
    return { rows, spanRevisions, last: rows.entries.length < limit }
  }
  const readAfter = (r: Read) => {
    if (r.last) return undefined
    const next = read(r.rows.entries[r.rows.entries.length - 1].rev + 1)
    next.catch(() => undefined) // awaited in the loop, unless a batch fails first
    return next
  }
  /**
   * Plans a read's batches in order, each as if the ones before had landed: `singles` takes each plan
   * at once, and `unwritten` the entries it changes. If a write fails the job stops and both are forgotten.
   */
  const plan = async (r: Read): Promise<PlannedBatch[]> => {
    const source = await readAhead(db, r.rows, singles, unwritten)
    const batches: PlannedBatch[] = []
    for (const span of spans(r.rows, r.spanRevisions)) {
      const p = await planBatch(db, span, singles, source)
      singles.apply(p.singles)
      unwritten.add(p.entries)
      batches.push({ last: span.entries[span.entries.length - 1].rev, plan: p })
    }
    return batches
  }
  try {
    // Start where the job's progress says, not where it began, or the read would wade through the
    // deletion markers of all earlier batches.
    const first = deps.stopping() ? undefined : await read(job.next)
    let following = first && readAfter(first)
    let batches = first !== undefined && first.rows.entries.length > 0 ? await plan(first) : undefined
    while (!deps.stopping() && batches !== undefined) {
      const written = deps.write(batches)
      written.catch(() => undefined) // awaited below
      let next: Promise<PlannedBatch[]> | undefined
      if (following !== undefined) {
        const nextRead = await following
        following = readAfter(nextRead)
        if (nextRead.rows.entries.length > 0) {
          next = plan(nextRead)
          next.catch(() => undefined) // awaited below, unless these batches fail first
        }
      }
      await written
      for (const b of batches) {
        unwritten.written(b.plan.entries)
        result.removedRevisions += b.plan.scanned.length
        result.removedVersions += b.plan.removedVersions
      }
      batches = next && (await next)
    }
  } catch (err) {
    singles.clear()
    throw err
  }
  return result
}

/** Writes planned batches one after another, each followed by a pause `pauseFactor` times as long as it took. */
export async function writeInTurn<B>(batches: readonly B[], write: (batch: B) => Promise<void>, pauseFactor: number): Promise<void> {
  for (const batch of batches) {
    const t0 = performance.now()
    await write(batch)
    if (failpointsOn) failpoint('compactBatch')
    await dutyPause(t0, pauseFactor)
  }
}

/**
 * The duty cycle's pause after a write that started at `t0`: `pauseFactor` times as long as it took, so
 * that background work yields and writers get (100 - duty)% of the time between batches.
 */
export function dutyPause(t0: number, pauseFactor: number): Promise<void> {
  if (pauseFactor <= 0) return Promise.resolve()
  return new Promise((resolve) => setTimeout(resolve, (performance.now() - t0) * pauseFactor))
}

/**
 * The entries that batches planned but not yet durable leave (rev → the entry, null when deleted), for the
 * batches planned after them. An entry leaves once the batch that changed it last is durable: from then
 * on a read finds it as it was left.
 */
class UnwrittenEntries {
  private readonly entries = new Map<number, Buffer | null>()

  get(rev: number): Buffer | null | undefined {
    return this.entries.get(rev)
  }

  add(changed: ReadonlyMap<number, Buffer | null>): void {
    for (const [rev, value] of changed) this.entries.set(rev, value)
  }

  /** A batch is durable: its entries leave, unless a later batch changed them again. */
  written(changed: ReadonlyMap<number, Buffer | null>): void {
    for (const [rev, value] of changed) if (this.entries.get(rev) === value) this.entries.delete(rev)
  }
}

/** A read's rows in spans of `revisions`, each with the live versions among its own rows. */
function spans(rows: ScannedRows, revisions: number): ScannedRows[] {
  if (rows.entries.length <= revisions) return [rows]
  const out: ScannedRows[] = []
  for (let i = 0; i < rows.entries.length; i += revisions) {
    const entries = rows.entries.slice(i, i + revisions)
    const from = entries[0].rev
    const to = entries[entries.length - 1].rev
    // A put is live only if it is its key's last in the whole read, so the read's answer serves each span.
    const live = rows.live.then((all) => all.filter((l) => l.rev >= from && l.rev <= to))
    live.catch(() => undefined) // awaited by planBatch
    out.push({ entries, live })
  }
  return out
}

/**
 * What a read's batches may take of the log without reading it one batch at a time: the unwritten
 * entries first, then the read's own rows as read, then the entries below the read that its ops
 * supersede versions in (read here in one getMany, apart from those `singles` or `unwritten` have).
 * Those are below every entry the batches still being written change, unless `unwritten` has them, so
 * reading them now finds them as they will be.
 */
async function readAhead(db: Db, rows: ScannedRows, singles: SingleOpEntries, unwritten: UnwrittenEntries): Promise<EntrySource> {
  const read = new Map<number, Buffer>()
  for (const e of rows.entries) read.set(e.rev, e.raw)
  const first = rows.entries.length > 0 ? rows.entries[0].rev : 0
  const below = new Set<number>()
  for (const e of rows.entries) {
    for (const op of e.ops) {
      const p = op.prevRevision
      if (p > 0 && p < first && singles.get(p) === undefined && unwritten.get(p) === undefined) below.add(p)
    }
  }
  if (below.size > 0) {
    const revs = [...below]
    const values = await db.getMany(revs.map(logKey))
    revs.forEach((rev, i) => {
      const v = values[i]
      if (v !== undefined) read.set(rev, v)
    })
  }
  return {
    entry(rev) {
      const u = unwritten.get(rev)
      return u !== undefined ? u : read.get(rev)
    },
  }
}
