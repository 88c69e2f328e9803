/**
 * POST /v1/leases/:id/keepalive — restarts the lease's deadline at its granted TTL (durably, so a restart
 * keeps it). Answers { header, id, ttl }; LEASE_NOT_FOUND when it does not exist (revoked or expired).
 * Refreshing twice is harmless, so clients may retry it.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { leaseToJson } from '../../codec.js'
import { onlyFields, type Query } from '../../params.js'
import { leaseIdParam } from './lease-read.js'

export function leaseKeepAliveRoute(app: FastifyInstance, log: Log): void {
  app.post('/v1/leases/:id/keepalive', async (request) => {
    onlyFields(request.query as Query, [], '')
    // A body is not needed; an empty JSON object is accepted so clients that always send one work.
    if (request.body !== undefined && request.body !== null) onlyFields(request.body as Query, [], '')
    const k = await log.leaseKeepAlive(leaseIdParam(request.params))
    return { header: { revision: log.revision }, id: leaseToJson(k.id), ttl: k.ttl }
  })
}
