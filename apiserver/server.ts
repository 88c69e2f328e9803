/**
 * `kvlog serve`: opens the store, the watch service and the listeners, writes the ready file once every
 * listener accepts connections, and drains on close: stop accepting, send every watch a final progress
 * notice, end the streams, flush queued writes, close the store.
 */
import { rename, rm, writeFile } from 'node:fs/promises'
import type { FastifyBaseLogger } from 'fastify'
import { hostname } from 'node:os'
import { dirname, join } from 'node:path'
import type { Config } from '../config/index.js'
import { parseAddress } from '../config/index.js'
import { retentionPolicy, startCompaction } from '../compaction/index.js'
import { openJetStreamLog, type JetStreamLog } from '../log/jetstream/jetstream-log.js'
import { jetStreamLogOptions } from '../log/jetstream/options.js'
import { openLevelLog } from '../log/level/level-log.js'
import { levelLogOptions, type LevelLogOptions } from '../log/level/options.js'
import { levelReplicaStorage } from '../log/level/replica-storage.js'
import { clusterIdentity } from './cluster-info.js'
import { prefixEnd } from '../log/keys.js'
import { Authorizer } from './auth/authorizer.js'
import { routesOf } from './http/route-list.js'
import { CallerLogs, guardLog } from './auth/guarded-log.js'
import { JwtTokens, parseAuthToken } from './auth/jwt.js'
import { AuthStore } from './auth/store.js'
import { loadTokenFile } from './auth/token-file.js'
import { FailedRequestLog } from './failed-request-log.js'
import { httpCaller } from './http-caller.js'
import { openFollowing } from './etcd-follow/follow-serve.js'
import { followMetrics, followRoutes } from './etcd-follow/follow-routes.js'
import { loadIdentity, Headers } from './etcd/identity.js'
import { startGrpcServer } from './etcd/server.js'
import { Alarms } from './etcd/alarms.js'
import { buildHttpApp } from './http/app.js'
import type { HealthState } from './http/health.js'
import { listenWhileStarting } from './http/starting.js'
import { loadTls, reloadTls, secureContextOptions, type TlsFiles } from './tls.js'
import type { Server as HttpsServer } from 'node:https'
import { applyV8Settings } from './v8-settings.js'
import { instrumentLog, Metrics } from './metrics.js'
import { registerResourceApi } from './resources/index.js'
import { WatchService } from './watch/service.js'
import { lineLogger, logsAt, type LineLogger } from './logging.js'
import { attachWebSocketWatch } from './watch/websocket.js'

/** How long in-flight HTTP requests may take to finish once the server is closing. */
const CLOSE_GRACE_MS = 2000

export interface RunningServer {
  http: string
  /** The etcd gRPC endpoint, "host:port". */
  grpc: string
  /** The server's log (apiserver/logging.ts). */
  logger: FastifyBaseLogger
  /** Every route of the HTTP listener, "METHOD /path" (http/route-list.ts). */
  routes(): string[]
  close(): Promise<void>
  /**
   * Reads the TLS files again (SIGHUP): new connections on both ports get the new certificate, open ones
   * keep theirs. Files that do not load leave the old certificate serving, with an error in the log.
   */
  reloadTls(): Promise<void>
  /** Whether auth is enabled now (it can be turned on and off through the Auth API). */
  authEnabled(): boolean
}

