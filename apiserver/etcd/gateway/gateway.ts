/**
 * etcd's JSON gateway on the client port: POST /v3/<path> (and /v3beta/<path>) with a JSON body calls
 * the RPC that etcd's proto maps to that path (routes.ts), served by the very handlers gRPC uses; plus
 * GET /version, GET /health and GET /metrics, as etcd serves them next to the gateway.
 *
 * Bad input: a body that is not JSON, or a field of the wrong JSON type, is INVALID_ARGUMENT (400) in the
 * gateway's error shape; a body over `maxBodyBytes` is RESOURCE_EXHAUSTED (429); a body that does not
 * arrive within `bodyTimeoutMs` is answered 408 and the connection's stream closed; unknown paths are
 * 404 and other methods 405 (text, as etcd's router answers them). Before any of that, the browser policy
 * (apiserver/browser-policy.ts) refuses a foreign Host or Origin (403) and a text/plain or other
 * non-JSON body a page could send cross-origin (415); such refusals carry the stable code in the
 * `kvlog-code` header, as gRPC answers carry it in their trailers. A body that is not UTF-8
 * (INVALID_ENCODING) or nests deeper than maxJsonDepth (JSON_TOO_DEEP) is refused the same way.
 */
import type { Log } from '../../../log/backend.js'
import type { ErrorCode, KvlogError } from '../../../log/errors.js'
import { ERROR_STATUS } from '../../errors.js'
import { checkJsonBody, jsonTooDeep, tooDeep } from '../../json-limits.js'
import { refusalMessage, type BrowserPolicy } from '../../browser-policy.js'
import type { Message } from '../proto.js'
import { serviceMethods } from '../proto.js'
import type { Exchange } from '../transport/exchange.js'
import type { ServiceImplementation } from '../transport/grpc-router.js'
import { statusOf } from '../errors.js'
import { GatewayCall, sendError } from './gateway-call.js'
import { JsonError, parseJson, requestFromJson } from './json.js'
import { JsonValueSplitter } from './json-stream.js'
import { probe, type PROBE_PATHS, type ProbeDeps } from './probes.js'
import { ENDS_WITH_REQUEST_BODY, GATEWAY_ROUTES } from './routes.js'

const INVALID_ARGUMENT = 3
const RESOURCE_EXHAUSTED = 8
const UNIMPLEMENTED = 12

