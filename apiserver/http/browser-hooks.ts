/**
 * The browser policy (../browser-policy.ts) on the native HTTP listener: every request and every WebSocket
 * upgrade is checked before routing. For an origin listed in cors, answers carry CORS headers and a
 * preflight (OPTIONS with Access-Control-Request-Method) is answered 204, so such a page can read and
 * write as a same-origin one can.
 */
import type { FastifyInstance } from 'fastify'
import { KvlogError } from '../../log/errors.js'
import { guardUpgrades } from '../watch/upgrade.js'
import { BrowserPolicy, refusalMessage } from '../browser-policy.js'

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE'
const ALLOW_HEADERS = 'authorization, content-type'

export function browserHooks(app: FastifyInstance, policy: BrowserPolicy): void {
  guardUpgrades(app.server, (request) => {
    const code = policy.refusal({ method: request.method ?? 'GET', headers: request.headers, upgrade: true })
    return code === undefined ? undefined : { code, message: refusalMessage(code) }
  })
  app.addHook('onRequest', async (request, reply) => {
    const code = policy.refusal({ method: request.method, headers: request.headers })
    // Thrown, so each API answers in its own error shape (the resource API's is a Kubernetes Status).
    if (code !== undefined) throw new KvlogError(code, refusalMessage(code))
    const origin = policy.corsOrigin(request.headers)
    if (origin === undefined) return
    void reply.header('access-control-allow-origin', origin).header('vary', 'origin')
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      return reply
        .status(204)
        .header('access-control-allow-methods', ALLOW_METHODS)
        .header('access-control-allow-headers', ALLOW_HEADERS)
        .header('access-control-max-age', '600')
        .send()
    }
  })
}
