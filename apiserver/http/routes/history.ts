/**
 * GET /v1/history — what happened to a key or range between two revisions.
 * Query: key selection, from, to (revisions, inclusive; default: the compact revision .. now), limit
 * (events; a revision is never split), prevKv. Events come with their revision and commit time.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { entryEventsToJson } from '../../codec.js'
import { KEY_SELECTION_PARAMS, keySelection, onlyFields, queryBool, queryInt, type Query } from '../../params.js'

export function historyRoute(app: FastifyInstance, log: Log): void {
  app.get('/v1/history', async (request) => {
    const q = request.query as Query
    onlyFields(q, [...KEY_SELECTION_PARAMS, 'from', 'to', 'limit', 'prevKv'], '')
    const { key, rangeEnd } = keySelection(q, { prefix: queryBool(q, 'prefix'), fromKey: queryBool(q, 'fromKey') })
    const prevKv = queryBool(q, 'prevKv')
    const r = await log.history(key, {
      rangeEnd, fromRevision: queryInt(q, 'from'), toRevision: queryInt(q, 'to'), limit: queryInt(q, 'limit'), prevKv,
    })
    return {
      header: { revision: r.revision, compactRevision: r.compactRevision },
      events: r.entries.flatMap((entry) => entryEventsToJson(entry, prevKv)),
      more: r.more,
      nextRevision: r.nextRevision,
    }
  })
}
