/**
 * The history checker: every guarantee of docs/operations.md over one recorded run (history.ts).
 *
 *   [durability]   acknowledged writes are in the log at their revision, across every restart
 *   [revision]     revisions are never reused or lowered; the compact revision never goes down
 *   [linearizable] real-time order of revisions; reads and txn decisions equal the replayed state
 *   [outcome]      failed writes were not applied, nothing applied twice; unknown outcomes resolved
 *   [ordered] [unique] [atomic] [reliable] [resumable] [bookmarkable] [filtered] [prevKv] [createFlag]
 *                  the watch guarantees (test/apiserver/watch/checker.ts)
 *   [oracle]       the log itself is consistent (prevKv, versions, create revisions follow)
 *
 * Every violation starts with its tag. The checker's own tests (checker.test.ts) feed it histories with
 * one known violation each and assert it reports that tag.
 */
import { checkOracle, checkWatches, summarizeSegment } from '../../apiserver/watch/checker.js'
import type { History } from '../history.js'
import { Timeline } from './model.js'
import { byRevision, checkOperations, type OutcomeStats } from './operations.js'
import { checkRealTimeOrder } from './order.js'
import { checkRecoveries } from './recovery.js'

export interface CheckReport {
  violations: string[]
  /** Violations by tag, e.g. { durability: 1 }. */
  byKind: Record<string, number>
  stats: OutcomeStats & { operations: number; watchEvents: number; logicalWatches: number; segments: number; revisions: number }
}

export interface CheckerOptions {
  /** Most violation messages kept per tag (all are counted). Default 20. */
  maxPerKind?: number
}

export function checkHistory(history: History, options: CheckerOptions = {}): CheckReport {
  const max = options.maxPerKind ?? 20
  const violations: string[] = []
  const byKind: Record<string, number> = {}
  const sink = (v: string) => {
    const kind = /^\[([^\]]+)\]/.exec(v)?.[1] ?? 'other'
    byKind[kind] = (byKind[kind] ?? 0) + 1
    if (byKind[kind] <= max) violations.push(v)
  }
  const timeline = new Timeline(history.oracle)
  for (const v of checkOracle(history.oracle)) sink(v)
  const { points, stats } = checkOperations(history.ops, history.oracle, timeline, sink)
  checkRealTimeOrder(points, sink)
  checkRecoveries(history.recoveries, history.ops, history.watches, byRevision(history.oracle), timeline, sink)
  for (const v of checkWatches(history.oracle, history.watches, { finalRevision: history.finalRevision })) sink(v)
  let watchEvents = 0
  let segments = 0
  for (const w of history.watches) {
    for (const s of w.segments) {
      segments++
      watchEvents += summarizeSegment(s).events
    }
  }
  const revisions = new Set(history.oracle.events.map((e) => e.revision)).size
  return {
    violations,
    byKind,
    stats: { ...stats, operations: history.ops.length, watchEvents, logicalWatches: history.watches.length, segments, revisions },
  }
}
