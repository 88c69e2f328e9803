/**
 * The etcd v3 gRPC front door as a reliability driver, on @grpc/grpc-js with the etcd3 package's own
 * rpc.proto (a client-side copy of etcd's API, so the wire format is checked against what real etcd
 * clients send). Raw gRPC rather than the etcd3 client: its watcher resumes by itself and would hide the
 * very stream the checker must see.
 *
 * Watch responses are recorded in the native wire shape (test/support/watch-client.ts): created,
 * events (fragments joined), progress (a response with no events; watch_id -1 answers a progress
 * request for every watch of the stream), canceled (COMPACTED when compact_revision is set).
 *
 * Outcomes: a call that failed with UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED or UNKNOWN may have reached
 * the server (unknown); any other status is the server's answer (fail, with the kvlog code read from the
 * etcd error message where etcd has one).
 *
 * With credentials (auth enabled), every call carries the `token` metadata: a fixed token, or one from
 * Auth.Authenticate. A call refused as UNAUTHENTICATED (the token expired or the server restarted) was not
 * applied: the driver authenticates again and sends it once more, as etcd's clients do. A login that
 * fails means the operation was never sent (fail, code LOGIN_...); one answered FAILED_PRECONDITION (auth
 * is not enabled) means calls go without a token, as the native client does (clients/auth.ts).
 */
import * as grpc from '@grpc/grpc-js'
import * as loader from '@grpc/proto-loader'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { prefixEnd } from '../../apiserver/watch/checker.js'
import { MessageBook, type CreateRequest, type WireEvent, type WireKv } from '../../support/watch-client.js'
import type { KeySelection, Operation, OpResult, TxnCompare, TxnOp, TxnOpResult } from '../history.js'
import type { Credentials } from '../../../clients/auth.js'
import type { Classified, Door, Driver, WatchConn } from './types.js'

type Json = Record<string, unknown>
type Unary = (
  request: Json,
  metadata: grpc.Metadata,
  options: { deadline: number },
  callback: (err: grpc.ServiceError | null, response: Json) => void,
) => void
type ServiceClient = grpc.Client & Record<string, Unary>
type ClientCtor = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ClientOptions) => ServiceClient

const PROTO = join(dirname(createRequire(import.meta.url).resolve('etcd3')), '..', 'proto', 'rpc.proto')

/** Logins per call when the token in use has ended (see call()). */
const LOGIN_ATTEMPTS = 3

type Service = 'KV' | 'Watch' | 'Lease' | 'Maintenance' | 'Auth'
let services: Record<Service, ClientCtor> | undefined

function load(): Record<Service, ClientCtor> {
  if (services === undefined) {
    const def = loader.loadSync(PROTO, { keepCase: true, longs: String, defaults: true, oneofs: true })
    const pkg = (grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: Record<string, ClientCtor> }).etcdserverpb
    services = { KV: pkg.KV, Watch: pkg.Watch, Lease: pkg.Lease, Maintenance: pkg.Maintenance, Auth: pkg.Auth }
  }
  return services
}

const buf = (b64: string) => Buffer.from(b64, 'base64')
const ZERO = Buffer.from([0])

function rangeOf(sel: KeySelection): { key: Buffer; range_end?: Buffer } {
  const key = buf(sel.keyBase64)
  if (sel.prefix) {
    const end = prefixEnd(key)
    return { key, range_end: end === 'open' ? ZERO : end }
  }
  if (sel.fromKey) return { key, range_end: ZERO }
  return sel.rangeEndBase64 !== undefined ? { key, range_end: buf(sel.rangeEndBase64) } : { key }
}

/** An etcd KeyValue (bytes as Buffers, 64-bit numbers as strings) in the native wire shape. */
export function grpcKv(kv: Json): WireKv {
  const out: WireKv = {
    keyBase64: (kv.key as Buffer).toString('base64'),
    valueBase64: (kv.value as Buffer).toString('base64'),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
    version: Number(kv.version),
  }
  if (kv.lease !== undefined && kv.lease !== '0') out.lease = String(kv.lease)
  return out
}

/**
 * Enums travel as their numbers (etcd's proto spells the names differently across copies: EQUAL, Equal).
 * Compare.CompareResult, Compare.CompareTarget, WatchCreateRequest.FilterType, mvccpb.Event.EventType.
 */
const RESULT = { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 }
const TARGET = { VERSION: 0, CREATE: 1, MOD: 2, VALUE: 3 }
const FILTER = { NOPUT: 0, NODELETE: 1 }
const EVENT_DELETE = 1

function compareOf(c: TxnCompare): Json {
  const field = { MOD: 'mod_revision', VERSION: 'version', CREATE: 'create_revision', VALUE: 'value' }[c.target]
  return {
    key: buf(c.keyBase64),
    target: TARGET[c.target],
    result: RESULT[c.result],
    [field]: c.target === 'VALUE' ? buf(String(c.value)) : String(c.value),
  }
}

