/**
 * POST /v1/compact — body { revision }. Raises the compact revision (never lowers it: at or below the
 * current one is COMPACTED, above the current revision FUTURE_REVISION) and answers when the history
 * below it is removed.
 */
import type { FastifyInstance } from 'fastify'
import type { AutoCompactor } from '../../../compaction/index.js'
import type { Log } from '../../../log/backend.js'
import { onlyFields, revisionBody, type Query } from '../../params.js'

export function compactRoute(app: FastifyInstance, log: Log, compactor: AutoCompactor): void {
  app.post('/v1/compact', async (request) => {
    onlyFields(request.query as Query, [], '')
    const r = await compactor.compactNow(revisionBody(request.body))
    return { header: { revision: log.revision }, ...r }
  })
}
