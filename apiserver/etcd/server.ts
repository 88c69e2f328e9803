/**
 * The etcd client port: the gRPC services (KV, Watch, Lease, Cluster, Maintenance, Auth, Lock, Election) and, on the same port,
 * the JSON gateway, /version, /health and /metrics, as etcd serves them (transport/client-port.ts).
 * `grpcServer: grpc-js` serves gRPC alone with grpc-js instead (kept for comparison: docs/benchmarks.md).
 *
 * Every call that ends with an error status is logged (logFailedCall), with its method, status, peer and
 * duration.
 *
 * Limits as etcd sets them: a request may be maxRequestBytes plus 512 KiB of gRPC overhead; responses are
 * not limited (a Range may return more than a request may carry). Keepalive: the server pings idle
 * connections every grpcKeepaliveInterval and drops those that do not answer within grpcKeepaliveTimeout.
 */
import { Server, ServerCredentials } from '@grpc/grpc-js'
import type { TlsFiles } from '../tls.js'
import { clusterService } from './cluster-service.js'
import { Contenders } from './contenders.js'
import { electionService } from './election-service.js'
import type { CallLogger, EtcdDeps } from './deps.js'
import { authService } from './auth-service.js'
import { kvService } from './kv-service.js'
import { leaseService } from './lease-service.js'
import { lockService } from './lock-service.js'
import { maintenanceService } from './maintenance-service.js'
import { gateway } from './gateway/gateway.js'
import { serviceDefinition } from './proto.js'
import { listenClientPort } from './transport/client-port.js'
import type { Exchange } from './transport/exchange.js'
import type { FailedCall } from './transport/grpc-call.js'
import { STATUS } from './transport/grpc-status.js'
import { GrpcRouter, type ServiceImplementation } from './transport/grpc-router.js'
import { watchService } from './watch-service.js'

/** etcd's grpcOverheadBytes: room for the envelope around a maximal request. */
const GRPC_OVERHEAD_BYTES = 512 * 1024
const UNLIMITED = 2 ** 31 - 1
/** A gateway request body must arrive within this time (slow clients do not hold a handler forever). */
const GATEWAY_BODY_TIMEOUT_MS = 10_000

export interface GrpcListener {
  /** "host:port" as bound. */
  address: string
  url: string
  /** Stops accepting, ends open streams after a grace period. */
  close(graceMs: number): Promise<void>
  /**
   * New TLS connections get these files; open ones keep theirs. False where the listener cannot change
   * its certificate while running (the grpc-js server).
   */
  setTls(tls: TlsFiles): boolean
}

/** Every service the port serves, by proto name. */
export function etcdServices(deps: EtcdDeps): Array<[string, ServiceImplementation]> {
  const contenders = new Contenders(deps.log)
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

/** Starts the client port: gRPC and the JSON gateway (or gRPC alone with grpc-js). */
export async function startGrpcServer(deps: EtcdDeps, host: string, port: number, tls: TlsFiles | undefined): Promise<GrpcListener> {
  if (deps.config.grpcServer === 'grpc-js') return startGrpcJs(deps, host, port, tls)
  const maxReceive = deps.config.maxRequestBytes + GRPC_OVERHEAD_BYTES
  const services = etcdServices(deps)
  const router = new GrpcRouter(maxReceive, deps.logger === undefined ? undefined : logFailedCall(deps.logger))
  for (const [name, implementation] of services) router.add(name, implementation)
  const http: (exchange: Exchange) => void = gateway({
    services,
    log: deps.log,
    probes: { log: deps.log, alarms: deps.alarms, ready: deps.ready },
    etcdVersion: deps.config.etcdVersion,
    metrics: deps.metrics,
    // Bytes travel in base64 in JSON: 4/3 of a maximal request, plus room for the rest of the object.
    maxBodyBytes: Math.ceil((maxReceive * 4) / 3) + 4096,
    bodyTimeoutMs: GATEWAY_BODY_TIMEOUT_MS,
  })
  return listenClientPort({
    host,
    port,
    tls,
    keepaliveIntervalMs: deps.config.grpcKeepaliveInterval,
    keepaliveTimeoutMs: deps.config.grpcKeepaliveTimeout,
    grpc: (stream, headers) => router.handle(stream, headers),
    http,
  })
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

async function startGrpcJs(deps: EtcdDeps, host: string, port: number, tls: TlsFiles | undefined): Promise<GrpcListener> {
  const { config } = deps
  const server = new Server({
    'grpc.max_receive_message_length': config.maxRequestBytes + GRPC_OVERHEAD_BYTES,
    'grpc.max_send_message_length': UNLIMITED,
    'grpc.keepalive_time_ms': config.grpcKeepaliveInterval,
    'grpc.keepalive_timeout_ms': config.grpcKeepaliveTimeout,
    // Channelz keeps per-call statistics nobody reads here; it costs ~5% of a small unary call's CPU.
    'grpc.enable_channelz': 0,
  })
  for (const [name, implementation] of etcdServices(deps)) {
    server.addService(serviceDefinition(name), implementation as Parameters<Server['addService']>[1])
  }
  const credentials =
    tls === undefined
      ? ServerCredentials.createInsecure()
      : ServerCredentials.createSsl(tls.ca ?? null, [{ private_key: tls.key, cert_chain: tls.cert }], tls.ca !== undefined)
  const bracketed = host.includes(':') ? `[${host}]` : host
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${bracketed}:${port}`, credentials, (err, p) => (err ? reject(err) : resolve(p)))
  })
  const address = `${bracketed}:${bound}`
  return {
    address,
    url: `${tls === undefined ? 'http' : 'https'}://${address}`,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.forceShutdown(), graceMs)
        server.tryShutdown(() => {
          clearTimeout(cut)
          resolve()
        })
      }),
    setTls: () => false,
  }
}