function requestOp(op: TxnOp): Json {
  if (op.type === 'put')
    return { request_put: { key: buf(op.keyBase64), value: buf(op.valueBase64), ...(op.lease ? { lease: op.lease } : {}) } }
  if (op.type === 'delete') return { request_delete_range: rangeOf(op.sel) }
  return { request_range: rangeOf(op.sel) }
}

function responseOp(r: Json): TxnOpResult {
  if (r.response_put) return { type: 'put' }
  if (r.response_delete_range) return { type: 'delete', deleted: Number((r.response_delete_range as Json).deleted) }
  return { type: 'range', kvs: ((r.response_range as Json).kvs as Json[]).map(grpcKv) }
}

const revisionOf = (r: Json) => Number((r.header as Json).revision)

/** etcd's error messages (api/v3rpc/rpctypes/error.go) to kvlog's codes. */
const MESSAGES: Array<[RegExp, string]> = [
  [/required revision has been compacted/, 'COMPACTED'],
  [/future revision/, 'FUTURE_REVISION'],
  [/database space exceeded/, 'NO_SPACE'],
  [/duplicate key/, 'DUPLICATE_KEY'],
  [/too many operations/, 'TOO_MANY_OPS'],
  [/lease not found/, 'LEASE_NOT_FOUND'],
  [/request is too large/, 'REQUEST_TOO_LARGE'],
  [/key is not provided/, 'EMPTY_KEY'],
  [/permission denied/, 'PERMISSION_DENIED'],
]

/** The call metadata of a token (empty without one). */
export function tokenMetadata(token: string | undefined): grpc.Metadata {
  const m = new grpc.Metadata()
  if (token !== undefined) m.set('token', token)
  return m
}

/** A login (Auth.Authenticate) that failed: the operation it was for was never sent. */
class LoginError extends Error {
  constructor(override readonly cause: grpc.ServiceError) {
    super(`login failed: ${cause.message}`)
  }
}
const MAYBE_SENT = new Set([
  grpc.status.UNAVAILABLE,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.CANCELLED,
  grpc.status.UNKNOWN,
  grpc.status.INTERNAL,
])

export class GrpcDriver implements Driver {
  readonly door = 'grpc'
  private readonly kv: ServiceClient
  private readonly lease: ServiceClient
  private readonly auth: ServiceClient | undefined
  private token: Promise<string | undefined> | undefined
  /** Logins made (the first and every one after a token ended). */
  logins = 0

  constructor(
    address: string,
    private readonly timeoutMs = 5000,
    private readonly credentials?: Credentials,
  ) {
    const s = load()
    // grpc-js backs off up to 120 s between reconnects; after a few restarts its clients would sit out
    // much of a soak answering UNREACHABLE, so they try again within a second, as the native clients do.
    const options = { 'grpc.initial_reconnect_backoff_ms': 200, 'grpc.max_reconnect_backoff_ms': 1000 }
    this.kv = new s.KV(address, grpc.credentials.createInsecure(), options)
    this.lease = new s.Lease(address, grpc.credentials.createInsecure(), options)
    if (credentials?.token !== undefined) this.token = Promise.resolve(credentials.token)
    else if (credentials !== undefined) this.auth = new s.Auth(address, grpc.credentials.createInsecure(), options)
  }

  supports(type: Operation['type']): boolean {
    return type !== 'object'
  }

  private send(client: ServiceClient, method: string, request: Json, token: string | undefined): Promise<Json> {
    return new Promise((resolve, reject) => {
      client[method].call(client, request, tokenMetadata(token), { deadline: Date.now() + this.timeoutMs }, (err, response) =>
        err ? reject(err) : resolve(response),
      )
    })
  }

  private login(): Promise<string | undefined> {
    if (this.token === undefined) {
      const { user, password } = this.credentials!
      this.logins++
      const pending = this.send(this.auth!, 'Authenticate', { name: user, password }, undefined).then(
        (r) => String(r.token),
        (err: grpc.ServiceError) => {
          if (err.code === grpc.status.FAILED_PRECONDITION) return undefined
          if (this.token === pending) this.token = undefined
          throw new LoginError(err)
        },
      )
      this.token = pending
    }
    return this.token
  }

