/**
 * POST /v1/leases — body { ttl, id? }: grants a lease (etcd's LeaseGrant). `ttl` in seconds (raised to
 * --lease-min-ttl; above 9,000,000,000 is LEASE_TTL_TOO_LARGE); `id` a decimal string (absent or "0": the
 * server picks one; in use: LEASE_EXISTS). Answers { header, id, ttl } with the TTL granted.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import { leaseFromJson, leaseToJson } from '../../codec.js'
import { asObject, bodyInt, onlyFields, type Query } from '../../params.js'

export function leaseGrantRoute(app: FastifyInstance, log: Log): void {
  app.post('/v1/leases', async (request) => {
    onlyFields(request.query as Query, [], '')
    const b = asObject(request.body, 'body')
    onlyFields(b, ['ttl', 'id'], '')
    const ttl = bodyInt(b, 'ttl', '')
    if (ttl === undefined) throw invalid('ttl', 'is required (seconds)')
    const grant = await log.leaseGrant(ttl, leaseFromJson(b.id, 'id'))
    return { header: { revision: log.revision }, id: leaseToJson(grant.id), ttl: grant.ttl }
  })
}
