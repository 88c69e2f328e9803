/**
 * GET /v1/history/buckets — how many revisions (write transactions) committed per time bucket, for a
 * timeline of the retained history.
 *
 * Query: `fromTime`, `toTime` (ISO 8601; default: the commit time of the compact revision's segment
 * start .. now), `buckets` (1..maxHistoryBuckets, default 120). Each bucket is [start, start + bucketMs);
 * its `firstRevision` is the first revision committed in it or after it, so the count of a bucket is the
 * next bucket's firstRevision minus its own. The cost is one binary search over the log per bucket
 * boundary (Log.revisionAt), never a scan, so it is the same on a store of a million revisions.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import { onlyFields, queryInt, queryString, type Query } from '../../params.js'

function time(q: Query, name: string): number | undefined {
  const text = queryString(q, name)
  if (text === undefined) return undefined
  const ms = Date.parse(text)
  if (!Number.isFinite(ms)) throw invalid(name, 'must be an ISO 8601 time, e.g. 2026-11-22T21:00:00Z')
  return ms
}

export function historyBucketsRoute(app: FastifyInstance, log: Log, maxBuckets: number): void {
  app.get('/v1/history/buckets', async (request) => {
    const q = request.query as Query
    onlyFields(q, ['fromTime', 'toTime', 'buckets'], '')
    const count = queryInt(q, 'buckets') ?? Math.min(120, maxBuckets)
    if (count < 1 || count > maxBuckets) throw invalid('buckets', `must be between 1 and ${maxBuckets}`)
    const status = await log.status()
    const oldest = status.segments[0]?.firstTimestamp ?? Date.now()
    const from = time(q, 'fromTime') ?? oldest
    const to = Math.max(time(q, 'toTime') ?? Date.now() + 1, from + count)
    const bucketMs = Math.ceil((to - from) / count)
    const firsts: number[] = []
    for (let i = 0; i <= count; i++) firsts.push(await log.revisionAt(from + i * bucketMs))
    const head = log.revision
    return {
      header: { revision: head, compactRevision: log.compactRevision },
      fromTime: new Date(from).toISOString(),
      bucketMs,
      buckets: firsts.slice(0, count).map((first, i) => ({
        start: new Date(from + i * bucketMs).toISOString(),
        firstRevision: Math.min(first, head + 1),
        revisions: Math.max(0, Math.min(firsts[i + 1], head + 1) - Math.min(first, head + 1)),
      })),
    }
  })
}
