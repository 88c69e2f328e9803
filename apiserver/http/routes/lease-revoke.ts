/**
 * DELETE /v1/leases/:id — revokes a lease: its keys are deleted, all in one revision (none when it has no
 * keys). Answers { header: { revision } } with the revision after; LEASE_NOT_FOUND when it does not exist.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { onlyFields, type Query } from '../../params.js'
import { leaseIdParam } from './lease-read.js'

export function leaseRevokeRoute(app: FastifyInstance, log: Log): void {
  app.delete('/v1/leases/:id', async (request) => {
    onlyFields(request.query as Query, [], '')
    const { revision } = await log.leaseRevoke(leaseIdParam(request.params))
    return { header: { revision } }
  })
}
