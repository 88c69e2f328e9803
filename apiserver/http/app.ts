/**
 * The native HTTP API as a fastify app. Limits come from config: bodyLimit = maxRequestBytes; JSON
 * bodies are parsed with prototype-poisoning protection (fastify's default: `__proto__` is an error).
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { Config } from '../../config/index.js'
import type { Log } from '../../log/backend.js'
import { handleError } from './errors.js'
import { healthRoutes, type HealthState } from './health.js'
import { errorBody } from './errors.js'

export function buildHttpApp(log: Log, config: Config, state: HealthState): FastifyInstance {
  const app = Fastify({
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
    bodyLimit: config.maxRequestBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    requestTimeout: 60_000,
  })
  app.setErrorHandler(handleError)
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send(errorBody('NOT_FOUND', `no route ${request.method} ${request.url}`))
  })
  healthRoutes(app, log, state)
  return app
}