  private async call(client: ServiceClient, method: string, request: Json): Promise<Json> {
    if (this.credentials === undefined) return this.send(client, method, request, undefined)
    // The server refuses a call with an ended token before applying it, so the call is sent again with a
    // new one. That token can end too before the call reaches the server (a restart, or a pause longer
    // than the TTL, in between), so this logs in again up to LOGIN_ATTEMPTS times.
    for (let attempt = 1; ; attempt++) {
      const token = await this.login()
      try {
        return await this.send(client, method, request, token)
      } catch (err) {
        // An ended token; or none sent (auth was off at login) to a server that now has auth on.
        const e = err as grpc.ServiceError
        const ended = e.code === grpc.status.UNAUTHENTICATED || (token === undefined && /user name is empty/.test(e.details ?? ''))
        if (this.auth === undefined || !ended || attempt >= LOGIN_ATTEMPTS) throw err
        if (this.token !== undefined && (await this.token.catch(() => undefined)) === token) this.token = undefined
      }
    }
  }

  async execute(op: Operation): Promise<OpResult> {
    switch (op.type) {
      case 'put':
        return {
          revision: revisionOf(
            await this.call(this.kv, 'Put', {
              key: buf(op.keyBase64),
              value: buf(op.valueBase64),
              ...(op.lease ? { lease: op.lease } : {}),
            }),
          ),
        }
      case 'delete': {
        const r = await this.call(this.kv, 'DeleteRange', rangeOf(op.sel))
        return { revision: revisionOf(r), deleted: Number(r.deleted) }
      }
      case 'range': {
        const r = await this.call(this.kv, 'Range', { ...rangeOf(op.sel), revision: String(op.revision ?? 0) })
        return { revision: revisionOf(r), kvs: (r.kvs as Json[]).map(grpcKv) }
      }
      case 'txn': {
        const r = await this.call(this.kv, 'Txn', {
          compare: op.compare.map(compareOf),
          success: op.success.map(requestOp),
          failure: op.failure.map(requestOp),
        })
        return { revision: revisionOf(r), succeeded: r.succeeded as boolean, results: (r.responses as Json[]).map(responseOp) }
      }
      case 'compact':
        return { revision: revisionOf(await this.call(this.kv, 'Compact', { revision: String(op.revision), physical: true })) }
      case 'leaseGrant': {
        const r = await this.call(this.lease, 'LeaseGrant', { TTL: String(op.ttlSeconds), ID: '0' })
        return { revision: revisionOf(r), lease: String(r.ID) }
      }
      case 'leaseRevoke':
        return { revision: revisionOf(await this.call(this.lease, 'LeaseRevoke', { ID: op.lease })) }
      default:
        throw new TypeError(`the gRPC door has no ${op.type}`)
    }
  }

  classify(err: unknown): Classified {
    if (err instanceof LoginError) return { outcome: 'fail', code: `LOGIN_${grpc.status[err.cause.code] ?? 'FAILED'}` }
    const e = err as Partial<grpc.ServiceError>
    if (typeof e.code !== 'number') throw err
    // grpc-js fails a call that never got a connection (server down, proxy refusing) before sending it.
    if (e.code === grpc.status.UNAVAILABLE && /No connection established/.test(e.details ?? ''))
      return { outcome: 'fail', code: 'UNREACHABLE' }
    if (MAYBE_SENT.has(e.code)) return { outcome: 'unknown', code: `GRPC_${grpc.status[e.code]}` }
    const known = MESSAGES.find(([re]) => re.test(e.details ?? ''))
    return { outcome: 'fail', code: known?.[1] ?? `GRPC_${grpc.status[e.code]}` }
  }

  async close(): Promise<void> {
    this.kv.close()
    this.lease.close()
    this.auth?.close()
  }
}

/** One Watch stream (its own channel, so its own TCP connection) carrying many watches. */
export class GrpcWatchConn extends MessageBook implements WatchConn {
  readonly closed: Promise<{ code: number; reason: string }>
  /** Events of a fragmented response, until its last fragment. */
  private readonly fragments = new Map<number, WireEvent[]>()
  private readonly live = new Set<number>()
  private nextId = 1
  private open = true

  private constructor(
    readonly label: string,
    client: grpc.Client,
    private readonly stream: grpc.ClientDuplexStream<Json, Json>,
  ) {
    super()
    this.closed = new Promise((resolve) => {
      const done = (reason: string) => {
        if (!this.open) return
        this.open = false
        client.close()
        resolve({ code: 1006, reason })
      }
      stream.on('error', (err: Error) => done(err.message))
      stream.on('end', () => done('end'))
      stream.on('close', () => done('close'))
    })
    stream.on('data', (r: Json) => this.onResponse(r))
  }

  /** `token`: the `token` metadata of the stream (with auth enabled). */
  static connect(address: string, label: string, token?: string): Promise<GrpcWatchConn> {
    const client = new (load().Watch)(address, grpc.credentials.createInsecure())
    return new Promise((resolve, reject) => {
      client.waitForReady(Date.now() + 2000, (err) => {
        if (err) {
          client.close()
          reject(err)
          return
        }
        const stream = (client as unknown as { Watch(m: grpc.Metadata): grpc.ClientDuplexStream<Json, Json> }).Watch(tokenMetadata(token))
        resolve(new GrpcWatchConn(label, client, stream))
      })
    })
  }

