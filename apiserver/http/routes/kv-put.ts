/**
 * PUT /v1/kv — body { key|keyBase64, value|valueBase64, lease?, prevKv?, ignoreValue?, ignoreLease? }.
 * Answers once the write is durable: { header: { revision }, prevKv? }.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import { getBytes, kvToJson, leaseFromJson } from '../../codec.js'
import { asObject, bodyBool, onlyFields, type Query } from '../../params.js'

export function kvPutRoute(app: FastifyInstance, log: Log): void {
  app.put('/v1/kv', async (request) => {
    onlyFields(request.query as Query, [], '')
    const b = asObject(request.body, 'body')
    onlyFields(b, ['key', 'keyBase64', 'value', 'valueBase64', 'lease', 'prevKv', 'ignoreValue', 'ignoreLease'], '')
    const key = getBytes(b, 'key')
    if (key === undefined) throw invalid('key', 'is required (key or keyBase64)')
    const r = await log.put(key, getBytes(b, 'value') ?? Buffer.alloc(0), {
      lease: leaseFromJson(b.lease, 'lease'),
      prevKv: bodyBool(b, 'prevKv', ''),
      ignoreValue: bodyBool(b, 'ignoreValue', ''),
      ignoreLease: bodyBool(b, 'ignoreLease', ''),
    })
    return r.prevKv ? { header: { revision: r.revision }, prevKv: kvToJson(r.prevKv) } : { header: { revision: r.revision } }
  })
}
