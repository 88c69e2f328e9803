/**
 * Auth on the native door, switched and read:
 *   GET  /v1/auth/status    { header, enabled, authRevision }   (anyone)
 *   POST /v1/auth/enable    needs role root once enabled; user root must exist and hold role root
 *   POST /v1/auth/disable   needs role root
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import type { AuthAdmin } from '../../auth/admin.js'
import { currentCaller } from '../../auth/guarded-log.js'
import { onlyFields, type Query } from '../../params.js'

export function authStatusRoutes(app: FastifyInstance, log: Log, admin: AuthAdmin): void {
  app.get('/v1/auth/status', async (request) => {
    onlyFields(request.query as Query, [], '')
    return { header: { revision: log.revision }, ...admin.status() }
  })

  for (const [path, act] of [
    ['/v1/auth/enable', () => admin.enable(currentCaller())],
    ['/v1/auth/disable', () => admin.disable(currentCaller())],
  ] as const) {
    app.post(path, async (request) => {
      onlyFields(request.query as Query, [], '')
      await act()
      return { header: { revision: log.revision }, ...admin.status() }
    })
  }
}
