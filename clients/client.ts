/**
 * KvlogClient: the native HTTP API, typed (docs/api.md). Writes are never retried automatically after an
 * ambiguous failure: they raise OutcomeUnknownError. Reads retry connection failures a few times. Given
 * several members (`endpoints`), it sticks to one and moves to the next on a refused connection or a 503
 * (endpoints.ts); watches resume on the next member from their last revision.
 *
 *   const kv = new KvlogClient({ endpoints: ['http://10.0.0.1:8379', 'http://10.0.0.2:8379'] })
 *   const { revision } = await kv.put('/config/a', 'x')
 *   for await (const page of kv.list('/config/', { prefix: true, pageSize: 500 })) ...
 *   const w = kv.watch('/config/', { prefix: true, startRevision: revision + 1 })
 */
import {
  bytesField,
  bytesParam,
  leaseId,
  readBytes,
  readEvent,
  readKv,
  type Bytes,
  type HistoryEvent,
  type KeyRange,
  type KeyValue,
  type LeaseId,
} from './codec.js'
import { AuthApi } from './auth-api.js'
import type { Credentials } from './auth.js'
import { Endpoints } from './endpoints.js'
import { attachCredentials, download, exchange, type HttpOptions } from './http.js'
import { Watch, type WatchOptions } from './watch.js'

export interface ClientOptions {
  /** One member; default http://127.0.0.1:8379. `host:port` means http://host:port. */
  endpoint?: string
  /** Several members of one cluster (or one server behind several addresses), tried in turn. */
  endpoints?: string[]
  /** Per-request timeout, ms (default 30 s). */
  timeoutMs?: number
  /** Retries of reads after a connection failure (default 3). */
  readRetries?: number
  /** With auth enabled on the server: a user and password, or a bearer token (auth.ts). */
  credentials?: Credentials
}

export interface RangeOptions extends KeyRange {
  revision?: number
  limit?: number
  keysOnly?: boolean
  countOnly?: boolean
  sortOrder?: 'NONE' | 'ASCEND' | 'DESCEND'
  sortTarget?: 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE'
  minModRevision?: number
  maxModRevision?: number
  minCreateRevision?: number
  maxCreateRevision?: number
}

export interface RangeResult {
  revision: number
  kvs: KeyValue[]
  more: boolean
  count: number
  continue?: string
}

export interface HistoryOptions extends KeyRange {
  from?: number
  to?: number
  /** ISO 8601 commit times instead of revisions. */
  fromTime?: string
  toTime?: string
  limit?: number
  prevKv?: boolean
}

export interface HistoryResult {
  revision: number
  compactRevision: number
  events: HistoryEvent[]
  more: boolean
  nextRevision: number
}

export interface CursorInfo {
  name: string
  revision: number
  updatedAt: number
  expired: boolean
  lag: number
}

/** Transaction requests use the native JSON shapes (docs/api.md, POST /v1/txn); bytes may be strings. */
export type TxnRequest = Record<string, unknown>

export interface TxnResult {
  revision: number
  succeeded: boolean
  results: Array<Record<string, unknown>>
}

export interface LeaseGrant {
  id: bigint
  /** Seconds: the TTL granted (the server raises short ones to its minimum), or after a keep-alive, restarted. */
  ttl: number
}

export interface LeaseTimeToLive {
  id: bigint
  /** Seconds left before the lease expires (rounded down). */
  ttl: number
  grantedTtl: number
  /** The attached keys, when asked for with `keys: true`. */
  keys?: Buffer[]
}

/** A snapshot being downloaded (GET /v1/snapshot): iterate `chunks` to the end, or `cancel()`. */
export interface SnapshotDownload {
  /** The revision the snapshot holds. */
  revision: number
  /** The server's estimate of the size, for progress; the real length may differ. */
  estimatedBytes: number
  chunks: AsyncIterable<Buffer>
  cancel(): Promise<void>
}

type Json = Record<string, unknown>

/** One key a revert changes: `added` since the target revision (deleted by it), `removed` (put back), `modified` (old value put back). */
export interface RevertChange {
  change: 'added' | 'removed' | 'modified'
  key: Buffer
  /** The value the revert writes (absent for a delete). */
  value?: Buffer
  /** The value it replaces (absent when the key does not exist now). */
  previousValue?: Buffer
}

