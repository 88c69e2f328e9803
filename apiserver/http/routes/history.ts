/**
 * GET /v1/history — what happened to a key or range between two revisions.
 * Query: key selection, from, to (revisions, inclusive; default: the compact revision .. now) or fromTime,
 * toTime (ISO 8601, by commit time), limit
 * (events; a revision is never split), prevKv. Events come with their revision and commit time.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { entryEventsToJson } from '../../codec.js'
import { invalid } from '../../../log/errors.js'
import { KEY_SELECTION_PARAMS, keySelection, onlyFields, queryBool, queryInt, queryString, type Query } from '../../params.js'

/**
 * A bound given as a revision or as an ISO 8601 time (mapped to the first revision committed at or after
 * it, plus `shift`). A time after the last commit maps to revision + 1 + shift: the caller decides.
 */
async function bound(log: Log, q: Query, revName: string, timeName: string, shift: number): Promise<number | undefined> {
  const rev = queryInt(q, revName)
  const time = queryString(q, timeName)
  if (time === undefined) return rev
  if (rev !== undefined) throw invalid(timeName, `give ${revName} or ${timeName}, not both`)
  const ms = Date.parse(time)
  if (!Number.isFinite(ms)) throw invalid(timeName, 'must be an ISO 8601 time, e.g. 2026-11-22T21:00:00Z')
  return Math.max(1, Math.min(log.revision + 1 + shift, (await log.revisionAt(ms)) + shift))
}

export function historyRoute(app: FastifyInstance, log: Log): void {
  app.get('/v1/history', async (request) => {
    const q = request.query as Query
    onlyFields(q, [...KEY_SELECTION_PARAMS, 'from', 'to', 'fromTime', 'toTime', 'limit', 'prevKv'], '')
    const { key, rangeEnd } = keySelection(q, { prefix: queryBool(q, 'prefix'), fromKey: queryBool(q, 'fromKey') })
    const prevKv = queryBool(q, 'prevKv')
    const fromRevision = await bound(log, q, 'from', 'fromTime', 0)
    // toTime is exclusive of what committed after it: the revision before the first one at or after it.
    const toRevision = await bound(log, q, 'to', 'toTime', -1)
    const limit = queryInt(q, 'limit')
    if (fromRevision !== undefined && fromRevision > log.revision) {
      // fromTime after the last commit: nothing happened since, so no event (not the last one).
      return {
        header: { revision: log.revision, compactRevision: log.compactRevision },
        events: [],
        more: false,
        nextRevision: log.revision + 1,
      }
    }
    const r = await log.history(key, { rangeEnd, fromRevision, toRevision, limit, prevKv })
    return {
      header: { revision: r.revision, compactRevision: r.compactRevision },
      events: r.entries.flatMap((entry) => entryEventsToJson(entry, prevKv)),
      more: r.more,
      nextRevision: r.nextRevision,
    }
  })
}
