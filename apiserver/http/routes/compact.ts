/**
 * POST /v1/compact — body { revision }. Raises the compact revision (never lowers it: at or below the
 * current one is COMPACTED, above the current revision FUTURE_REVISION) and answers when the history
 * below it is removed. With auth enabled it needs role root (it removes everybody's history).
 */
import type { FastifyInstance } from 'fastify'
import type { AutoCompactor } from '../../../compaction/index.js'
import type { Log } from '../../../log/backend.js'
import type { Authorizer } from '../../auth/authorizer.js'
import { currentCaller } from '../../auth/guarded-log.js'
import { onlyFields, revisionBody, type Query } from '../../params.js'

export function compactRoute(app: FastifyInstance, log: Log, compactor: AutoCompactor, auth: Authorizer): void {
  app.post('/v1/compact', async (request) => {
    auth.checkAdmin(currentCaller())
    onlyFields(request.query as Query, [], '')
    const r = await compactor.compactNow(revisionBody(request.body))
    return { header: { revision: log.revision }, ...r }
  })
}