export interface GatewayOptions {
  services: Array<[string, ServiceImplementation]>
  /** For /health: the active alarms. */
  log: Pick<Log, 'alarms'>
  /** The etcd version /version reports (its cluster version is major.minor.0). */
  etcdVersion: string
  /** Largest request body, bytes (a JSON body carries bytes in base64: 4/3 of their size). */
  maxBodyBytes: number
  bodyTimeoutMs: number
  metrics?: () => Promise<{ contentType: string; text: string }>
  /** Which browser requests are refused; none when absent. */
  browser?: BrowserPolicy
  /** Deepest nesting of a JSON body (json-limits.ts); unbounded when absent. */
  maxJsonDepth?: number
  /** /livez and /readyz. */
  probes: ProbeDeps
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the service modules' handlers, duck-typed as in grpc-router.ts
type AnyHandler = (call: any, callback?: (err: unknown, response?: Message | Buffer) => void) => void

interface Route {
  handler: AnyHandler | undefined
  method: ReturnType<typeof serviceMethods>[number]
}

export function gateway(options: GatewayOptions): (exchange: Exchange) => void {
  const routes = new Map<string, Route>()
  const implementations = new Map(options.services)
  for (const [path, [service, name]] of Object.entries(GATEWAY_ROUTES)) {
    const method = serviceMethods(service).find((m) => m.name === name)
    if (method === undefined) continue
    const handler = implementations.get(service)?.[name]
    const route: Route = { handler: typeof handler === 'function' ? (handler as AnyHandler) : undefined, method }
    routes.set(`/v3/${path}`, route)
    routes.set(`/v3beta/${path}`, route)
  }
  const [major = '3', minor = '0'] = options.etcdVersion.split('.')
  const version = JSON.stringify({ etcdserver: options.etcdVersion, etcdcluster: `${major}.${minor}.0` })

  return (exchange) => {
    const refused = options.browser?.refusal({ method: exchange.method, headers: exchange.headers })
    if (refused !== undefined) {
      exchange.body.resume()
      return refuse(exchange, refused, refusalMessage(refused))
    }
    const [path, query = ''] = exchange.url.split('?')
    if (path === '/livez' || path === '/readyz')
      return serveProbe(exchange, options.probes, path, new URLSearchParams(query).has('verbose'))
    if (path === '/version' || path === '/health' || path === '/metrics') {
      if (exchange.method !== 'GET' && exchange.method !== 'HEAD') return text(exchange, 405, 'Method Not Allowed')
      exchange.body.resume()
      if (path === '/version') return json(exchange, 200, version)
      if (path === '/health') {
        const healthy = options.log.alarms().length === 0
        return json(exchange, healthy ? 200 : 503, JSON.stringify({ health: String(healthy) }))
      }
      if (options.metrics === undefined) return text(exchange, 404, 'Not Found')
      options.metrics().then(
        (m) => {
          exchange.respond(200, { 'content-type': m.contentType })
          exchange.end(m.text)
        },
        () => text(exchange, 500, 'Internal Server Error'),
      )
      return
    }
    const route = routes.get(path)
    if (route === undefined) {
      exchange.body.resume()
      return text(exchange, 404, 'Not Found')
    }
    if (exchange.method !== 'POST') {
      exchange.body.resume()
      return text(exchange, 405, 'Method Not Allowed')
    }
    if (route.handler === undefined) {
      exchange.body.resume()
      return sendError(exchange, UNIMPLEMENTED, `unknown service ${path}`)
    }
    if (route.method.requestStream) return serveStream(exchange, route, route.handler, options)
    readBody(exchange, options).then(
      (body) => {
        if (body === undefined) return
        let request: Message
        let text: string
        try {
          text = checkJsonBody(body, options.maxJsonDepth ?? Infinity)
        } catch (err) {
          const e = err as KvlogError
          return refuse(exchange, e.code, e.message)
        }
        try {
          request = requestFromJson(route.method.request, text.trim() === '' ? {} : parseJson(text))
        } catch (err) {
          return sendError(exchange, INVALID_ARGUMENT, err instanceof Error ? err.message : String(err))
        }
        const call = new GatewayCall(exchange, route.method.response)
        call.request = request
        try {
          if (route.method.responseStream) route.handler!(call)
          else route.handler!(call, (err, response) => call.answer(err, response))
        } catch (err) {
          call.destroy(err)
        }
      },
      () => undefined,
    )
  }
}

/** A bidi stream: every JSON value of the body is one request message, fed as it arrives. */
function serveStream(exchange: Exchange, route: Route, handler: AnyHandler, options: GatewayOptions): void {
  const call = new GatewayCall(exchange, route.method.response)
  try {
    handler(call)
  } catch (err) {
    return call.destroy(err)
  }
  const splitter = new JsonValueSplitter()
  exchange.body.setEncoding('utf8')
  exchange.body.on('data', (chunk: string) => {
    let values: string[]
    try {
      values = splitter.push(chunk)
      if (splitter.rest().length > options.maxBodyBytes)
        throw Object.assign(new JsonError('request body too large'), { code: RESOURCE_EXHAUSTED })
    } catch (err) {
      return failStream(call, exchange, err)
    }
    for (const value of values) {
      try {
        if (jsonTooDeep(value, options.maxJsonDepth ?? Infinity)) throw new JsonError(tooDeep(options.maxJsonDepth!).message)
        call.data(requestFromJson(route.method.request, parseJson(value)))
      } catch (err) {
        return failStream(call, exchange, err)
      }
    }
  })
  exchange.body.on('end', () => {
    if (splitter.rest().trim() !== '') failStream(call, exchange, new JsonError('unexpected EOF'))
    else if (ENDS_WITH_REQUEST_BODY.has(route.method.name)) call.emit('end')
  })
  exchange.body.on('error', () => undefined)
}

function failStream(call: GatewayCall, exchange: Exchange, err: unknown): void {
  const code = (err as { code?: unknown }).code === RESOURCE_EXHAUSTED ? RESOURCE_EXHAUSTED : INVALID_ARGUMENT
  call.destroy({ code, details: err instanceof Error ? err.message : statusOf(err).message })
  exchange.body.removeAllListeners('data')
  exchange.body.resume()
}

/** A refusal with its stable code in the kvlog-code header, in etcd's JSON error shape. */
function refuse(exchange: Exchange, code: ErrorCode, message: string): void {
  const status = ERROR_STATUS[code]
  exchange.respond(status.http, { 'content-type': 'application/json', 'kvlog-code': code })
  exchange.end(JSON.stringify({ error: message, message, code: status.grpc }))
}

/** The whole body, or undefined when it was refused (too large, too slow: already answered). */
function readBody(exchange: Exchange, options: GatewayOptions): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = (body: Buffer | undefined) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve(body)
    }
    const timer = setTimeout(() => {
      // HTTP/1.1: the connection closes after this answer; the rest of the body is never read.
      exchange.respond(408, { 'content-type': 'text/plain', connection: 'close' })
      exchange.end('Request Timeout\n')
      finish(undefined)
    }, options.bodyTimeoutMs)
    exchange.body.on('data', (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size > options.maxBodyBytes) {
        sendError(exchange, RESOURCE_EXHAUSTED, `grpc: received message larger than max (${size} vs. ${options.maxBodyBytes})`)
        exchange.body.resume()
        finish(undefined)
        return
      }
      chunks.push(chunk)
    })
    exchange.body.on('end', () => finish(Buffer.concat(chunks)))
    exchange.body.on('error', () => finish(undefined))
    exchange.onClose(() => finish(undefined))
  })
}

function serveProbe(exchange: Exchange, deps: ProbeDeps, path: (typeof PROBE_PATHS)[number], verbose: boolean): void {
  exchange.body.resume()
  if (exchange.method !== 'GET' && exchange.method !== 'HEAD') return text(exchange, 405, 'Method Not Allowed')
  probe(deps, path, verbose).then(
    (r) => text(exchange, r.status, r.body),
    () => text(exchange, 500, 'Internal Server Error'),
  )
}

function json(exchange: Exchange, status: number, body: string): void {
  exchange.respond(status, { 'content-type': 'application/json' })
  exchange.end(body)
}

function text(exchange: Exchange, status: number, body: string): void {
  exchange.respond(status, { 'content-type': 'text/plain; charset=utf-8' })
  exchange.end(`${body}\n`)
}
