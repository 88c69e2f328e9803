/**
 * Key intervals for permission checks, with etcd's conventions for what a (key, rangeEnd) pair means:
 * no or empty rangeEnd = the one key; rangeEnd = "\0" = every key >= key (open-ended); otherwise
 * [key, rangeEnd). A single key k is the interval [k, k + "\0").
 *
 * A request on [a, b) is permitted when the union of the user's permitted intervals covers all of it
 * (etcd's rule: a range read that reaches one forbidden key is denied as a whole). The union is kept
 * merged and sorted, so covered means: inside one merged interval.
 */

const ZERO = Buffer.from([0])

/** end undefined = open-ended (no upper bound). */
export interface Interval {
  begin: Buffer
  end: Buffer | undefined
}

export function toInterval(key: Uint8Array, rangeEnd?: Uint8Array): Interval {
  const begin = Buffer.from(key)
  if (rangeEnd === undefined || rangeEnd.length === 0) return { begin, end: Buffer.concat([begin, ZERO]) }
  if (rangeEnd.length === 1 && rangeEnd[0] === 0) return { begin, end: undefined }
  return { begin, end: Buffer.from(rangeEnd) }
}

/** a <= b for interval ends, where undefined is +infinity. */
function endLe(a: Buffer | undefined, b: Buffer | undefined): boolean {
  if (b === undefined) return true
  if (a === undefined) return false
  return Buffer.compare(a, b) <= 0
}

function isEmpty(i: Interval): boolean {
  return i.end !== undefined && Buffer.compare(i.begin, i.end) >= 0
}

/** Sorted, disjoint, non-adjacent intervals covering the same keys as `intervals`. */
export function mergeIntervals(intervals: Interval[]): Interval[] {
  const sorted = intervals.filter((i) => !isEmpty(i)).sort((a, b) => Buffer.compare(a.begin, b.begin))
  const out: Interval[] = []
  for (const i of sorted) {
    const last = out[out.length - 1]
    // Overlapping or touching (last.end >= i.begin): extend the last one.
    if (last !== undefined && (last.end === undefined || Buffer.compare(last.end, i.begin) >= 0)) {
      if (!endLe(i.end, last.end)) last.end = i.end
    } else {
      out.push({ begin: i.begin, end: i.end })
    }
  }
  return out
}

/** Whether `merged` (from mergeIntervals) covers every key of `query`. An empty query is covered. */
export function covers(merged: Interval[], query: Interval): boolean {
  if (isEmpty(query)) return true
  // The last merged interval that begins at or before the query's begin is the only candidate.
  let lo = 0
  let hi = merged.length - 1
  let at = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (Buffer.compare(merged[mid].begin, query.begin) <= 0) {
      at = mid
      lo = mid + 1
    } else {
      hi = mid - 1
    }
  }
  return at >= 0 && endLe(query.end, merged[at].end)
}