export interface RevertResult {
  /** The revision the revert was planned against. */
  fromRevision: number
  /** The revert's own revision; absent for a dry run or when nothing differed. */
  revision?: number
  changes: RevertChange[]
}

export class KvlogClient {
  /** The members, and which one requests go to now. */
  readonly endpoints: Endpoints
  /** Users, roles and permissions (auth-api.ts). */
  readonly auth: AuthApi
  private readonly http: HttpOptions

  constructor(options: ClientOptions = {}) {
    const list = options.endpoints ?? [options.endpoint ?? 'http://127.0.0.1:8379']
    if (options.endpoints !== undefined && options.endpoint !== undefined) throw new TypeError('give endpoint or endpoints, not both')
    this.endpoints = new Endpoints(list)
    this.http = { endpoints: this.endpoints, timeoutMs: options.timeoutMs ?? 30_000, readRetries: options.readRetries ?? 3 }
    if (options.credentials !== undefined) attachCredentials(this.http, options.credentials)
    this.auth = new AuthApi(this.http)
  }

  /** The member requests go to now. */
  get endpoint(): string {
    return this.endpoints.current
  }

  // ------------------------------------------------------------------------------------------------------
  // Keys and values

  async put(
    key: Bytes,
    value: Bytes,
    options: { lease?: LeaseId; prevKv?: boolean } = {},
  ): Promise<{ revision: number; prevKv?: KeyValue }> {
    const body: Json = {}
    bytesField(body, 'key', key)
    bytesField(body, 'value', value)
    if (options.lease !== undefined) body.lease = leaseId(options.lease)
    if (options.prevKv) body.prevKv = true
    const r = await exchange<Json>(this.http, { method: 'PUT', path: '/v1/kv', body, idempotent: false })
    return { revision: header(r), ...(r.prevKv ? { prevKv: readKv(r.prevKv as Json) } : {}) }
  }

  async get(key: Bytes, options: { revision?: number } = {}): Promise<KeyValue | undefined> {
    return (await this.range(key, { revision: options.revision })).kvs[0]
  }

  async range(key: Bytes, options: RangeOptions & { continue?: string } = {}): Promise<RangeResult> {
    const q = keyQuery(key, options)
    for (const name of ['revision', 'limit', 'minModRevision', 'maxModRevision', 'minCreateRevision', 'maxCreateRevision'] as const) {
      if (options[name] !== undefined) q.set(name, String(options[name]))
    }
    for (const name of ['keysOnly', 'countOnly'] as const) if (options[name]) q.set(name, 'true')
    if (options.sortOrder) q.set('sortOrder', options.sortOrder)
    if (options.sortTarget) q.set('sortTarget', options.sortTarget)
    if (options.continue) q.set('continue', options.continue)
    const r = await exchange<Json>(this.http, { method: 'GET', path: '/v1/kv', query: q, idempotent: true })
    return {
      revision: header(r),
      kvs: (r.kvs as Json[]).map(readKv),
      more: r.more as boolean,
      count: r.count as number,
      ...(typeof r.continue === 'string' ? { continue: r.continue } : {}),
    }
  }

  /** Pages through a range at one revision (one consistent snapshot); each page is a RangeResult. */
  async *list(key: Bytes, options: KeyRange & { pageSize?: number; revision?: number } = {}): AsyncGenerator<RangeResult> {
    let token: string | undefined
    const { pageSize = 500, revision, ...range } = options
    do {
      const page = await this.range(key, { ...range, limit: pageSize, ...(token ? { continue: token } : { revision }) })
      yield page
      token = page.continue
    } while (token !== undefined)
  }

  async delete(
    key: Bytes,
    options: KeyRange & { prevKv?: boolean } = {},
  ): Promise<{ revision: number; deleted: number; prevKvs?: KeyValue[] }> {
    const q = keyQuery(key, options)
    if (options.prevKv) q.set('prevKv', 'true')
    const r = await exchange<Json>(this.http, { method: 'DELETE', path: '/v1/kv', query: q, idempotent: false })
    return { revision: header(r), deleted: r.deleted as number, ...(r.prevKvs ? { prevKvs: (r.prevKvs as Json[]).map(readKv) } : {}) }
  }

