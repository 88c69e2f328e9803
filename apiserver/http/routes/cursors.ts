/**
 * Consumer cursors (compaction/cursors.ts):
 *   GET /v1/cursors                          list, with each cursor's lag behind the head
 *   PUT /v1/cursors/:name   { revision }     commit: the consumer processed everything up to revision
 *   DELETE /v1/cursors/:name                 forget it (it no longer holds compaction back)
 * A watch resumes from a cursor with the `cursor` option (docs/api.md). With auth enabled, committing and
 * deleting need role root: a cursor holds compaction back for every key.
 */
import type { FastifyInstance } from 'fastify'
import type { Cursors } from '../../../compaction/index.js'
import type { Log } from '../../../log/backend.js'
import type { Authorizer } from '../../auth/authorizer.js'
import { currentCaller } from '../../auth/guarded-log.js'
import { onlyFields, revisionBody, type Query } from '../../params.js'

export function cursorRoutes(app: FastifyInstance, log: Log, cursors: Cursors, auth: Authorizer): void {
  app.get('/v1/cursors', async (request) => {
    onlyFields(request.query as Query, [], '')
    return { header: { revision: log.revision }, cursors: cursors.list() }
  })

  app.put('/v1/cursors/:name', async (request) => {
    auth.checkAdmin(currentCaller())
    onlyFields(request.query as Query, [], '')
    const cursor = await cursors.commit((request.params as { name: string }).name, revisionBody(request.body))
    return { header: { revision: log.revision }, cursor: { ...cursor, lag: log.revision - cursor.revision } }
  })

  app.delete('/v1/cursors/:name', async (request) => {
    auth.checkAdmin(currentCaller())
    onlyFields(request.query as Query, [], '')
    await cursors.delete((request.params as { name: string }).name)
    return { header: { revision: log.revision }, deleted: true }
  })
}
