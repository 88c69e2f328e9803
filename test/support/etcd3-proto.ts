/**
 * Raw etcd v3 gRPC clients for tests that run against a real etcd AND kvlog with exact request shapes
 * (kube-apiserver's txns, watch progress requests) or bad input. The services come from the proto the
 * `etcd3` npm package ships (etcd's own rpc.proto/kv.proto), independent of the server's copy, so the
 * tests see the wire as a third-party client does. 64-bit integers come back as decimal strings, enums
 * as that proto's names (Put, Mod, Equal: not etcd's PUT, MOD, EQUAL; the numbers are etcd's).
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { etcdGrpc, type EtcdGrpc } from './etcd-grpc.js'
import { rejection } from './rejection.js'
import { sleep } from './wait.js'

const require = createRequire(import.meta.url)
export const ETCD3_PROTO = join(dirname(require.resolve('etcd3')), '..', 'proto', 'rpc.proto')

let definitions: protoLoader.PackageDefinition | undefined

/** The grpc-js service definition of an etcd service ('KV', 'Watch', 'Lease', ...) from the etcd3 proto. */
export function etcd3Service(service: string): grpc.ServiceDefinition {
  definitions ??= protoLoader.loadSync(ETCD3_PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true })
  const d = definitions[`etcdserverpb.${service}`]
  if (d === undefined) throw new TypeError(`no service etcdserverpb.${service} in ${ETCD3_PROTO}`)
  return d as grpc.ServiceDefinition
}

/** A client for any etcd v3 endpoint (a real etcd or kvlog), plaintext. */
export function connectEtcd3(endpoint: string): EtcdGrpc {
  return etcdGrpc(endpoint, grpc.credentials.createInsecure(), etcd3Service)
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

/** The rejection of a call, for asserting on its gRPC status code. */
export async function grpcError(p: Promise<unknown>): Promise<grpc.ServiceError> {
  return (await rejection(p, 'the call')) as unknown as grpc.ServiceError
}

type Msg = Record<string, unknown>

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
  const stream = g.stream('Watch', 'Watch')
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
        await sleep(10)
      }
    },
    end() {
      stream.cancel()
    },
  }
}

export { grpc }
