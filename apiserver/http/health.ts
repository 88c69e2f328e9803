/**
 * GET /healthz — the process is up. GET /readyz — the store is open and accepting requests (503 while
 * starting or draining, and in cluster mode while the member lags behind the log). GET /v1/status — revision, compact revision, segments, db size, compaction runs,
 * cursors with their lag, alarms, watchers.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../log/backend.js'
import type { Compaction } from '../../compaction/index.js'
import type { WatchStats } from '../metrics.js'
import { onlyFields, type Query } from '../params.js'
import { errorBody } from './errors.js'

export interface HealthState {
  ready: boolean
  /** Cluster mode: ready only while this member has applied everything the log holds. */
  caughtUp?: () => Promise<boolean>
}

export function healthRoutes(
  app: FastifyInstance,
  log: Log,
  state: HealthState,
  watchStats: () => WatchStats,
  compaction: Compaction,
): void {
  app.get('/healthz', async () => ({ ok: true }))

  app.get('/readyz', async (_request, reply) => {
    if (!state.ready) return reply.status(503).send(errorBody('UNAVAILABLE', 'not ready'))
    if (state.caughtUp !== undefined && !(await state.caughtUp())) {
      return reply.status(503).send(errorBody('UNAVAILABLE', 'not caught up with the cluster log'))
    }
    return { ok: true, revision: log.revision }
  })

  app.get('/v1/status', async (request) => {
    onlyFields(request.query as Query, [], '')
    const s = await log.status()
    const { compaction: inProgress, ...rest } = s
    return {
      header: { revision: s.revision },
      ...rest,
      compaction: { ...compaction.compactor.stats(), ...(inProgress ? { inProgress } : {}) },
      cursors: compaction.cursors.list(),
      alarms: log.alarms(),
      watch: watchStats(),
    }
  })
}
