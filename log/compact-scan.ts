/**
 * The scan of one compaction job (compactor.ts has the job around it): reads the log entries from the
 * job's progress up to its target in spans of `batchRevisions()` revisions (asked anew for each span),
 * plans a batch for each (compact-batch.ts) and hands it to `write`, which makes it durable with the
 * job's progress. It runs on the main thread or in the compaction thread (compact-thread.ts), with the
 * same code either way: only `write` differs.
 *
 * Pipelined: each span of rows is decoded and its liveness read as soon as it is read (scanRows). The
 * rows after a span are above every entry its batch changes (only the batch that scans an entry, or a
 * later one, changes it), so they are read while that batch is planned and written, and the next batch
 * is planned while one is written (planBatch says what it waits for).
 */
import { LiveRevisions, planBatch, scanRows, type BatchPlan, type ScannedRows, type SingleOpEntries } from './compact-batch.js'
import { logKey } from './keys.js'
import { ITERATOR_STEP_BYTES, type Db } from './latest-view.js'

export interface ScanJob {
  /** The job's target: entries below it are scanned. */
  to: number
  /** Where the job's progress says to go on. */
  next: number
}

export interface ScanDeps {
  db: Db
  /** How many revisions the next span holds (compactor.ts: compactionBatchSize). */
  batchRevisions(): number
  /** Pause after each batch for this many times as long as it took (0 = no pause): the duty cycle. */
  pauseFactor: number
  /** Entries below the scan position known to hold one op (compact-batch.ts); lives as long as the log. */
  singles: SingleOpEntries
  /** Checked at each batch boundary: true ends the scan there (the job stays scheduled). */
  stopping(): boolean
  /** Makes a batch durable together with the job's progress (up to and including `last`). */
  write(last: number, plan: BatchPlan): Promise<void>
}

export interface ScanResult {
  removedRevisions: number
  removedVersions: number
}

export async function scanJob(deps: ScanDeps, job: ScanJob): Promise<ScanResult> {
  const { db, pauseFactor, singles } = deps
  const result: ScanResult = { removedRevisions: 0, removedVersions: 0 }
  // What this job reads of kv records, so each is read once (compact-batch.ts: one per job, never kept).
  const live = new LiveRevisions()
  // Spans that came back short are the last: the scan has reached the target.
  const last = new WeakSet<ScannedRows>()
  const read = async (from: number) => {
    const limit = Math.max(1, deps.batchRevisions())
    const rows = scanRows(db, await db.iterator({
      gte: logKey(from), lt: logKey(job.to), limit, highWaterMarkBytes: ITERATOR_STEP_BYTES,
    }).all(), live)
    if (rows.entries.length < limit) last.add(rows)
    return rows
  }
  const readAfter = (rows: ScannedRows) => {
    if (last.has(rows)) return undefined
    const next = read(rows.entries[rows.entries.length - 1].rev + 1)
    next.catch(() => undefined) // awaited in the loop, unless a batch fails first
    return next
  }
  try {
    // Start where the job's progress says, not where it began, or the read would wade through the
    // deletion markers of all earlier batches.
    const first = deps.stopping() ? undefined : await read(job.next)
    let following = first && readAfter(first)
    let batch = first !== undefined && first.entries.length > 0 ? { rows: first, plan: await planBatch(db, first, singles) } : undefined
    while (!deps.stopping() && batch !== undefined) {
      const t0 = performance.now()
      const { rows, plan } = batch
      const written = deps.write(rows.entries[rows.entries.length - 1].rev, plan)
      written.catch(() => undefined) // awaited below
      // The next batch is planned while this one is written, as if it had landed: `singles` takes this
      // plan now, and if the batch fails the job stops and `singles` is forgotten (below).
      singles.apply(plan.singles)
      let next: { rows: ScannedRows; plan: Promise<BatchPlan> } | undefined
      if (following !== undefined) {
        const nextRows = await following
        following = readAfter(nextRows)
        if (nextRows.entries.length > 0) {
          next = { rows: nextRows, plan: planBatch(db, nextRows, singles, { touched: plan.singles, written }) }
          next.plan.catch(() => undefined) // awaited below, unless this batch fails first
        }
      }
      await written
      result.removedRevisions += rows.entries.length
      result.removedVersions += plan.removedVersions
      batch = next && { rows: next.rows, plan: await next.plan }
      // Background work yields: writers get (100 - duty)% of the time between batches.
      if (batch !== undefined && pauseFactor > 0) await new Promise((r) => setTimeout(r, (performance.now() - t0) * pauseFactor))
    }
  } catch (err) {
    singles.clear()
    throw err
  }
  return result
}
