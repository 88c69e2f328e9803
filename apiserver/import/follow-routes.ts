/**
 * The HTTP face of a server that follows an etcd (etcd-follower.ts), on the native port:
 *
 *   GET  /v1/follow           the follow status: state, revisions, lag in revisions and seconds
 *   POST /v1/follow/cutover   body { timeoutMs? }: waits until the mirror holds etcd's current revision,
 *                             stops following and opens writes; answers the status (state 'cutover',
 *                             cutoverRevision). UNAVAILABLE if the mirror does not catch up in time (it
 *                             goes on following). With auth enabled it needs role root.
 */
import type { FastifyInstance } from 'fastify'
import { KvlogError } from '../../log/index.js'
import type { Authorizer } from '../auth/authorizer.js'
import { currentCaller } from '../auth/guarded-log.js'
import type { EtcdFollower } from './etcd-follower.js'

export function followRoutes(app: FastifyInstance, follower: EtcdFollower, auth: Authorizer, defaultTimeoutMs: number): void {
  app.get('/v1/follow', async () => follower.status())
  app.post('/v1/follow/cutover', async (request) => {
    auth.checkAdmin(currentCaller())
    const body = (request.body ?? {}) as { timeoutMs?: unknown }
    const timeout = body.timeoutMs ?? defaultTimeoutMs
    if (typeof timeout !== 'number' || !Number.isSafeInteger(timeout) || timeout < 0)
      throw new KvlogError('INVALID_ARGUMENT', 'timeoutMs: a whole number of milliseconds', { field: 'timeoutMs' })
    return follower.cutover(timeout)
  })
}
