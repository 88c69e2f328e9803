/**
 * DELETE /v1/kv — query: key|keyBase64, [prefix | fromKey | rangeEnd|rangeEndBase64], prevKv.
 * { header: { revision }, deleted, prevKvs? }; deleting nothing writes nothing and gets no revision.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { kvToJson } from '../../codec.js'
import { KEY_SELECTION_PARAMS, keySelection, onlyFields, queryBool, type Query } from '../../params.js'

export function kvDeleteRoute(app: FastifyInstance, log: Log): void {
  app.delete('/v1/kv', async (request) => {
    const q = request.query as Query
    onlyFields(q, [...KEY_SELECTION_PARAMS, 'prevKv'], '')
    const { key, rangeEnd } = keySelection(q, { prefix: queryBool(q, 'prefix'), fromKey: queryBool(q, 'fromKey') })
    const r = await log.delete(key, { rangeEnd, prevKv: queryBool(q, 'prevKv') })
    const body: Record<string, unknown> = { header: { revision: r.revision }, deleted: r.deleted }
    if (r.prevKvs) body.prevKvs = r.prevKvs.map((kv) => kvToJson(kv))
    return body
  })
}
