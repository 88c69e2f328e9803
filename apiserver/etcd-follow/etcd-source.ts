/**
 * Reading a running etcd (v3 gRPC, through our own .proto files and grpc-js as a client) for an import:
 * its compaction floor, a consistent paged range of every key at a revision, its history through a watch
 * with prevKv (whole revisions: etcd never splits a revision across watch responses unless asked to
 * fragment), and its leases with their remaining TTLs.
 *
 * Errors are KvlogErrors: UNAVAILABLE when no endpoint answers, COMPACTED when the source compacted past
 * a revision the import still needed (import-etcd.ts starts over from the new floor).
 */
import { readFile } from 'node:fs/promises'
import {
  credentials,
  type ChannelCredentials,
  makeGenericClientConstructor,
  Metadata,
  status,
  type Client,
  type ClientDuplexStream,
  type ServiceError,
} from '@grpc/grpc-js'
import { KvlogError } from '../../log/errors.js'
import type { KeyValue } from '../../log/types.js'
import { serviceDefinition, type Message } from '../etcd/proto.js'

/** How long one call may take before the source counts as unreachable. */
const CALL_TIMEOUT_MS = 10_000
/** Keys per Range page of the base state, unless the caller says otherwise. */
const RANGE_PAGE = 1000
const ALL_KEYS = Buffer.from([0])

type Unary = (
  request: Message,
  metadata: Metadata,
  options: { deadline: number },
  callback: (err: ServiceError | null, response: Message) => void,
) => void

export interface SourceEvent {
  type: 'PUT' | 'DELETE'
  kv: KeyValue
  prevKv?: KeyValue
}

export interface SourceLease {
  id: bigint
  grantedTtl: number
  /** Seconds left when asked. */
  ttl: number
}

/**
 * How to reach the source, as etcdctl's flags say it: --cacert (TLS, trusting this CA; an https://
 * endpoint alone trusts the system's CAs), --cert/--key (a client certificate), --user NAME:PASSWORD
 * (etcd's auth: a token from Authenticate rides in each call's `token` metadata; an expired token is
 * renewed once per call).
 */
export interface SourceAccess {
  caFile?: string
  certFile?: string
  keyFile?: string
  user?: string
}

export class EtcdSource {
  private readonly clients = new Map<string, Client & Record<string, unknown>>()
  private token: string | undefined

  private constructor(
    readonly endpoint: string,
    private readonly creds: ChannelCredentials,
    private readonly user: { name: string; password: string } | undefined,
  ) {}

