/**
 * TLS for the client: a private CA to trust and a client certificate to present (as etcdctl's --cacert,
 * --cert and --key). Node's global fetch takes no TLS options, so with any of them set, requests go
 * through node:https with an Agent that carries them, wrapped to answer as fetch does (a Response, and
 * connection failures as a TypeError whose cause is the socket's error). Without them the global fetch
 * is used as is.
 */
import { request as httpRequest } from 'node:http'
import { Agent, request as httpsRequest } from 'node:https'
import { Readable } from 'node:stream'

export interface TlsOptions {
  /** PEM: the certificate authorities to trust instead of the system's. */
  ca?: string | Buffer
  /** PEM: a client certificate to present, with its key. */
  cert?: string | Buffer
  key?: string | Buffer
}

export type Fetch = (url: string, init: RequestInit) => Promise<Response>

export function hasTls(tls: TlsOptions | undefined): tls is TlsOptions {
  return tls !== undefined && (tls.ca !== undefined || tls.cert !== undefined || tls.key !== undefined)
}

/** What WebSocket (ws) and https take: the same options, only those that are set. */
export function tlsConnectOptions(tls: TlsOptions | undefined): TlsOptions {
  if (!hasTls(tls)) return {}
  return {
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key } : {}),
  }
}

export function fetchFor(tls: TlsOptions | undefined): Fetch {
  if (!hasTls(tls)) return (url, init) => fetch(url, init)
  const agent = new Agent({ ...tlsConnectOptions(tls), keepAlive: true })
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url)
      const secure = target.protocol === 'https:'
      const headers = Object.fromEntries(new Headers(init.headers ?? {}))
      const options = { method: init.method ?? 'GET', headers, ...(init.signal ? { signal: init.signal } : {}) }
      const req = (secure ? httpsRequest : httpRequest)(target, secure ? { ...options, agent } : options, (res) => {
        const status = res.statusCode ?? 500
        const answer = new Headers()
        for (const [name, value] of Object.entries(res.headers)) {
          if (Array.isArray(value)) for (const v of value) answer.append(name, v)
          else if (value !== undefined) answer.set(name, value)
        }
        const empty = status === 204 || status === 304 || options.method === 'HEAD'
        if (empty) res.resume()
        resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: answer }))
      })
      req.on('error', (err) => reject(init.signal?.aborted ? init.signal.reason : new TypeError('fetch failed', { cause: err })))
      req.end(typeof init.body === 'string' ? init.body : undefined)
    })
}