  async txn(request: TxnRequest): Promise<TxnResult> {
    const r = await exchange<Json>(this.http, { method: 'POST', path: '/v1/txn', body: request, idempotent: false })
    return { revision: header(r), succeeded: r.succeeded as boolean, results: r.results as Json[] }
  }

  // ------------------------------------------------------------------------------------------------------
  // History, compaction, status

  async history(key: Bytes, options: HistoryOptions = {}): Promise<HistoryResult> {
    const q = keyQuery(key, options)
    for (const name of ['from', 'to', 'fromTime', 'toTime', 'limit'] as const)
      if (options[name] !== undefined) q.set(name, String(options[name]))
    if (options.prevKv) q.set('prevKv', 'true')
    const r = await exchange<Json>(this.http, { method: 'GET', path: '/v1/history', query: q, idempotent: true })
    const h = r.header as { revision: number; compactRevision: number }
    return {
      revision: h.revision,
      compactRevision: h.compactRevision,
      more: r.more as boolean,
      nextRevision: r.nextRevision as number,
      events: (r.events as Json[]).map((e) => {
        const event: HistoryEvent = { ...readEvent(e), time: e.time as string }
        const a = e.author as { door?: unknown; user?: unknown; agent?: unknown } | undefined
        if (a !== undefined && typeof a.door === 'string')
          event.author =
            typeof a.user === 'string'
              ? { door: a.door, user: a.user }
              : typeof a.agent === 'string'
                ? { door: a.door, agent: a.agent }
                : { door: a.door }
        return event
      }),
    }
  }

  async compact(revision: number): Promise<Json> {
    return exchange<Json>(this.http, { method: 'POST', path: '/v1/compact', body: { revision }, idempotent: false })
  }

  async status(): Promise<Json> {
    return exchange<Json>(this.http, { method: 'GET', path: '/v1/status', idempotent: true })
  }

  /** The last revision committed at or before `time` (GET /v1/revision-at): the revision to read for "the state at that time". */
  async revisionAt(time: string): Promise<number> {
    const q = new URLSearchParams({ time })
    return (await exchange<{ revision: number }>(this.http, { method: 'GET', path: '/v1/revision-at', query: q, idempotent: true }))
      .revision
  }

  /**
   * Puts a key or range back to its state at `revision` in one new transaction (POST /v1/revert);
   * with `dryRun`, only says what would change.
   */
  async revert(key: Bytes, options: KeyRange & { revision: number; dryRun?: boolean }): Promise<RevertResult> {
    const body: Json = { revision: options.revision }
    bytesField(body, 'key', key)
    if (options.prefix) body.prefix = true
    if (options.fromKey) body.fromKey = true
    if (options.rangeEnd !== undefined) bytesField(body, 'rangeEnd', options.rangeEnd)
    if (options.dryRun) body.dryRun = true
    const r = await exchange<Json>(this.http, { method: 'POST', path: '/v1/revert', body, idempotent: options.dryRun === true })
    return {
      fromRevision: r.fromRevision as number,
      ...(typeof r.revision === 'number' ? { revision: r.revision } : {}),
      changes: (r.changes as Json[]).map((c) => ({
        change: c.change as RevertChange['change'],
        key: readBytes(c, 'key'),
        ...(c.value !== undefined || c.valueBase64 !== undefined ? { value: readBytes(c, 'value') } : {}),
        ...(c.previousValue !== undefined || c.previousValueBase64 !== undefined ? { previousValue: readBytes(c, 'previousValue') } : {}),
      })),
    }
  }

  // ------------------------------------------------------------------------------------------------------
  // Consumer cursors

  async cursors(): Promise<CursorInfo[]> {
    return (await exchange<{ cursors: CursorInfo[] }>(this.http, { method: 'GET', path: '/v1/cursors', idempotent: true })).cursors
  }

  async commitCursor(name: string, revision: number): Promise<CursorInfo> {
    const path = `/v1/cursors/${encodeURIComponent(name)}`
    // Committing the same revision twice is harmless, so a cursor commit is safe to retry.
    return (await exchange<{ cursor: CursorInfo }>(this.http, { method: 'PUT', path, body: { revision }, idempotent: true })).cursor
  }

  async deleteCursor(name: string): Promise<void> {
    await exchange(this.http, { method: 'DELETE', path: `/v1/cursors/${encodeURIComponent(name)}`, idempotent: true })
  }