  /** Connects to the first of `endpoints` (comma-separated host:port or http(s)://host:port) that answers Status. */
  static async connect(endpoints: string, access: SourceAccess = {}): Promise<EtcdSource> {
    const raw = endpoints
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '')
    if (raw.length === 0) throw new KvlogError('INVALID_ARGUMENT', '--from-etcd: no endpoint given', { field: 'from-etcd' })
    const list = raw.map((e) => e.replace(/^https?:\/\//, ''))
    const creds = await channelCredentials(
      access,
      raw.some((e) => e.startsWith('https://')),
    )
    const user = parseUser(access.user)
    const failures: string[] = []
    for (const endpoint of list) {
      const source = new EtcdSource(endpoint, creds, user)
      try {
        if (user !== undefined) await source.authenticate()
        await source.call('Maintenance', 'Status', {})
        return source
      } catch (err) {
        source.close()
        if (err instanceof KvlogError && err.code === 'UNAUTHENTICATED') throw err
        failures.push(`${endpoint}: ${err instanceof Error ? err.message : String(err)}`)
      }
    }
    throw new KvlogError('UNAVAILABLE', `cannot reach etcd (${failures.join('; ')})`, { endpoints: list })
  }

  private async authenticate(): Promise<void> {
    this.token = undefined
    const r = await this.call('Auth', 'Authenticate', { name: this.user!.name, password: this.user!.password })
    this.token = String(r.token)
  }

  private metadata(): Metadata {
    const md = new Metadata()
    if (this.token !== undefined) md.set('token', this.token)
    return md
  }

  close(): void {
    for (const c of this.clients.values()) c.close()
    this.clients.clear()
  }

  /** The current revision. */
  async revision(): Promise<number> {
    const r = await this.call('Maintenance', 'Status', {})
    return Number((r.header as Message).revision)
  }

  /**
   * The compact revision: 0 if a read at revision 1 works (never compacted, or only at 1), else what a
   * watch from revision 1 reports when etcd cancels it as compacted.
   */
  async floor(): Promise<number> {
    try {
      await this.call('KV', 'Range', { key: ALL_KEYS, range_end: ALL_KEYS, revision: 1, count_only: true })
      return 0
    } catch (err) {
      if (!(err instanceof KvlogError) || err.code !== 'COMPACTED') throw err
    }
    const stream = this.watchStream()
    try {
      stream.write({ create_request: { key: ALL_KEYS, range_end: ALL_KEYS, start_revision: 1 } })
      for await (const m of stream as AsyncIterable<Message>) {
        const compact = Number(m.compact_revision)
        if (compact > 0) return compact
        if (m.canceled === true) break
      }
      throw new KvlogError('INTERNAL', 'etcd refused a read at revision 1 but reported no compact revision')
    } finally {
      stream.cancel()
    }
  }

  /** Every key live at `revision`, a page at a time, in key order; the first page's header revision is the head. */
  async *rangeAt(revision: number, pageSize = RANGE_PAGE): AsyncGenerator<{ kvs: KeyValue[]; head: number }> {
    let from = ALL_KEYS
    while (true) {
      const r = await this.call('KV', 'Range', { key: from, range_end: ALL_KEYS, revision, limit: pageSize })
      const kvs = (r.kvs as Message[]).map(toKeyValue)
      yield { kvs, head: Number((r.header as Message).revision) }
      if (r.more !== true || kvs.length === 0) return
      from = Buffer.concat([kvs[kvs.length - 1].key, ALL_KEYS])
    }
  }

  /**
   * The history from `from` (inclusive), as whole revisions in order, until the caller stops iterating.
   * A source compacted past `from` ends it with COMPACTED. Aborting `signal` cancels the watch (the
   * iteration then ends with an error the caller who aborted ignores).
   */
  async *history(from: number, signal?: AbortSignal): AsyncGenerator<{ revision: number; events: SourceEvent[] }> {
    const stream = this.watchStream()
    const cancel = () => stream.cancel()
    signal?.addEventListener('abort', cancel, { once: true })
    try {
      stream.write({ create_request: { key: ALL_KEYS, range_end: ALL_KEYS, start_revision: from, prev_kv: true } })
      for await (const m of stream as AsyncIterable<Message>) {
        const compact = Number(m.compact_revision)
        if (compact > 0)
          throw new KvlogError('COMPACTED', `etcd compacted to ${compact} while revision ${from} and later were being read`, {
            compactRevision: compact,
          })
        if (m.canceled === true) throw new KvlogError('UNAVAILABLE', `etcd canceled the watch: ${String(m.cancel_reason)}`)
        let current: { revision: number; events: SourceEvent[] } | undefined
        for (const e of m.events as Message[]) {
          const kv = toKeyValue(e.kv as Message)
          if (current !== undefined && current.revision !== kv.modRevision) yield current
          if (current === undefined || current.revision !== kv.modRevision) current = { revision: kv.modRevision, events: [] }
          const prev = e.prev_kv as Message | null | undefined
          current.events.push({ type: e.type === 'DELETE' ? 'DELETE' : 'PUT', kv, ...(prev ? { prevKv: toKeyValue(prev) } : {}) })
        }
        if (current !== undefined) yield current
      }
      throw new KvlogError('UNAVAILABLE', 'the etcd watch ended before the import reached the head')
    } finally {
      signal?.removeEventListener('abort', cancel)
      stream.cancel()
    }
  }

  /** Every lease with its granted and remaining TTL (a lease that expires meanwhile is left out). */
  async leases(): Promise<SourceLease[]> {
    const r = await this.call('Lease', 'LeaseLeases', {})
    const out: SourceLease[] = []
    for (const l of r.leases as Message[]) {
      const t = await this.call('Lease', 'LeaseTimeToLive', { ID: l.ID })
      const ttl = Number(t.TTL)
      if (ttl < 0) continue // expired between the two calls (etcd answers TTL -1)
      out.push({ id: BigInt(l.ID as string), grantedTtl: Number(t.grantedTTL), ttl })
    }
    return out
  }

  /** One lease's granted and remaining TTL, or undefined if the source no longer has it. */
  async lease(id: bigint): Promise<SourceLease | undefined> {
    const t = await this.call('Lease', 'LeaseTimeToLive', { ID: id.toString() })
    const ttl = Number(t.TTL)
    return ttl < 0 ? undefined : { id, grantedTtl: Number(t.grantedTTL), ttl }
  }

  private client(service: string): Client & Record<string, unknown> {
    let c = this.clients.get(service)
    if (c === undefined) {
      const Ctor = makeGenericClientConstructor(serviceDefinition(`etcdserverpb.${service}`), service)
      c = new Ctor(this.endpoint, this.creds) as Client & Record<string, unknown>
      this.clients.set(service, c)
    }
    return c
  }

  private watchStream(): ClientDuplexStream<Message, Message> {
    const c = this.client('Watch')
    return (c.Watch as (md: Metadata) => ClientDuplexStream<Message, Message>).call(c, this.metadata())
  }

  private async call(service: string, method: string, request: Message): Promise<Message> {
    try {
      return await this.callOnce(service, method, request)
    } catch (err) {
      if (!(err instanceof KvlogError && err.code === 'UNAUTHENTICATED' && this.token !== undefined)) throw err
      await this.authenticate()
      return await this.callOnce(service, method, request)
    }
  }

  private callOnce(service: string, method: string, request: Message): Promise<Message> {
    const c = this.client(service)
    return new Promise((resolve, reject) => {
      ;(c[method] as Unary).call(c, request, this.metadata(), { deadline: Date.now() + CALL_TIMEOUT_MS }, (err, response) => {
        if (err === null) return resolve(response)
        reject(sourceError(err, this.endpoint))
      })
    })
  }
}

async function channelCredentials(access: SourceAccess, https: boolean): Promise<ChannelCredentials> {
  if ((access.certFile ?? '') !== '' && (access.keyFile ?? '') === '')
    throw new KvlogError('INVALID_ARGUMENT', '--cert needs --key', { field: 'key' })
  if ((access.keyFile ?? '') !== '' && (access.certFile ?? '') === '')
    throw new KvlogError('INVALID_ARGUMENT', '--key needs --cert', { field: 'cert' })
  const tls = https || [access.caFile, access.certFile].some((f) => (f ?? '') !== '')
  if (!tls) return credentials.createInsecure()
  const read = async (file: string | undefined, field: string) => {
    if ((file ?? '') === '') return null
    return readFile(file!).catch((err: NodeJS.ErrnoException) => {
      throw new KvlogError('INVALID_ARGUMENT', `--${field} ${file}: ${err.code ?? err.message}`, { field })
    })
  }
  return credentials.createSsl(await read(access.caFile, 'cacert'), await read(access.keyFile, 'key'), await read(access.certFile, 'cert'))
}

function parseUser(user: string | undefined): { name: string; password: string } | undefined {
  if (user === undefined || user === '') return undefined
  const colon = user.indexOf(':')
  if (colon <= 0) throw new KvlogError('INVALID_ARGUMENT', '--user: NAME:PASSWORD', { field: 'user' })
  return { name: user.slice(0, colon), password: user.slice(colon + 1) }
}

function sourceError(err: ServiceError, endpoint: string): KvlogError {
  if (err.code === status.OUT_OF_RANGE && /compacted/.test(err.details)) {
    return new KvlogError('COMPACTED', `etcd at ${endpoint}: ${err.details}`)
  }
  if (err.code === status.UNAUTHENTICATED || /authentication failed|invalid auth token|user name is empty/.test(err.details)) {
    return new KvlogError('UNAUTHENTICATED', `etcd at ${endpoint}: ${err.details}`)
  }
  if (err.code === status.PERMISSION_DENIED) return new KvlogError('PERMISSION_DENIED', `etcd at ${endpoint}: ${err.details}`)
  if (err.code === status.UNAVAILABLE || err.code === status.DEADLINE_EXCEEDED) {
    return new KvlogError('UNAVAILABLE', `etcd at ${endpoint} is unreachable: ${err.details}`)
  }
  return new KvlogError('INTERNAL', `etcd at ${endpoint}: ${err.details} (gRPC code ${err.code})`)
}

function toKeyValue(m: Message): KeyValue {
  return {
    key: m.key as Buffer,
    value: m.value as Buffer,
    createRevision: Number(m.create_revision),
    modRevision: Number(m.mod_revision),
    version: Number(m.version),
    lease: BigInt(m.lease as string),
  }
}