export async function startServer(config: Config): Promise<RunningServer> {
  // Settings that need more than the schema's checks are validated before anything is opened.
  const policy = retentionPolicy(config)
  const tls = await loadTls(config)
  const jwt = parseAuthToken(config.authToken)
  const jwtTokens = jwt === undefined ? undefined : await JwtTokens.load(jwt)
  applyV8Settings(config)
  const level = levelLogOptions(config)
  const say = lineLogger(config)
  const following = config.followEtcd === '' ? undefined : await openFollowing(config, level, (line) => say('info', line))
  const cluster =
    config.natsUrl === '' || following ? undefined : await openWhileStarting(config, tls, () => openClusterMember(config, level, say))
  const store = following?.store ?? cluster ?? (await openLevelLog(level))
  const authStore = await AuthStore.open(store, {
    tokenTtlMs: config.authTokenTtl,
    passwordHashCost: config.authPasswordHashCost,
    maxPendingLogins: config.authMaxPendingLogins,
    hashThreadNice: config.authHashThreadNice,
    hashNormalPerSecond: config.authHashNormalPerSecond,
    ...(jwtTokens !== undefined ? { tokens: jwtTokens } : {}),
    loginThrottle: {
      maxFailuresPerSource: config.loginMaxFailuresPerSource,
      maxFailuresPerUser: config.loginMaxFailuresPerUser,
      maxPendingPerSource: config.loginMaxPendingPerSource,
      windowMs: config.loginFailureWindow,
    },
  })
  const auth = new Authorizer(authStore, config.clientCertAuth, await loadTokenFile(config.tokenAuthFile))
  const metrics = new Metrics(store)
  if (cluster) metrics.setCluster(cluster.metrics)
  const log = instrumentLog(store, metrics)
  const state: HealthState = { ready: false, ...(cluster ? { caughtUp: () => cluster.caughtUp() } : {}) }
  const compaction = await startCompaction(store, config, policy, (err) => app.log.error({ err }, 'automatic compaction failed'))
  const doorLog = guardLog(log, auth)
  const watch = new WatchService(store, {
    ringSize: config.watchRingSize,
    catchUpBatch: config.watchCatchUpBatch,
    progressInterval: config.watchProgressInterval,
    maxWatchersPerConnection: config.maxWatchersPerConnection,
    resolveCursor: (name) => compaction.cursors.resumeRevision(name),
    authorize: (who, spec) => auth.checkRange(who, spec.key, spec.rangeEnd, 'read'),
    reauthorize: (who, spec) => auth.recheck(who, spec.key, spec.rangeEnd),
  })
  // Running watches end when their user loses the right to them (deleted, password changed, permission
  // revoked), on every door that streams through the watch service.
  const stopRecheck = auth.onChange(() => watch.recheck())
  metrics.setWatchStats(() => watch.stats())
  metrics.setCompaction(compaction)
  const failedRequests = new FailedRequestLog(config.logFailedRequestsPerSecond)
  const app = buildHttpApp({ log: doorLog, config, metrics, state, watch, compaction, tls, auth, failedRequests })
  registerResourceApi(app, {
    log: doorLog,
    systemLog: log,
    startupLog: log,
    watch,
    config,
    callerOf: (request) => httpCaller(auth, request),
    authorizeRead: (who, prefix) => auth.checkRange(who, prefix, prefixEnd(Buffer.from(prefix)), 'read'),
    whileAuthorized: (who, prefix, denied) => {
      const stop = auth.onChange(() => {
        try {
          auth.recheck(who, prefix, prefixEnd(Buffer.from(prefix)))
        } catch (err) {
          stop()
          denied(err)
        }
      })
      return stop
    },
  })
  if (following) {
    followRoutes(app, following.follower, auth, config.followEtcdCutoverTimeout)
    followMetrics(metrics.registry, following.follower)
  }
  const websockets = attachWebSocketWatch(app.server, watch, auth, {
    maxPayload: config.wsMaxPayload,
    heartbeatInterval: config.wsHeartbeatInterval,
    maxBufferedBytes: config.wsMaxBufferedBytes,
  })
  const { host, port } = parseAddress(config.listenHttp)
  await app.listen({ host, port })
  const address = app.server.address()
  const bound = typeof address === 'object' && address !== null ? address.port : port
  const http = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${bound}`
  const headers = new Headers(cluster ? clusterIdentity(cluster) : await loadIdentity(store), log)
  const grpcAddress = parseAddress(config.listenGrpc)
  const callerLogs = new CallerLogs(log, auth)
  const grpc = await startGrpcServer(
    {
      logs: callerLogs,
      headers,
      compactor: compaction.compactor,
      watch,
      config,
      // host:port without a scheme: etcdctl 3.4 dials a listed URL as given and sends it whole as the
      // HTTP/2 :authority, which nghttp2 refuses with a '/' in it (`endpoint status --cluster` would fail).
      clientUrl: () => grpc.address,
      auth,
      metrics: async () => ({ contentType: metrics.registry.contentType, text: await metrics.registry.metrics() }),
      logger: failedRequests.limited(app.log),
      alarms: new Alarms(headers.identity.memberId, (listener) => callerLogs.onMeta(listener)),
      ready: async () => state.ready && (state.caughtUp === undefined || (await state.caughtUp())),
      ...(cluster ? { cluster } : {}),
    },
    grpcAddress.host,
    grpcAddress.port,
    tls,
  )
  // Listed with its address (MemberList) before it reports itself ready.
  if (cluster && cluster.clientUrls.length === 0) await cluster.announce([grpc.address])
  state.ready = true
  if (config.readyFile !== '')
    await writeAtomically(config.readyFile, JSON.stringify({ pid: process.pid, http, grpc: grpc.address }) + '\n')

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      state.ready = false
      watch.drain()
      await Promise.all([websockets.close(), grpc.close(CLOSE_GRACE_MS)])
      // In-flight requests get a moment to finish; then every connection is cut, including ones that
      // never sent a request (Node does not count those as idle).
      const cut = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS)
      await app.close()
      clearTimeout(cut)
      failedRequests.flush()
      stopRecheck()
      compaction.stop()
      await following?.follower.close()
      authStore.close()
      await store.close()
      // A stale ready file would point the next reader at a dead address.
      if (config.readyFile !== '') await rm(config.readyFile, { force: true })
    })()
    return closing
  }
  const reload = async () => {
    if (tls === undefined) return app.log.warn('SIGHUP: TLS is not configured; nothing to reload')
    let files: TlsFiles | undefined
    try {
      files = await reloadTls(config)
    } catch (err) {
      return app.log.error({ err }, 'TLS reload failed; the previous certificate stays in use')
    }
    if (files === undefined) return
    ;(app.server as HttpsServer).setSecureContext(secureContextOptions(files))
    grpc.setTls(files)
    app.log.info('TLS certificate reloaded')
  }
  return {
    http,
    grpc: grpc.address,
    logger: app.log,
    routes: () => routesOf(app),
    close,
    reloadTls: reload,
    authEnabled: () => authStore.enabled,
  }
}

/**
 * Cluster mode: this member of the cluster whose log is the JetStream stream at config.natsUrl. Retries
 * an unreachable NATS with a log line per try; refuses a stream that is not this cluster's; catches up.
 */
async function openClusterMember(config: Config, level: LevelLogOptions, say: LineLogger): Promise<JetStreamLog> {
  const memberName =
    config.memberName === 'default'
      ? `${hostname().replace(/[^A-Za-z0-9_-]/g, '_')}-${parseAddress(config.listenGrpc).port}`
      : config.memberName
  const member = await openJetStreamLog(
    jetStreamLogOptions(config, {
      memberName,
      copy: levelReplicaStorage(level),
      log: (line, level) => say(level ?? 'info', line),
      debug: logsAt(config, 'debug'),
    }),
  )
  // The doors open once this member's copy has what the log held at start (reads would wait anyway).
  await member.waitCaughtUp().catch(async (err) => {
    await member.close()
    throw err
  })
  return member
}

/** Cluster mode: /readyz answers 503 (not a refused connection) while the member opens its log. */
async function openWhileStarting<T>(config: Config, tls: TlsFiles | undefined, open: () => Promise<T>): Promise<T> {
  const { host, port } = parseAddress(config.listenHttp)
  const starting = await listenWhileStarting(host, port, tls)
  try {
    return await open()
  } finally {
    await starting.close()
  }
}

/** Write to a temp file beside the target, then rename: readers never see a partial file. */
async function writeAtomically(path: string, content: string): Promise<void> {
  const tmp = join(dirname(path), `.${process.pid}.${Date.now()}.tmp`)
  await writeFile(tmp, content)
  await rename(tmp, path)
}
