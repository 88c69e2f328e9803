/**
 * The etcd client port: the gRPC services (KV, Watch, Lease, Cluster, Maintenance, Auth, Lock, Election) and, on the same port,
 * the JSON gateway, /version, /health, /livez, /readyz and /metrics, as etcd serves them (transport/client-port.ts, on
 * Node's http2).
 *
 * Every call that ends with an error status is logged (logFailedCall), with its method, status, peer and
 * duration.
 *
 * Limits as etcd sets them: a request may be maxRequestBytes plus 512 KiB of gRPC overhead; responses are
 * not limited (a Range may return more than a request may carry). Keepalive: the server pings
 * connections every grpcKeepaliveInterval and drops those that do not answer within grpcKeepaliveTimeout.
 * The HTTP/2 and connection limits are the config's (docs/security.md).
 */
import type { Config } from '../../config/schema.js'
import type { TlsFiles } from '../tls.js'
import { clusterService } from './cluster-service.js'
import { Contenders } from './contenders.js'
import { electionService } from './election-service.js'
import type { CallLogger, EtcdDeps } from './deps.js'
import { authService } from './auth-service.js'
import { DOOR, kvService } from './kv-service.js'
import { ANONYMOUS } from '../auth/authorizer.js'
import { leaseService } from './lease-service.js'
import { lockService } from './lock-service.js'
import { maintenanceService } from './maintenance-service.js'
import { BrowserPolicy } from '../browser-policy.js'
import { gateway } from './gateway/gateway.js'
import { listenClientPort, type ClientPortOptions } from './transport/client-port.js'
import type { Exchange } from './transport/exchange.js'
import type { FailedCall } from './transport/grpc-call.js'
import { STATUS } from './transport/grpc-status.js'
import { GrpcRouter, type ServiceImplementation } from './transport/grpc-router.js'
import { watchService } from './watch-service.js'

/** etcd's grpcOverheadBytes: room for the envelope around a maximal request. */
const GRPC_OVERHEAD_BYTES = 512 * 1024
/** A gateway request body must arrive within this time (slow clients do not hold a handler forever). */
const GATEWAY_BODY_TIMEOUT_MS = 10_000

export interface GrpcListener {
  /** "host:port" as bound. */
  address: string
  url: string
  /** Stops accepting, ends open streams after a grace period. */
  close(graceMs: number): Promise<void>
  /** New TLS connections get these files; open ones keep theirs. False on a plaintext port. */
  setTls(tls: TlsFiles): boolean
}

/** Every service the port serves, by proto name. */
export function etcdServices(deps: EtcdDeps): Array<[string, ServiceImplementation]> {
  const contenders = new Contenders(deps.logs)
  return [
    ['etcdserverpb.KV', kvService(deps)],
    ['etcdserverpb.Watch', watchService(deps)],
    ['etcdserverpb.Lease', leaseService(deps)],
    ['etcdserverpb.Cluster', clusterService(deps)],
    ['etcdserverpb.Maintenance', maintenanceService(deps)],
    ['etcdserverpb.Auth', authService(deps)],
    ['v3lockpb.Lock', lockService(deps, contenders)],
    ['v3electionpb.Election', electionService(deps, contenders)],
  ]
}

/** Starts the client port: gRPC and the JSON gateway. */
export async function startGrpcServer(deps: EtcdDeps, host: string, port: number, tls: TlsFiles | undefined): Promise<GrpcListener> {
  const { config } = deps
  const maxReceive = deps.config.maxRequestBytes + GRPC_OVERHEAD_BYTES
  const services = etcdServices(deps)
  const router = new GrpcRouter(maxReceive, deps.logger === undefined ? undefined : logFailedCall(deps.logger))
  for (const [name, implementation] of services) router.add(name, implementation)
  const http: (exchange: Exchange) => void = gateway({
    services,
    log: deps.logs,
    probes: {
      read: () => deps.logs.probe(),
      // Listing alarms needs no permission (etcd's health check): any caller's view reads them.
      alarms: () => deps.alarms.list(deps.logs.as(ANONYMOUS, DOOR)),
      ready: deps.ready,
    },
    etcdVersion: deps.config.etcdVersion,
    metrics: deps.metrics,
    // Bytes travel in base64 in JSON: 4/3 of a maximal request, plus room for the rest of the object.
    maxBodyBytes: Math.ceil((maxReceive * 4) / 3) + 4096,
    bodyTimeoutMs: GATEWAY_BODY_TIMEOUT_MS,
    browser: new BrowserPolicy({ ...deps.config, listen: deps.config.listenGrpc, simpleBodiesWithoutOrigin: true }),
    maxJsonDepth: deps.config.maxJsonDepth,
  })
  return listenClientPort({
    host,
    port,
    tls,
    ...clientPortLimits(config),
    grpc: (stream, headers) => router.handle(stream, headers),
    http,
  })
}

/** The client port's connection and HTTP/2 limits, from the config. */
export function clientPortLimits(config: Config): Omit<ClientPortOptions, 'host' | 'port' | 'tls' | 'grpc' | 'http'> {
  return {
    keepaliveIntervalMs: config.grpcKeepaliveInterval,
    keepaliveTimeoutMs: config.grpcKeepaliveTimeout,
    keepaliveMinTimeMs: config.grpcKeepaliveMinTime,
    idleTimeoutMs: config.clientPortIdleTimeout,
    maxConnections: config.clientPortMaxConnections,
    maxStreams: config.clientPortMaxStreams,
    unknownProtocolTimeoutMs: config.clientPortUnknownProtocolTimeout,
    http2: {
      maxConcurrentStreams: config.maxConcurrentStreams,
      maxHeaderListSize: config.http2MaxHeaderListSize,
      maxHeaderListPairs: config.http2MaxHeaderListPairs,
      maxSessionMemory: config.http2MaxSessionMemory,
      maxSettings: config.http2MaxSettings,
      maxOutstandingPings: config.http2MaxOutstandingPings,
      maxSessionInvalidFrames: config.http2MaxSessionInvalidFrames,
      maxSessionRejectedStreams: config.http2MaxSessionRejectedStreams,
    },
  }
}

/**
 * One line per failed call, as the native door logs failed requests (apiserver/logging.ts): at info for
 * what the caller can fix (bad input, not found, permission, a deadline), at warn for what the server
 * could not do (INTERNAL, UNKNOWN, UNAVAILABLE, DATA_LOSS).
 */
function logFailedCall(logger: CallLogger): (call: FailedCall) => void {
  return (call) => {
    const line = { door: 'etcd', ...call }
    if (SERVER_SIDE.has(call.grpcStatus)) logger.warn(line, 'request failed')
    else logger.info(line, 'request failed')
  }
}

const SERVER_SIDE = new Set<number>([STATUS.UNKNOWN, STATUS.INTERNAL, STATUS.UNAVAILABLE, STATUS.DATA_LOSS])
