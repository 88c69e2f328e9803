/**
 * Shared pieces of the compaction tests: a seeded PRNG, polling, a tiny JSON-over-HTTP client for real
 * `kvlog serve` processes, and minimal WebSocket / NDJSON watch recorders.
 *
 * The watch recorders are deliberately small (record every message, wait for a predicate, pause the
 * socket): these tests need the raw message stream, not test/support/watch-client.ts's decoded events.
 */
import WebSocket from 'ws'
import type { KeyValue, LogEntry } from '../../log/types.js'

// ---------------------------------------------------------------------------------------------------------
// Randomness and time

export { rng } from '../support/random.js'

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Polls `probe` until it returns a value other than undefined; throws after `timeoutMs`. */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  what: string,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}

// ---------------------------------------------------------------------------------------------------------
// KeyValues as plain comparable objects

export interface PlainKv {
  key: string
  value: string
  createRevision: number
  modRevision: number
  version: number
}

export function plain(kv: KeyValue): PlainKv {
  return {
    key: kv.key.toString('latin1'),
    value: kv.value.toString('latin1'),
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
  }
}

export interface PlainEvent {
  type: string
  kv: PlainKv
  prevKv?: PlainKv
}

export interface PlainEntry {
  revision: number
  events: PlainEvent[]
}

/** History entries without timestamps, kvs as PlainKv (prevKv only where present). */
export function plainEntries(entries: readonly LogEntry[]): PlainEntry[] {
  return entries.map((e) => ({
    revision: e.revision,
    events: e.events.map((ev) => ({ type: ev.type, kv: plain(ev.kv), ...(ev.prevKv ? { prevKv: plain(ev.prevKv) } : {}) })),
  }))
}

// ---------------------------------------------------------------------------------------------------------
// HTTP

export interface CursorJson {
  name: string
  revision: number
  updatedAt: number
  expired: boolean
  lag: number
}

export interface StatusJson {
  revision: number
  compactRevision: number
  dbSize: number
  alarms: string[]
  segments: Array<{ firstRevision: number; lastRevision: number; entries: number }>
  compaction: {
    floor: number
    runs: number
    removedRevisionsTotal: number
    last?: { floor: number; removedRevisions: number }
    inProgress?: { target: number; progress: number }
  }
  cursors: CursorJson[]
  watch: { watchers: number; slowWatchers: number }
}

/**
 * The fields of the native API's JSON answers that these tests read (docs/api.md). Typed as always
 * present for brevity: a test reads a field only where the answer must have it, and a missing one fails
 * the test with a TypeError.
 */
export interface Body {
  header: { revision: number }
  error: { code: string; details: { compactRevision?: number } }
  alarms: string[]
  cursors: CursorJson[]
  cursor: CursorJson
  deleted: number
  compactRevision: number
  events: Array<{ revision: number }>
  [field: string]: unknown
}

export interface Reply {
  status: number
  body: Body
}

/** JSON over fetch against a server's base URL; every answer is { status, body } (never throws on 4xx/5xx). */
export class Http {
  constructor(readonly base: string) {}

  async request(method: string, path: string, body?: unknown): Promise<Reply> {
    const res = await fetch(this.base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Body }
  }

  get(path: string): Promise<Reply> {
    return this.request('GET', path)
  }

  put(key: string, value: string): Promise<Reply> {
    return this.request('PUT', '/v1/kv', { key, value })
  }

  del(path: string): Promise<Reply> {
    return this.request('DELETE', path)
  }

  post(path: string, body: unknown): Promise<Reply> {
    return this.request('POST', path, body)
  }

