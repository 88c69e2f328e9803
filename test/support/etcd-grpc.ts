/**
 * Raw etcd v3 gRPC clients for tests that need exact request shapes (kube-apiserver's txns, watch
 * progress requests) or bad input. The proto is the one the `etcd3` npm package ships (etcd's own
 * rpc.proto/kv.proto), loaded independently of the server's copy, so the tests see the wire as a
 * third-party client does. 64-bit integers come back as decimal strings, enums as their names.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'

const require = createRequire(import.meta.url)
export const ETCD_PROTO = join(dirname(require.resolve('etcd3')), '..', 'proto', 'rpc.proto')

type Ctor = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => grpc.Client

let services: Record<'KV' | 'Watch' | 'Lease' | 'Maintenance' | 'Cluster', Ctor> | undefined

function load() {
  if (services === undefined) {
    const def = protoLoader.loadSync(ETCD_PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true })
    const pkg = (grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: Record<string, Ctor> }).etcdserverpb
    services = { KV: pkg.KV!, Watch: pkg.Watch!, Lease: pkg.Lease!, Maintenance: pkg.Maintenance!, Cluster: pkg.Cluster! }
  }
  return services
}

/** An untyped message: field names as in the proto (snake_case). */
export type Msg = Record<string, unknown>

export interface EtcdGrpc {
  /** Calls a unary method, e.g. call('KV', 'Range', { key }). Rejects with a grpc.ServiceError. */
  call<T = Msg>(service: 'KV' | 'Lease' | 'Maintenance' | 'Cluster', method: string, req: Msg): Promise<T>
  /** Opens the Watch bidi stream. */
  watch(): grpc.ClientDuplexStream<Msg, Msg>
  client(service: 'KV' | 'Watch' | 'Lease' | 'Maintenance' | 'Cluster'): grpc.Client
  close(): void
}

export function connectEtcdGrpc(endpoint: string, options: grpc.ChannelOptions = {}): EtcdGrpc {
  const s = load()
  const clients = new Map<string, grpc.Client>()
  const client = (name: keyof typeof s) => {
    let c = clients.get(name)
    if (c === undefined) {
      c = new s[name](endpoint, grpc.credentials.createInsecure(), options)
      clients.set(name, c)
    }
    return c
  }
  return {
    client,
    call<T>(service: 'KV' | 'Lease' | 'Maintenance' | 'Cluster', method: string, req: Msg) {
      const c = client(service) as unknown as Record<string, (req: Msg, cb: (err: grpc.ServiceError | null, res: T) => void) => void>
      if (typeof c[method] !== 'function') throw new TypeError(`no method ${service}.${method}`)
      return new Promise<T>((resolve, reject) => c[method]!.call(c, req, (err, res) => (err ? reject(err) : resolve(res))))
    },
    watch() {
      return (client('Watch') as unknown as { Watch(): grpc.ClientDuplexStream<Msg, Msg> }).Watch()
    },
    close() {
      for (const c of clients.values()) c.close()
    },
  }
}

/** The end of the range of all keys with this prefix (etcd's GetPrefixRangeEnd). */
export function prefixEnd(prefix: string | Buffer): Buffer {
  const end = Buffer.from(prefix)
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1
      return end.subarray(0, i + 1)
    }
  }
  return Buffer.from([0])
}

/** A Watch stream that keeps every response, for tests that wait for a particular one. */
export interface WatchSession {
  responses: Msg[]
  send(req: Msg): void
  /** Resolves with the first response (counting from `from`) that matches. */
  next(match: (r: Msg) => boolean, o?: { from?: number; timeoutMs?: number }): Promise<Msg>
  error(): grpc.ServiceError | undefined
  end(): void
}

export function openWatch(g: EtcdGrpc): WatchSession {
  const stream = g.watch()
  const responses: Msg[] = []
  let failure: grpc.ServiceError | undefined
  stream.on('data', (r: Msg) => responses.push(r))
  stream.on('error', (e: grpc.ServiceError) => (failure = e))
  return {
    responses,
    send: (req) => stream.write(req),
    error: () => failure,
    async next(match, o = {}) {
      const deadline = Date.now() + (o.timeoutMs ?? 10_000)
      while (true) {
        const found = responses.slice(o.from ?? 0).find(match)
        if (found !== undefined) return found
        if (failure !== undefined) throw failure
        if (Date.now() > deadline) throw new Error(`no matching watch response in ${JSON.stringify(responses)}`)
        await new Promise((r) => setTimeout(r, 10))
      }
    },
    end() {
      stream.cancel()
    },
  }
}

/** The rejection of a call, for asserting on its gRPC status code. */
export async function grpcError(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await p
  } catch (e) {
    return e as grpc.ServiceError
  }
  throw new Error('expected the call to fail')
}

export { grpc }
