/** GET /metrics — Prometheus text format. */
import type { FastifyInstance } from 'fastify'
import type { Metrics } from '../../metrics.js'

export function metricsRoute(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', async (_request, reply) => {
    void reply.header('content-type', metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}
