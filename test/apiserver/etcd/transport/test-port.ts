/** A client port for the transport tests: loopback, a free port, the default limits, `options` over them. */
import { listenClientPort, type ClientPort, type ClientPortOptions } from '../../../../apiserver/etcd/transport/client-port.js'
import { clientPortLimits } from '../../../../apiserver/etcd/server.js'
import { loadConfig } from '../../../../config/load.js'

export function listenTestPort(options: Partial<ClientPortOptions>): Promise<ClientPort> {
  return listenClientPort({
    host: '127.0.0.1',
    port: 0,
    tls: undefined,
    ...clientPortLimits(loadConfig({ argv: [], env: {} }).config),
    grpc: (stream) => stream.close(),
    http: (exchange) => exchange.end(),
    ...options,
  })
}
