/**
 * Real-time order (linearizability of revisions): if A finished before B started, B's revision is at
 * least A's, and strictly above it when B is a write (a write gets a new revision, later than
 * everything already acknowledged or read). Catches stale reads and revisions that go back or are reused
 * after a restart. Reads at an explicit past revision have no point and are not in `points`.
 */
import { describeOp } from '../history.js'
import type { Point } from './operations.js'

export function checkRealTimeOrder(points: readonly Point[], sink: (v: string) => void): void {
  const byStart = [...points].sort((a, b) => a.op.start - b.op.start)
  const byEnd = [...points].sort((a, b) => a.op.end - b.op.end)
  let j = 0
  let max: Point | undefined
  for (const b of byStart) {
    // Every operation that ended before b started.
    while (j < byEnd.length && byEnd[j].op.end < b.op.start) {
      if (max === undefined || byEnd[j].revision > max.revision) max = byEnd[j]
      j++
    }
    if (max === undefined) continue
    if (b.write ? b.revision <= max.revision : b.revision < max.revision) {
      sink(
        `[linearizable] ${describeOp(b.op)} started after ${describeOp(max.op)} had finished, but its revision ${b.revision} is ${b.write ? 'not above' : 'below'} ${max.revision}`,
      )
    }
  }
}
