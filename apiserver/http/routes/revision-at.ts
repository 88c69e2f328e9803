/**
 * GET /v1/revision-at?time=T — the store's revision as of a moment: the last revision committed at or
 * before T (ISO 8601). That is the revision to read for "the state at T". A time whose state lies below the
 * compact revision is 410 COMPACTED (details.compactRevision says from where history is kept); a time in
 * the future answers the current revision.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { compacted, invalid } from '../../../log/errors.js'
import { onlyFields, queryString, type Query } from '../../params.js'
import { revisionAsOf } from '../../revision-as-of.js'

export function revisionAtRoute(app: FastifyInstance, log: Log): void {
  app.get('/v1/revision-at', async (request) => {
    const q = request.query as Query
    onlyFields(q, ['time'], '')
    const time = queryString(q, 'time')
    if (time === undefined) throw invalid('time', 'is required (ISO 8601, e.g. 2026-11-22T21:00:00Z)')
    const ms = Date.parse(time)
    if (!Number.isFinite(ms)) throw invalid('time', 'must be an ISO 8601 time, e.g. 2026-11-22T21:00:00Z')
    const revision = await revisionAsOf(log, ms)
    if (revision < log.compactRevision) throw compacted(revision, log.compactRevision, log.revision)
    return { header: { revision: log.revision, compactRevision: log.compactRevision }, revision }
  })
}
