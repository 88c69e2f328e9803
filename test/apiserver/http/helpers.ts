/**
 * Shared helpers for the native HTTP API integration tests: one real `kvlog serve` process per test file
 * (useServer), a tiny typed fetch wrapper returning { status, body }, and the JSON shapes of docs/api.md.
 * Tests assert on status and error.code, never on messages.
 */
import { request as httpRequest } from 'node:http'
import { expect } from 'chai'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import type { KeyValueJson } from '../../../wire/native-api.js'

// ---------------------------------------------------------------------------------------------------------
// JSON shapes of the native API

export interface Header {
  revision: number
  compactRevision?: number
}

export type KvJson = KeyValueJson

export interface RangeBody {
  header: Header
  kvs: KvJson[]
  more: boolean
  count: number
  continue?: string
}

export interface PutBody {
  header: Header
  prevKv?: KvJson
}

export interface DeleteBody {
  header: Header
  deleted: number
  prevKvs?: KvJson[]
}

export interface OpResultJson {
  type: 'put' | 'delete' | 'range' | 'txn'
  prevKv?: KvJson
  deleted?: number
  prevKvs?: KvJson[]
  kvs?: KvJson[]
  more?: boolean
  count?: number
  succeeded?: boolean
  results?: OpResultJson[]
}

export interface TxnBody {
  header: Header
  succeeded: boolean
  results: OpResultJson[]
}

export interface EventJson {
  type: 'PUT' | 'DELETE'
  revision: number
  kv: KvJson
  prevKv?: KvJson
  time: string
}

export interface HistoryBody {
  header: Header
  events: EventJson[]
  more: boolean
  nextRevision: number
}

export interface SegmentJson {
  id: number
  firstRevision: number
  lastRevision: number
  firstTimestamp: number
  lastTimestamp: number
  entries: number
  bytes: number
}

export interface StatusBody {
  header: Header
  revision: number
  compactRevision: number
  dbSize: number
  segments: SegmentJson[]
  formatVersion: number
}

export interface CompactBody {
  header: Header
  compactRevision: number
  removedRevisions: number
  removedVersions: number
}

export interface ErrorJson {
  error: { code: string; message: string; details?: Record<string, unknown> }
}

// ---------------------------------------------------------------------------------------------------------
// fetch wrapper

export interface Reply<T> {
  status: number
  /** Parsed JSON when the answer is JSON, else the text. */
  body: T
  headers: Headers
}

export type QueryValue = string | number | boolean | undefined
/** A query: an object (booleans as "true"/"false", undefined left out) or a raw query string. */
export type Query = Record<string, QueryValue> | string

export interface RequestOptions {
  query?: Query
  /** JSON-encoded unless `raw` is given. */
  json?: unknown
  /** A body sent as is, with `contentType` (default application/json). */
  raw?: string | Buffer
  contentType?: string | null
}

export function queryString(query: Query | undefined): string {
  if (query === undefined) return ''
  if (typeof query === 'string') return query === '' ? '' : `?${query}`
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.append(name, String(value))
  const s = params.toString()
  return s === '' ? '' : `?${s}`
}

/**
 * Above this, bodies go through node:http: the server may answer (413) and close before the upload is
 * done, and fetch then fails with EPIPE instead of returning the answer, as curl or any careful client
 * would. node:http delivers the early response; the write error that follows is expected.
 */
const EARLY_REPLY_BYTES = 64 * 1024

/** How long a large upload waits, after its headers, for an answer given by the announced length alone. */
const EARLY_REPLY_WAIT_MS = 1000

function earlyReplyRequest<T>(method: string, url: string, headers: Record<string, string>, body: string | Buffer): Promise<Reply<T>> {
  return new Promise((resolve, reject) => {
    let answered = false
    const req = httpRequest(url, { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      answered = true
      clearTimeout(upload)
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        req.destroy() // the body may never have been sent: this request is over either way
        const text = Buffer.concat(chunks).toString('utf8')
        const type = String(res.headers['content-type'] ?? '')
        const h = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v)
        resolve({ status: res.statusCode ?? 0, body: (type.includes('application/json') ? JSON.parse(text) : text) as T, headers: h })
      })
      res.on('error', reject)
    })
    req.on('error', (err) => {
      if (!answered) reject(err)
    })
    // Headers first: a server that refuses the body by its announced length answers before the upload,
    // and that answer is read instead of racing an EPIPE from an upload it cut short (seen in CI).
    req.flushHeaders()
    const upload = setTimeout(() => req.end(body), EARLY_REPLY_WAIT_MS)
  })
}

