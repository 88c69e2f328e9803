/**
 * POST /v1/auth/authenticate — body { name, password } → { header: { revision }, token }. The token goes
 * in `Authorization: Bearer TOKEN` on later requests (and on the WebSocket upgrade); it is the same kind
 * of token as etcd's Authenticate gives, so either works on every door. With auth disabled:
 * FAILED_PRECONDITION; a wrong name or password: UNAUTHENTICATED; too many failed logins from this
 * address (auth/login-throttle.ts): TOO_MANY_ATTEMPTS.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import type { Authorizer } from '../../auth/authorizer.js'
import { AUTHENTICATE_PATH } from '../../http-caller.js'
import { asObject, onlyFields, type Query } from '../../params.js'

export function authenticateRoute(app: FastifyInstance, log: Log, auth: Authorizer): void {
  app.post(AUTHENTICATE_PATH, async (request) => {
    onlyFields(request.query as Query, [], '')
    const b = asObject(request.body, 'body')
    onlyFields(b, ['name', 'password'], '')
    if (typeof b.name !== 'string') throw invalid('name', 'is required (a string)')
    if (typeof b.password !== 'string') throw invalid('password', 'is required (a string)')
    const token = await auth.store.authenticate(b.name, b.password, request.socket.remoteAddress)
    return { header: { revision: log.revision }, token }
  })
}