  // ------------------------------------------------------------------------------------------------------
  // Leases (ids are bigints; strings are accepted as decimal ids and checked, so no id loses precision)

  /** Grants a lease of `ttl` seconds; `id` 0 or absent: the server picks one. LEASE_EXISTS, LEASE_TTL_TOO_LARGE. */
  async leaseGrant(ttl: number, options: { id?: LeaseId } = {}): Promise<LeaseGrant> {
    const body: Json = { ttl }
    if (options.id !== undefined) body.id = leaseId(options.id)
    const r = await exchange<Json>(this.http, { method: 'POST', path: '/v1/leases', body, idempotent: false })
    return { id: BigInt(r.id as string), ttl: r.ttl as number }
  }

  /** Revokes a lease, deleting its keys in one revision; LEASE_NOT_FOUND when it does not exist. */
  async leaseRevoke(id: LeaseId): Promise<{ revision: number }> {
    const r = await exchange<Json>(this.http, { method: 'DELETE', path: `/v1/leases/${leaseId(id)}`, idempotent: false })
    return { revision: header(r) }
  }

  /** Restarts the lease's TTL once (safe to retry); LEASE_NOT_FOUND when it is gone. */
  async leaseKeepAlive(id: LeaseId): Promise<LeaseGrant> {
    const r = await exchange<Json>(this.http, { method: 'POST', path: `/v1/leases/${leaseId(id)}/keepalive`, idempotent: true })
    return { id: BigInt(r.id as string), ttl: r.ttl as number }
  }

  /** The lease's remaining and granted TTL (and with `keys`, its keys); undefined when it does not exist. */
  async leaseTimeToLive(id: LeaseId, options: { keys?: boolean } = {}): Promise<LeaseTimeToLive | undefined> {
    const query = new URLSearchParams(options.keys ? { keys: 'true' } : {})
    let r: Json
    try {
      r = await exchange<Json>(this.http, { method: 'GET', path: `/v1/leases/${leaseId(id)}`, query, idempotent: true })
    } catch (err) {
      if ((err as { code?: string }).code === 'LEASE_NOT_FOUND') return undefined
      throw err
    }
    const out: LeaseTimeToLive = { id: BigInt(r.id as string), ttl: r.ttl as number, grantedTtl: r.grantedTtl as number }
    if (Array.isArray(r.keys)) out.keys = (r.keys as Json[]).map((k) => readBytes(k, 'key'))
    return out
  }

  /** The ids of every live lease. */
  async leases(): Promise<bigint[]> {
    const r = await exchange<{ leases: Array<{ id: string }> }>(this.http, { method: 'GET', path: '/v1/leases', idempotent: true })
    return r.leases.map((l) => BigInt(l.id))
  }

  // ------------------------------------------------------------------------------------------------------
  // Snapshot

  /**
   * Starts downloading a snapshot of the whole database: a consistent copy at `revision`, ending in a
   * sha256 checksum (docs/api.md). The server holds the copy until the stream is read or cancelled.
   */
  async snapshot(): Promise<SnapshotDownload> {
    const res = await download(this.http, '/v1/snapshot')
    const body = res.body
    if (body === null) throw new TypeError('the snapshot answer has no body')
    return {
      revision: Number(res.headers.get('x-kvlog-revision')),
      estimatedBytes: Number(res.headers.get('x-kvlog-snapshot-size-estimate') ?? 0),
      chunks: (async function* () {
        for await (const chunk of body as unknown as AsyncIterable<Uint8Array>)
          yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      })(),
      cancel: () => body.cancel().catch(() => undefined),
    }
  }

  // ------------------------------------------------------------------------------------------------------
  // Watch

  /** A watch that resumes by itself after disconnects; iterate it, or pass callbacks (watch.ts). */
  watch(key: Bytes, options: WatchOptions = {}): Watch {
    return new Watch(this.endpoints, key, options, this.http.auth)
  }
}

function header(r: Json): number {
  return (r.header as { revision: number }).revision
}

function keyQuery(key: Bytes, range: KeyRange): URLSearchParams {
  const q = new URLSearchParams()
  bytesParam(q, 'key', key)
  if (range.prefix) q.set('prefix', 'true')
  if (range.fromKey) q.set('fromKey', 'true')
  if (range.rangeEnd !== undefined) bytesParam(q, 'rangeEnd', range.rangeEnd)
  return q
}