  get isOpen(): boolean {
    return this.open
  }

  allocateId(): number {
    return this.nextId++
  }

  create(request: CreateRequest & { id: number }): number {
    const key = request.keyBase64 !== undefined ? buf(request.keyBase64) : Buffer.from(request.key ?? '', 'utf8')
    const sel = rangeOf({
      keyBase64: key.toString('base64'),
      prefix: request.prefix,
      fromKey: request.fromKey,
      rangeEndBase64:
        request.rangeEndBase64 ?? (request.rangeEnd !== undefined ? Buffer.from(request.rangeEnd).toString('base64') : undefined),
    })
    const filters = [...(request.noPut ? [FILTER.NOPUT] : []), ...(request.noDelete ? [FILTER.NODELETE] : [])]
    this.write({
      create_request: {
        ...sel,
        start_revision: String(request.startRevision ?? 0),
        progress_notify: request.progressNotify === true,
        filters,
        prev_kv: request.prevKv === true,
        watch_id: String(request.id),
        fragment: true,
      },
    })
    return request.id
  }

  requestProgress(): void {
    this.write({ progress_request: {} })
  }

  terminate(): void {
    this.stream.cancel()
  }

  private write(request: Json): void {
    if (this.open) this.stream.write(request)
  }

  private onResponse(r: Json): void {
    const id = Number(r.watch_id)
    const revision = revisionOf(r)
    if (r.created) {
      // From here on the watch exists on the server: progress for every watch (-1) covers it.
      this.live.add(id)
      this.record(id, { type: 'created', id, revision })
    }
    const events = (r.events as Json[]).map((e): WireEvent => {
      const kv = grpcKv(e.kv as Json)
      const out: WireEvent = { type: Number(e.type) === EVENT_DELETE ? 'DELETE' : 'PUT', revision: kv.modRevision, kv }
      if (e.prev_kv) out.prevKv = grpcKv(e.prev_kv as Json)
      return out
    })
    if (r.fragment) {
      this.fragments.set(id, [...(this.fragments.get(id) ?? []), ...events])
      return
    }
    const all = [...(this.fragments.get(id) ?? []), ...events]
    this.fragments.delete(id)
    if (all.length > 0) {
      this.record(id, { type: 'events', id, revision: all[all.length - 1].revision, events: all })
    } else if (r.canceled) {
      const compactRevision = Number(r.compact_revision)
      this.live.delete(id)
      this.record(id, {
        type: 'canceled',
        id,
        reason: String(r.cancel_reason),
        ...(compactRevision > 0 ? { code: 'COMPACTED', compactRevision } : {}),
      })
    } else if (!r.created) {
      // A progress notice: for one watch, or (watch_id -1) for every watch of the stream.
      for (const target of id === -1 ? [...this.live] : [id]) this.record(target, { type: 'progress', id: target, revision })
    }
  }
}

/** A Maintenance.Snapshot stream being received: how many chunks so far, and a way to stop it. */
export interface SnapshotDownload {
  chunks: number
  /** Resolves at the first chunk (or when the stream ends). */
  started: Promise<void>
  /** Resolves when the stream ended, with the error that ended it, if any. */
  ended: Promise<Error | undefined>
  cancel(): void
}

export function startSnapshot(address: string, token?: string): SnapshotDownload {
  const client = new (load().Maintenance)(address, grpc.credentials.createInsecure())
  const stream = (client as unknown as { Snapshot(r: Json, m: grpc.Metadata): grpc.ClientReadableStream<Json> }).Snapshot(
    {},
    tokenMetadata(token),
  )
  const download: SnapshotDownload = {
    chunks: 0,
    started: Promise.resolve(),
    ended: Promise.resolve(undefined),
    cancel: () => stream.cancel(),
  }
  download.started = new Promise((resolve) => {
    stream.on('data', () => {
      download.chunks++
      resolve()
    })
    stream.on('end', () => resolve())
    stream.on('error', () => resolve())
  })
  download.ended = new Promise((resolve) => {
    stream.on('end', () => resolve(undefined))
    stream.on('error', (err: Error) => resolve(err))
  }).finally(() => client.close()) as Promise<Error | undefined>
  return download
}

/** The gRPC door at `address` (host:port); `token`: a fixed token for every call and stream. */
export function grpcDoor(address: string, token?: string): Door {
  return {
    name: 'grpc',
    driver: () => new GrpcDriver(address, 5000, token !== undefined ? { token } : undefined),
    connectWatch: (label) => GrpcWatchConn.connect(address, label, token),
    watches: (spec) => spec.objectView !== true,
    close: async () => undefined,
  }
}