  async status(): Promise<StatusJson> {
    const r = await this.get('/v1/status')
    if (r.status !== 200) throw new Error(`GET /v1/status: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body as unknown as StatusJson
  }

  /** A successful put; returns its revision. */
  async mustPut(key: string, value: string): Promise<number> {
    const r = await this.put(key, value)
    if (r.status !== 200) throw new Error(`PUT ${key}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body.header.revision
  }

  /** `n` puts, `concurrency` at a time, over `keys` keys under `prefix`; returns the last revision. */
  async putMany(prefix: string, n: number, opts: { keys?: number; valueBytes?: number; concurrency?: number } = {}): Promise<number> {
    const keys = opts.keys ?? 10
    const value = 'v'.repeat(opts.valueBytes ?? 16)
    const concurrency = opts.concurrency ?? 16
    let next = 0
    let last = 0
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          const i = next++
          const rev = await this.mustPut(`${prefix}${i % keys}`, `${value}.${i}`)
          last = Math.max(last, rev)
        }
      }),
    )
    return last
  }
}

// ---------------------------------------------------------------------------------------------------------
// Watch recorders

export interface WatchMsg {
  type: 'created' | 'events' | 'progress' | 'canceled' | 'error'
  id?: number
  revision?: number
  events?: Array<{ type: string; revision: number; kv: { key?: string; value?: string; modRevision: number } }>
  code?: string
  compactRevision?: number
  [field: string]: unknown
}

/** One WebSocket connection to /v1/watch recording every message in arrival order. */
export class WsRecorder {
  readonly messages: WatchMsg[] = []
  private readonly waiters = new Set<() => void>()

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)) as WatchMsg)
      for (const w of [...this.waiters]) w()
    })
    ws.on('close', () => {
      for (const w of [...this.waiters]) w()
    })
    ws.on('error', () => undefined)
  }

  static connect(base: string): Promise<WsRecorder> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(base.replace(/^http/, 'ws') + '/v1/watch', { perMessageDeflate: false })
      ws.once('open', () => resolve(new WsRecorder(ws)))
      ws.once('error', reject)
    })
  }

  create(request: Record<string, unknown>): void {
    this.ws.send(JSON.stringify({ op: 'create', ...request }))
  }

  of(id: number): WatchMsg[] {
    return this.messages.filter((m) => m.id === id)
  }

  waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (predicate()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return
        clearTimeout(timer)
        this.waiters.delete(check)
        resolve()
      }
      const timer = setTimeout(() => {
        this.waiters.delete(check)
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; last messages: ${JSON.stringify(this.messages.slice(-3)).slice(0, 600)}`,
          ),
        )
      }, timeoutMs)
      this.waiters.add(check)
    })
  }

  /** Stops reading the socket, so the server's sends back up. */
  pause(): void {
    ;(this.ws as unknown as { _socket: { pause(): void } })._socket.pause()
  }

  resume(): void {
    ;(this.ws as unknown as { _socket: { resume(): void } })._socket.resume()
  }

  close(): void {
    this.ws.terminate()
  }
}

/** The revisions of every event a watch received, in order (one entry per event). */
export function eventRevisions(messages: WatchMsg[]): number[] {
  return messages.flatMap((m) => (m.type === 'events' ? (m.events ?? []).map((e) => e.revision) : []))
}

/**
 * GET /v1/watch?query as NDJSON, read line by line until `done(lines)` holds, the server ends the response
 * (`ended`), or `timeoutMs` passes; then the request is aborted.
 */
export async function ndjsonWatch(
  base: string,
  query: Record<string, string | number | boolean>,
  done: (lines: WatchMsg[]) => boolean,
  timeoutMs: number,
): Promise<{ status: number; lines: WatchMsg[]; ended: boolean }> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()
  const lines: WatchMsg[] = []
  let ended = false
  let stopped = false
  let status = 0
  try {
    const res = await fetch(`${base}/v1/watch?${qs}`, { signal: controller.signal })
    status = res.status
    const decoder = new TextDecoder()
    let buffer = ''
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true })
      let nl: number
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl)
        buffer = buffer.slice(nl + 1)
        if (line.trim() !== '') lines.push(JSON.parse(line) as WatchMsg)
      }
      if (done(lines)) {
        stopped = true
        break
      }
    }
    ended = !stopped
  } catch {
    // aborted by the timeout: neither done nor ended
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
  return { status, lines, ended }
}
