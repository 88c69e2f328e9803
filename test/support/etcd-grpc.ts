/**
 * A raw gRPC client for kvlog's etcd door, built from the same .proto files (apiserver/etcd/proto.ts), for
 * tests that need exact control of requests (fragments, progress requests, bad ids) beyond etcdctl.
 */
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  type Client,
  type ChannelCredentials,
  type ChannelOptions,
  type ClientDuplexStream,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js'
import { serviceDefinition, type Message } from '../../apiserver/etcd/proto.js'

type Unary = (request: Message, metadata: Metadata, callback: (err: ServiceError | null, response: Message) => void) => void

export interface EtcdGrpc {
  /** `metadata`: e.g. etcd's `token` for auth. */
  call(service: string, method: string, request?: Message, metadata?: Metadata): Promise<Message>
  stream(service: string, method: string, metadata?: Metadata): ClientDuplexStream<Message, Message>
  /** A server stream (Maintenance.Snapshot) collected into an array. */
  collect(service: string, method: string, request?: Message): Promise<Message[]>
  close(): void
}

/**
 * `define` gives the service definition for a service name ('KV', 'Watch', ...): by default from our own
 * .proto files; test/support/etcd3-proto.ts passes the etcd3 package's copy of etcd's, for tests that
 * also run against a real etcd.
 */
export function etcdGrpc(
  address: string,
  creds: ChannelCredentials = credentials.createInsecure(),
  define: (service: string) => ServiceDefinition = (service) => serviceDefinition(`etcdserverpb.${service}`),
  options: ChannelOptions = {},
): EtcdGrpc {
  const clients = new Map<string, Client & Record<string, unknown>>()
  const client = (service: string) => {
    let c = clients.get(service)
    if (c === undefined) {
      const Ctor = makeGenericClientConstructor(define(service), service)
      c = new Ctor(address, creds, options) as Client & Record<string, unknown>
      clients.set(service, c)
    }
    return c
  }
  return {
    call: (service, method, request = {}, metadata = new Metadata()) =>
      new Promise((resolve, reject) => {
        const c = client(service)
        ;(c[method] as Unary).call(c, request, metadata, (err, response) => (err ? reject(err) : resolve(response)))
      }),
    stream: (service, method, metadata = new Metadata()) => {
      const c = client(service)
      return (c[method] as (m: Metadata) => ClientDuplexStream<Message, Message>).call(c, metadata)
    },
    collect: (service, method, request = {}) =>
      new Promise((resolve, reject) => {
        const c = client(service)
        const out: Message[] = []
        const s = (c[method] as (r: Message) => NodeJS.ReadableStream).call(c, request)
        s.on('data', (m: Message) => out.push(m))
        s.on('end', () => resolve(out))
        s.on('error', reject)
      }),
    close: () => {
      for (const c of clients.values()) c.close()
    },
  }
}

/** Reads responses from a bidi stream one at a time. */
export function responses(stream: ClientDuplexStream<Message, Message>): { next(timeoutMs?: number): Promise<Message> } {
  const queue: Message[] = []
  const waiting: Array<(m: Message) => void> = []
  stream.on('data', (m: Message) => {
    const w = waiting.shift()
    if (w) w(m)
    else queue.push(m)
  })
  stream.on('error', () => undefined)
  return {
    next: (timeoutMs = 5000) => {
      const m = queue.shift()
      if (m !== undefined) return Promise.resolve(m)
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no response in time')), timeoutMs)
        waiting.push((msg) => {
          clearTimeout(t)
          resolve(msg)
        })
      })
    },
  }
}
