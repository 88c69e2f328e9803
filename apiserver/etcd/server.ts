/**
 * The etcd v3 gRPC listener: KV, Watch, Lease, Cluster and Maintenance (Auth and the lock/election
 * services are not served: grpc-js answers UNIMPLEMENTED for them, docs/api.md says why).
 *
 * Limits as etcd sets them: a request may be maxRequestBytes plus 512 KiB of gRPC overhead; responses are
 * not limited (a Range may return more than a request may carry). Keepalive: the server pings idle
 * connections every grpcKeepaliveInterval and drops those that do not answer within grpcKeepaliveTimeout.
 */
import { Server, ServerCredentials } from '@grpc/grpc-js'
import type { TlsFiles } from '../tls.js'
import { clusterService } from './cluster-service.js'
import type { EtcdDeps } from './deps.js'
import { kvService } from './kv-service.js'
import { leaseService } from './lease-service.js'
import { maintenanceService } from './maintenance-service.js'
import { serviceDefinition } from './proto.js'
import { watchService } from './watch-service.js'

/** etcd's grpcOverheadBytes: room for the envelope around a maximal request. */
const GRPC_OVERHEAD_BYTES = 512 * 1024
const UNLIMITED = 2 ** 31 - 1

export interface GrpcListener {
  /** "host:port" as bound. */
  address: string
  url: string
  /** Stops accepting, ends open streams after a grace period. */
  close(graceMs: number): Promise<void>
}

export async function startGrpcServer(deps: EtcdDeps, host: string, port: number, tls: TlsFiles | undefined): Promise<GrpcListener> {
  const { config } = deps
  const server = new Server({
    'grpc.max_receive_message_length': config.maxRequestBytes + GRPC_OVERHEAD_BYTES,
    'grpc.max_send_message_length': UNLIMITED,
    'grpc.keepalive_time_ms': config.grpcKeepaliveInterval,
    'grpc.keepalive_timeout_ms': config.grpcKeepaliveTimeout,
    // Channelz keeps per-call statistics nobody reads here; it costs ~5% of a small unary call's CPU.
    'grpc.enable_channelz': 0,
  })
  server.addService(serviceDefinition('etcdserverpb.KV'), kvService(deps))
  server.addService(serviceDefinition('etcdserverpb.Watch'), watchService(deps))
  server.addService(serviceDefinition('etcdserverpb.Lease'), leaseService(deps))
  server.addService(serviceDefinition('etcdserverpb.Cluster'), clusterService(deps))
  server.addService(serviceDefinition('etcdserverpb.Maintenance'), maintenanceService(deps))
  const credentials = tls === undefined
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
    close: (graceMs) => new Promise<void>((resolve) => {
      const cut = setTimeout(() => server.forceShutdown(), graceMs)
      server.tryShutdown(() => {
        clearTimeout(cut)
        resolve()
      })
    }),
  }
}
