/**
 * The background compactor: every compactionCheckInterval it plans a floor (policy.ts), compacts to it
 * through the log (batched, crash-safe, interleaved with writes: log/level/compaction/compactor.ts), gives disk space back,
 * and keeps the NOSPACE alarm in step with the quota:
 *
 *   over quota ──▶ compact to current - minRetain ──▶ reclaim space ──▶ still over? ──▶ NOSPACE on
 *   NOSPACE on and size back under the quota ──▶ NOSPACE off (also by hand: clearAlarm)
 *
 * Manual compaction (POST /v1/compact) goes through compactNow() so its results are counted too.
 */
import type { Log } from '../log/backend.js'
import type { CompactResult } from '../log/types.js'
import type { Cursors } from './cursors.js'
import { planFloor, type RetentionPolicy } from './policy.js'

export interface CompactionRun {
  at: string
  floor: number
  removedRevisions: number
  removedVersions: number
  /** Database bytes before minus after (after reclaiming), 0 if it grew. */
  bytesFreed: number
  durationMs: number
  reasons: string[]
}

export interface CompactionStats {
  floor: number
  runs: number
  removedRevisionsTotal: number
  bytesFreedTotal: number
  last?: CompactionRun
  /** Compaction in progress (scheduled, not finished): target and next revision to remove. */
  inProgress?: { target: number; progress: number }
}

/** Reclaim space after a run that removed at least this many revisions (or whenever over the quota). */
const RECLAIM_AFTER = 10_000

export class AutoCompactor {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false
  private readonly totals = { runs: 0, removedRevisions: 0, bytesFreed: 0 }
  private last: CompactionRun | undefined
  /** A floor planned or requested but maybe not yet raised in the log (see Cursors' floor). */
  private pending = 0

  constructor(
    private readonly log: Log,
    private readonly cursors: Cursors,
    private readonly policy: RetentionPolicy,
    private readonly checkIntervalMs: number,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.check().catch(this.onError), this.checkIntervalMs)
    this.timer.unref()
  }

  /**
   * Stops the checks. A compaction in progress is not awaited here: closing the log stops it once the
   * batches being written are durable (it resumes on the next start), and the check then ends without
   * touching the log.
   */
  stop(): void {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
  }

  /** One policy check; overlapping calls share the run in progress. */
  check(): Promise<void> {
    this.running ??= this.runCheck().finally(() => (this.running = undefined))
    return this.running
  }

  /** The highest floor planned or requested so far (the log's floor rises to it asynchronously). */
  pendingFloor(): number {
    return this.pending
  }

  /**
   * A manual compaction to `revision`, counted in the stats. With physical: false (etcd's default) it
   * answers once the floor is durable; the removal then runs in the background and is not counted.
   */
  async compactNow(revision: number, options: { physical?: boolean } = {}): Promise<CompactResult> {
    if (options.physical === false) {
      const scheduled = this.log.compact(revision, { physical: false })
      if (revision <= this.log.revision) this.pending = Math.max(this.pending, revision)
      return scheduled
    }
    const before = (await this.log.status()).dbSize
    const compacting = this.log.compact(revision)
    if (revision <= this.log.revision) this.pending = Math.max(this.pending, revision)
    const result = await compacting
    this.record(result, before, (await this.log.status()).dbSize, ['manual'])
    return result
  }

  stats(): CompactionStats {
    return {
      floor: this.log.compactRevision,
      runs: this.totals.runs,
      removedRevisionsTotal: this.totals.removedRevisions,
      bytesFreedTotal: this.totals.bytesFreed,
      ...(this.last ? { last: this.last } : {}),
    }
  }

  private async runCheck(): Promise<void> {
    if (this.stopped) return
    const status = await this.log.status()
    // In a cluster, compaction is an entry in the log: only the leader decides it.
    if (status.cluster !== undefined && status.cluster.role !== 'leader') return
    const p = this.policy
    const window = p.mode === 'periodic' && p.durationMs > 0 ? await this.log.revisionAt(Date.now() - p.durationMs) : undefined
    // From here to the compact() call nothing awaits: the plan sees every cursor commit accepted so far,
    // and the floor rises before another can be accepted below it.
    const positions = this.cursors.positions()
    const plan = planFloor(p, {
      current: this.log.revision,
      compactRevision: this.log.compactRevision,
      dbSize: status.dbSize,
      firstRevisionInWindow: window,
      cursors: positions,
    })
    const expired = this.cursors.expire(plan.expire, positions)
    const compacted = plan.target === undefined ? undefined : this.log.compact(plan.target)
    if (plan.target !== undefined) this.pending = Math.max(this.pending, plan.target)
    await expired
    let size = status.dbSize
    if (compacted !== undefined) {
      const result = await compacted
      if (this.stopped) return
      if (plan.overQuota || result.removedRevisions >= RECLAIM_AFTER) await this.log.reclaimSpace()
      size = (await this.log.status()).dbSize
      this.record(result, status.dbSize, size, plan.reasons)
    } else if (plan.overQuota) {
      // Also while the alarm is on: without a reclaim the size (with LevelDB's write-ahead log) may
      // never be measured back under the quota, and the alarm would never clear.
      await this.log.reclaimSpace()
      size = (await this.log.status()).dbSize
    }
    if (p.quotaBytes > 0 && !this.stopped) await this.log.setAlarm('NOSPACE', size > p.quotaBytes, { automatic: true })
  }

  private record(result: CompactResult, before: number, after: number, reasons: string[]): void {
    const bytesFreed = Math.max(0, before - after)
    this.totals.runs++
    this.totals.removedRevisions += result.removedRevisions
    this.totals.bytesFreed += bytesFreed
    this.last = {
      at: new Date().toISOString(),
      floor: result.compactRevision,
      removedRevisions: result.removedRevisions,
      removedVersions: result.removedVersions,
      bytesFreed,
      durationMs: result.durationMs,
      reasons,
    }
  }
}
