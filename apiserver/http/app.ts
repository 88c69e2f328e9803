/**
 * The native HTTP API as a fastify app (docs/api.md). Limits come from config: bodyLimit =
 * maxRequestBytes; JSON bodies must be UTF-8 and at most maxJsonDepth deep (json-body.ts) and are parsed
 * with prototype-poisoning protection (`__proto__` and `constructor.prototype` are errors). Routes: one verb per file under routes/.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { Compaction } from '../../compaction/index.js'
import type { Config } from '../../config/index.js'
import type { Log } from '../../log/backend.js'
import { loggerOptions } from '../logging.js'
import { AuthAdmin } from '../auth/admin.js'
import type { FailedRequestLog } from '../failed-request-log.js'
import type { Authorizer } from '../auth/authorizer.js'
import { identifyRequests } from '../http-caller.js'
import type { Metrics } from '../metrics.js'
import { secureContextOptions, type TlsFiles } from '../tls.js'
import { uiEnabled, uiRoutes } from '../ui-assets.js'
import { ndjsonWatchRoute } from '../watch/ndjson.js'
import type { WatchService } from '../watch/service.js'
import { browserHooks } from './browser-hooks.js'
import { BrowserPolicy } from '../browser-policy.js'
import { jsonBodyLimits } from './json-body.js'
import { clientErrorHandler, errorBody, errorHandler } from './errors.js'
import { healthRoutes, type HealthState } from './health.js'
import { alarmRoutes } from './routes/alarms.js'
import { authenticateRoute } from './routes/auth-authenticate.js'
import { authRoleRoutes } from './routes/auth-roles.js'
import { authStatusRoutes } from './routes/auth-status.js'
import { authUserRoutes } from './routes/auth-users.js'
import { compactRoute } from './routes/compact.js'
import { cursorRoutes } from './routes/cursors.js'
import { historyRoute } from './routes/history.js'
import { historyBucketsRoute } from './routes/history-buckets.js'
import { keyTreeRoute } from './routes/key-tree.js'
import { kvDeleteRoute } from './routes/kv-delete.js'
import { kvPutRoute } from './routes/kv-put.js'
import { kvRangeRoute } from './routes/kv-range.js'
import { leaseGrantRoute } from './routes/lease-grant.js'
import { leaseKeepAliveRoute } from './routes/lease-keepalive.js'
import { leaseReadRoutes } from './routes/lease-read.js'
import { leaseRevokeRoute } from './routes/lease-revoke.js'
import { metricsRoute } from './routes/metrics.js'
import { revertRoute } from './routes/revert.js'
import { revisionAtRoute } from './routes/revision-at.js'
import { snapshotRoute } from './routes/snapshot.js'
import { txnRoute } from './routes/txn.js'
import { recordRoutes } from './route-list.js'

export interface HttpAppDeps {
  log: Log
  config: Config
  metrics: Metrics
  state: HealthState
  watch: WatchService
  compaction: Compaction
  /** Serve HTTPS (and require client certificates when `ca` is set). */
  tls?: TlsFiles
  /** Who may do what; `log` is expected to be the guarded log (auth/guarded-log.ts) that asks it. */
  auth: Authorizer
  /** The budget of "request failed" lines, shared with the etcd door. */
  failedRequests: FailedRequestLog
}

export function buildHttpApp({ log, config, metrics, state, watch, compaction, tls, auth, failedRequests }: HttpAppDeps): FastifyInstance {
  const https = tls && secureContextOptions(tls)
  // An HTTPS app is typed over https.Server; routes and hooks are the same, so it is used as the plain type.
  const app = (Fastify as unknown as (o: object) => FastifyInstance)({
    ...(https ? { https } : {}),
    logger: loggerOptions(config),
    bodyLimit: config.maxRequestBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    requestTimeout: 60_000,
    clientErrorHandler,
  })
  recordRoutes(app)
  // Per-request access logs only at debug: at info a busy datastore would log two lines per request.
  app.addHook('onRoute', (route) => {
    if (!route.logLevel) route.logLevel = config.logLevel === 'debug' || config.logLevel === 'trace' ? config.logLevel : 'warn'
  })
  // One line per request answered with an error status, whatever the route's level (apiserver/logging.ts),
  // within the budget of failed-request-log.ts.
  const failedLog = failedRequests.limited(app.log)
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode < 400) return
    const line = {
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
      remote: request.ip,
    }
    if (reply.statusCode >= 500) failedLog.warn(line, 'request failed')
    else failedLog.info(line, 'request failed')
  })
  app.setErrorHandler(errorHandler(config.maxRequestBytes))
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send(errorBody('NOT_FOUND', `no route ${request.method} ${request.url}`))
  })
  jsonBodyLimits(app, config.maxJsonDepth)
  browserHooks(app, new BrowserPolicy({ cors: config.cors, hostWhitelist: config.hostWhitelist, listen: config.listenHttp }))
  identifyRequests(app, auth, config.authorAgentMaxChars)
  healthRoutes(app, log, state, () => watch.stats(), compaction)
  authenticateRoute(app, log, auth)
  const authAdmin = new AuthAdmin(auth)
  authStatusRoutes(app, log, authAdmin)
  authUserRoutes(app, log, authAdmin)
  authRoleRoutes(app, log, authAdmin)
  kvRangeRoute(app, log, config.maxRequestBytes)
  kvPutRoute(app, log)
  kvDeleteRoute(app, log)
  txnRoute(app, log, config.maxTxnDepth)
  historyRoute(app, log)
  historyBucketsRoute(app, log, config.historyMaxBuckets)
  revisionAtRoute(app, log)
  keyTreeRoute(app, log, config.keyTreeMaxChildren)
  revertRoute(app, log)
  compactRoute(app, log, compaction.compactor, auth)
  cursorRoutes(app, log, compaction.cursors, auth)
  alarmRoutes(app, log)
  leaseGrantRoute(app, log)
  leaseReadRoutes(app, log)
  leaseKeepAliveRoute(app, log)
  leaseRevokeRoute(app, log)
  snapshotRoute(app, log)
  metricsRoute(app, metrics)
  ndjsonWatchRoute(app, watch)
  if (uiEnabled(config.ui, config.listenHttp)) uiRoutes(app)
  return app
}