export class Api {
  constructor(readonly base: string) {}

  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = {}
    let body: string | Buffer | undefined
    if (options.raw !== undefined) body = options.raw
    else if (options.json !== undefined) body = JSON.stringify(options.json)
    const contentType = options.contentType === undefined ? (body === undefined ? null : 'application/json') : options.contentType
    if (contentType !== null) headers['content-type'] = contentType
    const url = `${this.base}${path}${queryString(options.query)}`
    if (body !== undefined && body.length > EARLY_REPLY_BYTES) return earlyReplyRequest<T>(method, url, headers, body)
    const res = await fetch(url, { method, headers, body })
    const text = await res.text()
    let parsed: unknown = text
    if ((res.headers.get('content-type') ?? '').includes('application/json')) parsed = JSON.parse(text)
    return { status: res.status, body: parsed as T, headers: res.headers }
  }

  get<T = unknown>(path: string, query?: Query): Promise<Reply<T>> {
    return this.request<T>('GET', path, { query })
  }

  // The native API, one helper per route.
  range(query: Query): Promise<Reply<RangeBody>> {
    return this.get<RangeBody>('/v1/kv', query)
  }

  put(body: unknown): Promise<Reply<PutBody>> {
    return this.request<PutBody>('PUT', '/v1/kv', { json: body })
  }

  delete(query: Query): Promise<Reply<DeleteBody>> {
    return this.request<DeleteBody>('DELETE', '/v1/kv', { query })
  }

  txn(body: unknown): Promise<Reply<TxnBody>> {
    return this.request<TxnBody>('POST', '/v1/txn', { json: body })
  }

  history(query: Query): Promise<Reply<HistoryBody>> {
    return this.get<HistoryBody>('/v1/history', query)
  }

  compact(revision: unknown): Promise<Reply<CompactBody>> {
    return this.request<CompactBody>('POST', '/v1/compact', { json: { revision } })
  }

  status(): Promise<Reply<StatusBody>> {
    return this.get<StatusBody>('/v1/status')
  }

  // Shortcuts that insist on success.
  async mustPut(key: string, value: string, extra: Record<string, unknown> = {}): Promise<PutBody> {
    return ok(await this.put({ key, value, ...extra }))
  }

  async mustRange(query: Query): Promise<RangeBody> {
    return ok(await this.range(query))
  }

  async mustTxn(body: unknown): Promise<TxnBody> {
    return ok(await this.txn(body))
  }

  async revision(): Promise<number> {
    return ok(await this.status()).revision
  }
}

/** Asserts a 200 answer and returns its body. */
export function ok<T>(reply: Reply<T>): T {
  expect(reply.status, `expected 200, got ${reply.status}: ${JSON.stringify(reply.body)}`).to.equal(200)
  return reply.body
}

/** Asserts an error answer with this HTTP status and stable code, in the documented body shape. */
export function expectError(reply: Reply<unknown>, status: number, code: string): ErrorJson['error'] {
  const what = JSON.stringify(reply.body)
  expect(reply.status, what).to.equal(status)
  const body = reply.body as ErrorJson
  expect(body, what).to.be.an('object').with.property('error')
  expect(body.error.code, what).to.equal(code)
  expect(body.error.message, what).to.be.a('string')
  expect(Object.keys(body), what).to.deep.equal(['error'])
  return body.error
}

// ---------------------------------------------------------------------------------------------------------
// Server lifecycle: one real process per test file

export interface TestServer {
  api: Api
  process: ServerProcess
}

/**
 * Registers before/after hooks that start one `kvlog serve` process with `args` and stop it. The returned
 * getter is valid inside tests.
 */
export function useServer(args: string[] = []): () => TestServer {
  let server: TestServer | undefined
  before(async function () {
    this.timeout(20_000)
    const process = await startServerProcess(args)
    server = { api: new Api(process.http), process }
  })
  after(async function () {
    this.timeout(20_000)
    if (server === undefined) return
    try {
      await server.process.stop('SIGTERM')
    } finally {
      await server.process.cleanup()
    }
  })
  return () => {
    if (server === undefined) throw new Error('server not started')
    return server
  }
}

// ---------------------------------------------------------------------------------------------------------
// Bytes

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

export function isUtf8(bytes: Buffer): boolean {
  try {
    strictUtf8.decode(bytes)
    return true
  } catch {
    return false
  }
}

export const b64 = (bytes: Buffer | string): string => Buffer.from(bytes).toString('base64')

/** The key bytes of a kv in a response (from `key` or `keyBase64`, exactly one of which is present). */
export function keyOf(kv: KvJson): Buffer {
  expect(kv.key === undefined, `kv has both key and keyBase64 or neither: ${JSON.stringify(kv)}`).to.equal(kv.keyBase64 !== undefined)
  return kv.key !== undefined ? Buffer.from(kv.key, 'utf8') : Buffer.from(kv.keyBase64!, 'base64')
}

export function valueOf(kv: KvJson): Buffer {
  expect(kv.value === undefined, `kv has both value and valueBase64 or neither: ${JSON.stringify(kv)}`).to.equal(
    kv.valueBase64 !== undefined,
  )
  return kv.value !== undefined ? Buffer.from(kv.value, 'utf8') : Buffer.from(kv.valueBase64!, 'base64')
}

export const keys = (kvs: KvJson[]): string[] => kvs.map((kv) => kv.key ?? `base64:${kv.keyBase64}`)

export { rng as prng } from '../../support/random.js'

export function randomBytes(next: () => number, length: number): Buffer {
  const out = Buffer.alloc(length)
  for (let i = 0; i < length; i++) out[i] = Math.floor(next() * 256)
  return out
}
