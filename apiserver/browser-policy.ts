/**
 * What a web page may do with kvlog's HTTP doors (the native API, its WebSocket upgrades, and etcd's JSON
 * gateway on the client port). A browser lets any page it shows send requests to any address the browser
 * can reach, loopback included; three checks keep those pages out while leaving non-browser clients
 * (etcdctl, kubectl, curl, the kvlog client), which send no Origin header, untouched:
 *
 * - Host (hostWhitelist, etcd's --host-whitelist): a page on a DNS name its attacker rebinds to 127.0.0.1
 *   is same-origin with itself, not with kvlog, but its requests carry its own name as Host. By default a
 *   loopback listener answers only loopback names; a listener beyond loopback any Host (as etcd's default
 *   "*": there, the name clients use is not known in advance).
 * - Origin (cors, like etcd's --cors): a WebSocket upgrade, and any request other than GET, HEAD and
 *   OPTIONS, that carries an Origin header must come from the server's own origin (the Origin's host:port
 *   is the Host header) or a listed one. Cross-origin GETs need no check: without CORS headers the page
 *   cannot read the answer.
 * - Content type: a body sent as text/plain, multipart/form-data or application/x-www-form-urlencoded
 *   (the types a page may send cross-origin without asking first) is not JSON and is refused. etcd's
 *   gateway is the exception for such a body without Origin, which no browser sends on a POST: etcd's
 *   gateway reads any body as JSON, and its clients send these types (`curl -d` a form type, as etcd's
 *   docs do; a fetch of a string text/plain).
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { ErrorCode } from '../log/errors.js'
import { isLoopback } from './ui-assets.js'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const FORM = 'application/x-www-form-urlencoded'
const SIMPLE_TYPES = new Set(['text/plain', 'multipart/form-data', FORM])

export interface BrowserRequest {
  method: string
  headers: IncomingHttpHeaders
  /** A WebSocket upgrade (checked for Origin whatever its method). */
  upgrade?: boolean
}

export interface BrowserPolicyOptions {
  /** The `cors` setting. */
  cors: string
  /** The `hostWhitelist` setting. */
  hostWhitelist: string
  /** The listener's HOST:PORT as configured. */
  listen: string
  /** etcd's gateway: accept a body of these types from a client that sends no Origin (no browser). */
  simpleBodiesWithoutOrigin?: boolean
}

function list(setting: string): string[] {
  return setting
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '')
}

/** The host name of a Host header or an origin's authority, lowercased, without port or brackets. */
export function hostName(authority: string): string {
  let host = authority.trim().toLowerCase()
  if (host.startsWith('[')) host = host.slice(1, host.indexOf(']') === -1 ? undefined : host.indexOf(']'))
  else if (host.split(':').length === 2) host = host.slice(0, host.indexOf(':'))
  return host.endsWith('.') ? host.slice(0, -1) : host
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name]
  return Array.isArray(v) ? v[0] : v
}

export class BrowserPolicy {
  private readonly anyHost: boolean
  private readonly hosts: Set<string>
  private readonly anyOrigin: boolean
  private readonly origins: Set<string>
  private readonly simpleBodiesWithoutOrigin: boolean

  constructor(options: BrowserPolicyOptions) {
    const hosts = list(options.hostWhitelist)
    const listenHost = options.listen.slice(0, options.listen.lastIndexOf(':'))
    if (hosts.length === 0) {
      this.anyHost = !isLoopback(listenHost)
      this.hosts = new Set()
    } else {
      this.anyHost = hosts.includes('*')
      this.hosts = new Set(hosts.map(hostName))
    }
    const origins = list(options.cors)
    this.anyOrigin = origins.includes('*')
    this.origins = new Set(origins.map((o) => o.replace(/\/+$/, '')))
    this.simpleBodiesWithoutOrigin = options.simpleBodiesWithoutOrigin === true
  }

  hostAllowed(host: string | undefined): boolean {
    // No Host at all (HTTP/1.0, a raw client) is no browser.
    if (this.anyHost || host === undefined) return true
    const name = hostName(host)
    return this.hosts.size === 0 ? isLoopback(name) : this.hosts.has(name)
  }

  /** The origin is the server's own (same scheme-less authority as the Host header) or an allowed one. */
  originAllowed(origin: string, host: string | undefined): boolean {
    const o = origin.trim().toLowerCase()
    if (this.anyOrigin || this.origins.has(o)) return true
    const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/]+)$/.exec(o)?.[1]
    return authority !== undefined && host !== undefined && authority === host.trim().toLowerCase()
  }

  /** Whether a cross-origin page of `origin` may read answers (CORS headers are sent for it). */
  corsOrigin(headers: IncomingHttpHeaders): string | undefined {
    const origin = header(headers, 'origin')
    if (origin === undefined) return undefined
    const o = origin.trim().toLowerCase()
    return this.anyOrigin || this.origins.has(o) ? origin : undefined
  }

  /** The stable code a request is refused with, or undefined when it may go on. */
  refusal(request: BrowserRequest): ErrorCode | undefined {
    const host = header(request.headers, 'host') ?? header(request.headers, ':authority')
    if (!this.hostAllowed(host)) return 'FORBIDDEN_HOST'
    const method = request.method.toUpperCase()
    if (!request.upgrade && SAFE_METHODS.has(method)) return undefined
    const origin = header(request.headers, 'origin')
    if (origin !== undefined && !this.originAllowed(origin, host)) return 'FORBIDDEN_ORIGIN'
    if (request.upgrade) return undefined
    const type = (header(request.headers, 'content-type') ?? '').split(';')[0].trim().toLowerCase()
    if (!SIMPLE_TYPES.has(type)) return undefined
    if (this.simpleBodiesWithoutOrigin && origin === undefined) return undefined
    return 'UNSUPPORTED_MEDIA_TYPE'
  }
}

/** The message that goes with a refusal. */
export function refusalMessage(code: ErrorCode): string {
  if (code === 'FORBIDDEN_HOST') return 'the Host header names a host this server does not answer for (hostWhitelist)'
  if (code === 'FORBIDDEN_ORIGIN') return "the request's Origin is not this server's and is not allowed by cors"
  return 'the body must be JSON (content-type application/json)'
}
