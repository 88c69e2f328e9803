/**
 * One RPC through the JSON gateway, with the same call surface as a gRPC call (transport/grpc-call.ts),
 * so the etcd service modules serve it unchanged:
 * - unary: one JSON object in, one JSON object out (`answer`);
 * - server or bidi streams: each message out is one line `{"result":{...}}`; an error after the stream
 *   started is one line `{"error":{"grpc_code","http_code","message","http_status"}}` (grpc-gateway v1).
 *   A bidi stream's request body is a sequence of JSON objects, each one a message; the end of the body
 *   ends a keep-alive stream once its answers are out, not a watch stream (routes.ts,
 *   ENDS_WITH_REQUEST_BODY, as etcd does); the client going away ends either.
 * Errors before anything was sent are `{"error","message","code"}` with grpc-gateway's HTTP status.
 */
import { EventEmitter } from 'node:events'
import type protobuf from 'protobufjs'
import { headerMetadata, type MetadataLike } from '../caller.js'
import { statusOf } from '../errors.js'
import type { Message } from '../proto.js'
import type { Exchange } from '../transport/exchange.js'
import { responseToJson } from './json.js'
import { httpStatus } from './routes.js'

const JSON_HEADERS = { 'content-type': 'application/json' }
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
}

/** Answers an exchange with the gateway's error body. */
export function sendError(exchange: Exchange, code: number, message: string): void {
  exchange.respond(httpStatus(code), JSON_HEADERS)
  exchange.end(JSON.stringify({ error: message, message, code }))
}

export class GatewayCall extends EventEmitter {
  request: Message | undefined
  /** The request's headers as call metadata: the gateway takes the token in `authorization` (caller.ts). */
  readonly metadata: MetadataLike
  cancelled = false
  private finished = false
  private started = false

  constructor(
    private readonly exchange: Exchange,
    private readonly response: protobuf.Type,
  ) {
    super()
    this.metadata = headerMetadata(exchange.headers)
    // Every drain, not only the first: a long stream (a snapshot) waits for one after each full buffer.
    const drained = () => {
      this.emit('drain')
      if (!exchange.closed) exchange.onDrain(drained)
    }
    exchange.onDrain(drained)
    exchange.onClose(() => {
      if (!this.finished) {
        this.finished = true
        this.cancelled = true
        this.emit('cancelled')
      }
      this.emit('close')
    })
  }

  /** The client's "host:port" as grpc-js's getPeer() gives it ('' when unknown: an HTTP/2 stream). */
  getPeer(): string {
    // Over HTTP/1.1 the exchange's body is the request itself, with its socket.
    const socket = (this.exchange.body as { socket?: { remoteAddress?: string; remotePort?: number } }).socket
    const host = socket?.remoteAddress
    if (host === undefined) return ''
    return `${host.includes(':') ? `[${host}]` : host}:${socket?.remotePort ?? ''}`
  }

  get writable(): boolean {
    return !this.finished && !this.exchange.closed
  }

  /** A stream message: one `{"result":...}` line. */
  write(message: Message | Buffer, written?: (err?: Error | null) => void): boolean {
    if (!this.writable) {
      if (written) queueMicrotask(() => written())
      return false
    }
    this.start()
    const ok = this.exchange.write(JSON.stringify({ result: responseToJson(this.response, message) }) + '\n')
    if (written) {
      if (ok) queueMicrotask(() => written())
      else this.exchange.onDrain(() => written())
    }
    return ok
  }

  end(): void {
    if (this.finished) return
    this.finished = true
    this.start()
    this.exchange.end()
  }

  destroy(err?: unknown): void {
    if (this.finished) return
    this.finished = true
    const { code, message } = statusOf(err ?? { code: 1, details: 'context canceled' })
    if (!this.started) return sendError(this.exchange, code, message)
    const status = httpStatus(code)
    this.exchange.end(
      JSON.stringify({
        error: { grpc_code: code, http_code: status, message, http_status: STATUS_TEXT[status] ?? 'Unknown' },
      }) + '\n',
    )
  }

  /** A unary answer. */
  answer(err: unknown, response?: Message | Buffer): void {
    if (err !== null && err !== undefined) return this.destroy(err)
    if (this.finished) return
    this.finished = true
    const body = JSON.stringify(responseToJson(this.response, response ?? {}))
    this.exchange.respond(200, JSON_HEADERS)
    this.exchange.end(body)
  }

  /** Feeds one request message of a bidi stream. */
  data(message: Message): void {
    if (!this.finished) this.emit('data', message)
  }

  private start(): void {
    if (this.started) return
    this.started = true
    this.exchange.respond(200, JSON_HEADERS)
  }
}
