/**
 * One HTTP exchange with the server, classifying failures so callers never retry a write blindly:
 * - the server answered with an error body: KvlogClientError (stable code);
 * - the connection was refused (nothing sent): UnreachableError, safe to retry;
 * - the connection failed after the request may have been sent: for reads, retried; for writes,
 *   OutcomeUnknownError (the write may have been applied).
 */
import { errorFromBody, OutcomeUnknownError, UnreachableError } from './errors.js'

export interface HttpOptions {
  endpoint: string
  /** Per-request timeout, ms. */
  timeoutMs: number
  /** Retries of idempotent reads after a connection failure. */
  readRetries: number
}

export interface Exchange {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE'
  path: string
  query?: URLSearchParams
  body?: unknown
  /** Cancels the request (and its retries); the caller gets the abort reason. */
  signal?: AbortSignal
  /** Reads are idempotent; writes (and compaction) are not. */
  idempotent: boolean
}

const REFUSED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])

function causeCode(err: unknown): string | undefined {
  let e = err as { code?: string; cause?: unknown } | undefined
  for (let i = 0; i < 4 && e !== undefined; i++) {
    if (typeof e.code === 'string') return e.code
    e = e.cause as typeof e
  }
  return undefined
}

export function requestUrl(endpoint: string, path: string, query?: URLSearchParams): string {
  return `${endpoint.replace(/\/$/, '')}${path}${query && [...query].length > 0 ? `?${query}` : ''}`
}

/** The body of a response as JSON, or undefined when it is empty or not JSON. */
export async function jsonBody(res: Response): Promise<unknown> {
  const text = await res.text()
  try {
    return text === '' ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

export async function exchange<T>(o: HttpOptions, x: Exchange): Promise<T> {
  const res = await respond(o, x, () => AbortSignal.timeout(o.timeoutMs))
  return (await jsonBody(res)) as T
}

/**
 * A GET whose answer is a byte stream (GET /v1/snapshot): the timeout covers the wait for the response
 * headers only, since a download may rightly take longer. The caller reads (or cancels) `res.body`.
 */
export async function download(o: HttpOptions, path: string): Promise<Response> {
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(new Error(`no answer from ${o.endpoint} within ${o.timeoutMs} ms`)), o.timeoutMs)
  try {
    return await respond(o, { method: 'GET', path, idempotent: true }, () => abort.signal)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Sends the request (retrying reads after connection failures); an answer that is not 2xx is thrown.
 * `signal` gives each attempt its abort signal.
 */
async function respond(o: HttpOptions, x: Exchange, signal: () => AbortSignal): Promise<Response> {
  const url = requestUrl(o.endpoint, x.path, x.query)
  for (let attempt = 0; ; attempt++) {
    let res: Response
    try {
      res = await fetch(url, {
        method: x.method,
        headers: x.body === undefined ? {} : { 'content-type': 'application/json' },
        body: x.body === undefined ? undefined : JSON.stringify(x.body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
        signal: x.signal ? AbortSignal.any([x.signal, signal()]) : signal(),
      })
    } catch (err) {
      if (x.signal?.aborted) throw x.signal.reason
      const code = causeCode(err)
      // fetch refuses some ports (the spec's "bad port" list) before sending anything.
      const badPort = (err as { cause?: { message?: string } }).cause?.message === 'bad port'
      if (badPort || (code !== undefined && REFUSED.has(code))) throw new UnreachableError(`cannot reach ${o.endpoint}: ${code}`, err)
      if (x.idempotent && attempt < o.readRetries) {
        await new Promise((r) => setTimeout(r, 50 * 2 ** attempt))
        continue
      }
      if (x.idempotent) throw new UnreachableError(`request to ${o.endpoint} failed: ${String(code ?? err)}`, err)
      throw new OutcomeUnknownError(`the connection failed during ${x.method} ${x.path}; the write may or may not have been applied`, err)
    }
    if (!res.ok) throw errorFromBody(res.status, await jsonBody(res))
    return res
  }
}
