/**
 * The browser side of the native API (docs/api.md): small typed fetch wrappers. Keys and values travel
 * as `key` (UTF-8) or `keyBase64`; `text()` turns either into something to show. Errors keep the
 * server's stable code (COMPACTED carries the compact revision) so views can react to the code.
 */
import type { EventJson, KeyValueJson } from '../../../wire/native-api.js'
import { authHeaders, session, sessionExpired } from './session.js'

/** A key-value and a history event as the server writes them (wire/native-api.ts). */
export type Kv = KeyValueJson
export type HistoryEvent = EventJson & { time: string }

/**
 * "alice via etcd", "anonymous (kubectl/v1.31.0) via resources", "anonymous via etcd"; "kvlog (lease expiry)" for a delete without an author of a key
 * that had a lease (the store's own write); undefined when the entry records no author (written before
 * kvlog recorded them).
 */
export function authorText(e: HistoryEvent): string | undefined {
  const a = e.author
  if (a !== undefined) return `${a.user ?? (a.agent !== undefined ? `anonymous (${a.agent})` : 'anonymous')} via ${a.door}`
  return e.type === 'DELETE' && e.prevKv?.lease !== undefined ? 'kvlog (lease expiry)' : undefined
}

export interface TreeChild {
  name?: string
  nameBase64?: string
  count: number
  leaf: boolean
}

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message)
  }
  get compactRevision(): number | undefined {
    const r = this.details.compactRevision
    return typeof r === 'number' ? r : undefined
  }
}

/** A byte field for display: the text, or `base64:…` when it is not UTF-8. */
export function text(o: object | undefined, name: string): string {
  const r = (o ?? {}) as Record<string, unknown>
  if (typeof r[name] === 'string') return r[name] as string
  if (typeof r[`${name}Base64`] === 'string') return `base64:${r[`${name}Base64`] as string}`
  return ''
}

/** Query parameters for a key given as text (or `base64:…` for bytes that are not UTF-8). */
export function keyParam(q: URLSearchParams, name: string, key: string): void {
  if (key.startsWith('base64:')) q.set(`${name}Base64`, key.slice(7))
  else q.set(name, key)
}

/** Sends a request with the session's token; a 401 ends the session (the shell shows the login form). */
async function send<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(path, { ...init, headers: { ...authHeaders(), ...(init.headers as Record<string, string> | undefined) } })
  const body = (await res.json().catch(() => ({}))) as T & { error?: { code: string; message: string; details?: Record<string, unknown> } }
  if (!res.ok) {
    const e = body.error
    if (res.status === 401 && session() !== undefined && path !== LOGIN_PATH) sessionExpired()
    throw new ApiError(e?.code ?? `HTTP_${res.status}`, e?.message ?? res.statusText, e?.details ?? {})
  }
  return body
}

const LOGIN_PATH = '/v1/auth/authenticate'

export function get<T>(path: string, query?: URLSearchParams, signal?: AbortSignal): Promise<T> {
  return send<T>(path + (query && [...query].length > 0 ? `?${query}` : ''), { signal })
}

export interface Status {
  header: { revision: number }
  revision: number
  compactRevision: number
  dbSize: number
  segments: Array<{
    id: number
    firstRevision: number
    lastRevision: number
    firstTimestamp: number
    lastTimestamp: number
    entries: number
    bytes: number
  }>
  compaction: {
    floor: number
    runs: number
    removedRevisionsTotal: number
    bytesFreedTotal: number
    last?: Record<string, unknown>
    inProgress?: { target: number; progress: number }
  }
  cursors: Array<{ name: string; revision: number; updatedAt: string; expired: boolean; lag: number }>
  alarms: string[]
  watch: { watchers: number; slowWatchers: number }
}

export const api = {
  authStatus: () => get<{ enabled: boolean }>('/v1/auth/status'),
  /** Logs in: the token for `Authorization: Bearer` (401 UNAUTHENTICATED for a wrong name or password). */
  authenticate: (name: string, password: string) =>
    send<{ token: string }>(LOGIN_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, password }),
    }),
  status: (signal?: AbortSignal) => get<Status>('/v1/status', undefined, signal),
  buckets: (buckets: number, fromTime?: string, toTime?: string) => {
    const q = new URLSearchParams({ buckets: String(buckets) })
    if (fromTime) q.set('fromTime', fromTime)
    if (toTime) q.set('toTime', toTime)
    return get<{
      header: { revision: number; compactRevision: number }
      fromTime: string
      bucketMs: number
      buckets: Array<{ start: string; firstRevision: number; revisions: number }>
    }>('/v1/history/buckets', q)
  },
  revisionAt: (time: string) => get<{ revision: number }>('/v1/revision-at', new URLSearchParams({ time })),
  tree: (prefix: string, revision: number | undefined, cont?: string) => {
    const q = new URLSearchParams({ limit: '200' })
    if (prefix) keyParam(q, 'prefix', prefix)
    if (revision) q.set('revision', String(revision))
    if (cont) keyParam(q, 'continue', cont)
    return get<{ header: { revision: number }; count: number; children: TreeChild[]; continue?: string; continueBase64?: string }>(
      '/v1/keys/tree',
      q,
    )
  },
  /** One page of the keys under a prefix (or one key) at a revision. */
  range: (key: string, prefix: boolean, revision: number | undefined, limit: number, cont?: string) => {
    const q = new URLSearchParams({ limit: String(limit) })
    keyParam(q, 'key', key || '\u0000')
    if (!key) q.set('fromKey', 'true')
    else if (prefix) q.set('prefix', 'true')
    if (cont) q.set('continue', cont)
    else if (revision) q.set('revision', String(revision))
    return get<{ header: { revision: number }; kvs: Kv[]; more: boolean; count: number; continue?: string }>('/v1/kv', q)
  },
  history: (key: string, opts: { prefix?: boolean; all?: boolean; from?: number; to?: number; limit?: number }) => {
    const q = new URLSearchParams({ prevKv: 'true', limit: String(opts.limit ?? 100) })
    keyParam(q, 'key', opts.all ? '\u0000' : key)
    if (opts.all) q.set('fromKey', 'true')
    else if (opts.prefix) q.set('prefix', 'true')
    if (opts.from !== undefined) q.set('from', String(opts.from))
    if (opts.to !== undefined) q.set('to', String(opts.to))
    return get<{ header: { revision: number; compactRevision: number }; events: HistoryEvent[]; more: boolean; nextRevision: number }>(
      '/v1/history',
      q,
    )
  },
  metrics: async (): Promise<Map<string, number>> => {
    const res = await fetch('/metrics', { headers: authHeaders() })
    const out = new Map<string, number>()
    for (const line of (await res.text()).split('\n')) {
      const m = /^([a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+|NaN)$/.exec(line)
      if (m) out.set(m[1], Number(m[2]))
    }
    return out
  },
}
