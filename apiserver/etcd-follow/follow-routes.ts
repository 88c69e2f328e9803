/**
 * The HTTP face of a server that follows an etcd (etcd-follower.ts), on the native port:
 *
 *   GET  /v1/follow           the follow status: state, revisions, lag in revisions and seconds
 *   POST /v1/follow/cutover   body { timeoutMs? }: waits until the mirror holds etcd's current revision,
 *                             stops following and opens writes; answers the status (state 'cutover',
 *                             cutoverRevision). UNAVAILABLE if the mirror does not catch up in time (it
 *                             goes on following). With auth enabled it needs role root.
 *
 * And on /metrics: kvlog_follow_lag_revisions, kvlog_follow_lag_seconds, kvlog_follow_cut_over (0 or 1).
 */
import type { FastifyInstance } from 'fastify'
import { Gauge, type Registry } from 'prom-client'
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

export function followMetrics(registry: Registry, follower: EtcdFollower): void {
  const registers = [registry]
  new Gauge({
    name: 'kvlog_follow_lag_revisions',
    help: "While following an etcd: etcd's last known revision minus this store's.",
    registers,
    collect() {
      this.set(follower.status().lagRevisions)
    },
  })
  new Gauge({
    name: 'kvlog_follow_lag_seconds',
    help: 'While following an etcd: how long ago the oldest etcd revision not applied here became known (0 when caught up).',
    registers,
    collect() {
      this.set(follower.status().lagSeconds)
    },
  })
  new Gauge({
    name: 'kvlog_follow_cut_over',
    help: '1 once the store has cut over from the etcd it followed and takes writes, else 0.',
    registers,
    collect() {
      this.set(follower.writable ? 1 : 0)
    },
  })
}
