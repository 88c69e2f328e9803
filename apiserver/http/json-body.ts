/**
 * JSON bodies on the native HTTP listener (the native API and the resource API under it) held to
 * json-limits.ts: application/json is checked as bytes before it is parsed; a body of another JSON type
 * (the resource API's patches) is checked for depth once parsed, before any route sees it. A DELETE with
 * no body has none, whatever its content type says.
 */
import type { FastifyInstance } from 'fastify'
import { checkJsonBody, jsonValueDepth, tooDeep } from '../json-limits.js'

export function jsonBodyLimits(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // Client libraries send DELETE with a JSON content type and no body (Kubernetes': no DeleteOptions).
    if ((body as Buffer).length === 0 && request.method === 'DELETE') {
      done(null, undefined)
      return
    }
    let text: string
    try {
      text = checkJsonBody(body as Buffer, maxDepth)
    } catch (err) {
      done(err as Error, undefined)
      return
    }
    parse(request, text, done)
  })
  app.addHook('preValidation', async (request) => {
    const type = String(request.headers['content-type'] ?? '')
    if (type.startsWith('application/json') || typeof request.body !== 'object' || request.body === null) return
    if (jsonValueDepth(request.body) > maxDepth) throw tooDeep(maxDepth)
  })
}
