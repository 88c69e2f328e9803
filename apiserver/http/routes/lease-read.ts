/**
 * The lease reads:
 *   GET /v1/leases                  { header, leases: [{ id }] }                       every live lease
 *   GET /v1/leases/:id?keys=true    { header, id, ttl, grantedTtl, keys? }             one lease
 * `ttl` is the seconds left (rounded down), `grantedTtl` the TTL it was granted with; `keys` (with
 * keys=true) are the attached keys as [{ key | keyBase64 }], in key order. A lease that does not exist is
 * 404 LEASE_NOT_FOUND (etcd answers TTL -1 instead; a status code is the HTTP way to say it).
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { KvlogError } from '../../../log/errors.js'
import { leaseFromJson, leaseToJson, putBytes, type JsonObject } from '../../codec.js'
import { onlyFields, queryBool, type Query } from '../../params.js'

/** The `:id` of a lease route: a decimal string (bad ones are INVALID_ARGUMENT on field `id`). */
export function leaseIdParam(params: unknown): bigint {
  return leaseFromJson((params as { id: string }).id, 'id')
}

export function leaseReadRoutes(app: FastifyInstance, log: Log): void {
  app.get('/v1/leases', async (request) => {
    onlyFields(request.query as Query, [], '')
    return { header: { revision: log.revision }, leases: log.leases().map((id) => ({ id: leaseToJson(id) })) }
  })

  app.get('/v1/leases/:id', async (request) => {
    const q = request.query as Query
    onlyFields(q, ['keys'], '')
    const id = leaseIdParam(request.params)
    const withKeys = queryBool(q, 'keys')
    const t = log.leaseTimeToLive(id, { keys: withKeys })
    if (t === undefined) throw new KvlogError('LEASE_NOT_FOUND', `requested lease not found: ${id}`, { lease: id.toString() })
    const out: JsonObject = { header: { revision: log.revision }, id: leaseToJson(t.id), ttl: t.ttl, grantedTtl: t.grantedTtl }
    if (withKeys) {
      out.keys = (t.keys ?? []).map((key) => {
        const o: JsonObject = {}
        putBytes(o, 'key', key)
        return o
      })
    }
    return out
  })
}
