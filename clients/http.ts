/**
 * One HTTP exchange with the server, classifying failures so callers never retry a write blindly:
 * - the server answered with an error body: KvlogClientError (stable code);
 * - the connection was refused (nothing sent): the next member is tried, reads and writes alike; when
 *   none can be reached, UnreachableError with each member's cause;
 * - a 503 (the member cannot serve now: draining, not ready, not applied): the next member is tried;
 * - a 504 (a cluster member took the write and cannot say whether it was applied, OUTCOME_UNKNOWN; sent
 *   elsewhere it could be applied twice): OutcomeUnknownError;
 * - the connection failed after the request may have been sent: for reads, retried (on the next member);
 *   for writes, OutcomeUnknownError (the write may have been applied). Later requests go to the next member;
 * - a 401 (token unknown, expired or outdated: nothing was applied): with a password, authenticated again
 *   and sent once more.
 */
import { TokenSource, type Credentials } from './auth.js'
import type { Endpoints } from './endpoints.js'
import { errorFromBody, OutcomeUnknownError, UnreachableError, WrongEndpointError } from './errors.js'
import { speaksTls } from './probe-tls.js'
import type { Fetch } from './tls.js'

export interface HttpOptions {
  /** The members to talk to; a refused connection or a 503 moves on to the next (endpoints.ts). */
  endpoints: Endpoints
  /** Per-request timeout, ms. */
  timeoutMs: number
  /** Retries of idempotent reads after a connection failure. */
  readRetries: number
  /** Credentials (auth.ts): a bearer token on every request. */
  auth?: TokenSource
  /** Sends one request: the global fetch, or one that carries TLS options (tls.ts). */
  fetch?: Fetch
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

/** Why a connection failed, in words: "connect ECONNREFUSED 127.0.0.1:1", "getaddrinfo ENOTFOUND x". */
export function describeCause(err: unknown): string {
  const cause = (err as { cause?: { message?: string; code?: string } } | undefined)?.cause
  // fetch refuses some ports (the spec's "bad port" list) before sending anything.
  if (cause?.message === 'bad port') return "the port is on fetch's list of blocked ports"
  if (typeof cause?.message === 'string' && cause.message !== '') return cause.message
  const e = err as { name?: string; message?: string } | undefined
  if (e?.name === 'TimeoutError') return 'no answer in time'
  return causeCode(err) ?? e?.message ?? String(err)
}

function causeCode(err: unknown): string | undefined {
  let e = err as { code?: string; cause?: unknown } | undefined
  for (let i = 0; i < 4 && e !== undefined; i++) {
    if (typeof e.code === 'string') return e.code
    e = e.cause as typeof e
  }
  return undefined
}

/** Gives `o` credentials: a password is exchanged for a token at POST /v1/auth/authenticate (auth.ts). */
export function attachCredentials(o: HttpOptions, credentials: Credentials): void {
  const plain = { ...o }
  o.auth = new TokenSource(credentials, async (name, password) => {
    const body = { name, password }
    return (await exchange<{ token: string }>(plain, { method: 'POST', path: '/v1/auth/authenticate', body, idempotent: true })).token
  })
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
  const timer = setTimeout(() => abort.abort(new Error(`no answer from ${o.endpoints.current} within ${o.timeoutMs} ms`)), o.timeoutMs)
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
  const members = o.endpoints
  /** Members that refused or answered 503 during this request, with why. */
  const down = new Map<string, string>()
  let reauthenticated = false
  for (let retries = 0; ;) {
    const endpoint = members.current
    const headers: Record<string, string> = x.body === undefined ? {} : { 'content-type': 'application/json' }
    const authorization = await o.auth?.header()
    if (authorization !== undefined) headers.authorization = authorization
    let res: Response
    try {
      res = await (o.fetch ?? fetch)(requestUrl(endpoint, x.path, x.query), {
        method: x.method,
        headers,
        body: x.body === undefined ? undefined : JSON.stringify(x.body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
        signal: x.signal ? AbortSignal.any([x.signal, signal()]) : signal(),
      })
    } catch (err) {
      if (x.signal?.aborted) throw x.signal.reason
      const code = causeCode(err)
      const badPort = (err as { cause?: { message?: string } }).cause?.message === 'bad port'
      members.failed(endpoint)
      if (badPort || (code !== undefined && REFUSED.has(code))) {
        // Nothing was sent: any request may go to the next member.
        down.set(endpoint, describeCause(err))
        if (down.size < members.list.length) continue
        throw new UnreachableError(unreachable(down), err)
      }
      // A TLS port addressed as http:// drops the plain request unread: say so instead of "may have been applied".
      if (endpoint.startsWith('http://') && (await speaksTls(endpoint))) {
        throw new WrongEndpointError(`${endpoint} speaks TLS: use https://${endpoint.slice('http://'.length)} (nothing was applied)`, err)
      }
      if (x.idempotent && retries < o.readRetries) {
        await new Promise((r) => setTimeout(r, 50 * 2 ** retries++))
        continue
      }
      if (x.idempotent) throw new UnreachableError(`request to ${endpoint} failed: ${describeCause(err)}`, err)
      throw new OutcomeUnknownError(
        `the connection to ${endpoint} failed during ${x.method} ${x.path}; the write may or may not have been applied`,
        err,
      )
    }
    if (res.status === 504) {
      const error = errorFromBody(res.status, await jsonBody(res))
      throw new OutcomeUnknownError(`${endpoint}: ${error.message}`, error)
    }
    if (res.status === 503) {
      // The member declined (draining, not ready): nothing was applied; another member may serve it.
      const error = errorFromBody(res.status, await jsonBody(res))
      down.set(endpoint, `${error.code}: ${error.message}`)
      members.failed(endpoint)
      if (down.size < members.list.length) continue
      throw error
    }
    if (res.status === 401 && o.auth?.renewable === true && !reauthenticated) {
      await res.body?.cancel()
      o.auth.invalidate()
      reauthenticated = true
      continue
    }
    if (!res.ok) {
      const body = await jsonBody(res)
      // kvlog answers every error with JSON; a bare 404 comes from another server, most often the etcd port.
      if (res.status === 404 && body === undefined && x.path.startsWith('/v1/')) {
        throw new WrongEndpointError(
          `${endpoint} answered ${x.method} ${x.path} with a 404 that is not kvlog's: it looks like the etcd port ` +
            '(gRPC and its /v3 gateway) or another server; give --endpoint the native port (8379 by default)',
        )
      }
      throw errorFromBody(res.status, body)
    }
    return res
  }
}

function unreachable(down: Map<string, string>): string {
  if (down.size === 1) {
    const [[endpoint, why]] = down
    return `cannot reach ${endpoint}: ${why}`
  }
  return `cannot reach any endpoint: ${[...down].map(([endpoint, why]) => `${endpoint}: ${why}`).join('; ')}`
}
