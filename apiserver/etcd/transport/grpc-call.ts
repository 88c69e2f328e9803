/**
 * One gRPC call on a Node http2 stream: length-prefixed messages in, length-prefixed messages out, the
 * status in trailers. The call objects offer the part of grpc-js's server-call surface the etcd services
 * use (`request`, `write(message, cb)`, `writable`, `cancelled`, `end()`, `destroy(err)`, events 'data',
 * 'end', 'cancelled', 'close', 'drain'), the types the service modules are written against.
 *
 * Wire rules (gRPC over HTTP/2):
 * - a message is 1 byte compressed flag + 4 bytes big-endian length + bytes; compression is not served
 *   (a compressed message, or a grpc-encoding other than identity, is UNIMPLEMENTED / INTERNAL);
 * - a message longer than `maxReceiveBytes` fails the call with RESOURCE_EXHAUSTED;
 * - the status goes in trailers (`grpc-status`, `grpc-message` percent-encoded, plus `kvlog-code`); a
 *   call that fails before sending anything answers "trailers only" (one HEADERS frame with END_STREAM),
 *   any other sends its trailers when the stream asks for them ('wantTrailers');
 * - `grpc-timeout` starts a deadline: when it passes the call ends with DEADLINE_EXCEEDED and the handler
 *   sees 'cancelled'.
 *
 * A call that ends with a status other than OK or CANCELLED (a client that goes away, or a handler that
 * cancels, is not a failure) is reported once to `onFailed`, for the server's log.
 */
import { EventEmitter } from 'node:events'
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2'
import type * as protobuf from 'protobufjs'
import { decode, encode, type Message } from '../proto.js'
import { statusOf } from '../errors.js'
import { headerMetadata, socketAuthContext, type AuthContextLike, type MetadataLike } from '../caller.js'
import { STATUS, percentEncode } from './grpc-status.js'

export interface MethodInfo {
  request: protobuf.Type
  response: protobuf.Type
  requestStream: boolean
  responseStream: boolean
}

/** The headers of every answer, and the trailers of every OK answer. */
const RESPONSE_HEADERS: Readonly<OutgoingHttpHeaders> = {
  ':status': 200,
  'content-type': 'application/grpc+proto',
  'grpc-accept-encoding': 'identity',
}
const OK_TRAILERS: Readonly<OutgoingHttpHeaders> = { 'grpc-status': '0' }
const WITH_TRAILERS = { waitForTrailers: true } as const

/** grpc-timeout: digits and a unit (H, M, S, m, u, n); undefined if absent or malformed. */
export function parseTimeout(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined
  const m = /^(\d{1,8})([HMSmun])$/.exec(value)
  if (m === null) return undefined
  const n = Number(m[1])
  const ms = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }[m[2] as 'H' | 'M' | 'S' | 'm' | 'u' | 'n']
  return n * ms
}

/** A call that ended with an error status, as the server logs it. */
export interface FailedCall {
  /** The request path, /package.Service/Method. */
  method: string
  /** The gRPC status name (INVALID_ARGUMENT, ...) and number. */
  code: string
  grpcStatus: number
  /** kvlog's stable error code, when the error has one. */
  kvlogCode?: string
  message: string
  /** The client's address, host:port. */
  peer: string
  ms: number
}

const STATUS_NAMES = new Map<number, string>(Object.entries(STATUS).map(([name, code]) => [code, name]))

/** A handler started with the call: streaming ones at once, unary ones once their request is in (grpc-router.ts). */
export type CallHandler = (call: GrpcCall) => void

/** The call a stream carries, for the stream listeners below (shared functions, not closures per call). */
const CALL = Symbol('kvlog.grpcCall')
type CallStream = ServerHttp2Stream & { [CALL]: GrpcCall }

function onStreamData(this: CallStream, chunk: Buffer): void {
  this[CALL].receive(chunk)
}
function onStreamEnd(this: CallStream): void {
  this[CALL].received()
}
function onStreamDrain(this: CallStream): void {
  this[CALL].emit('drain')
}
function onWantTrailers(this: CallStream): void {
  this.sendTrailers(this[CALL].trailers)
}
function onStreamClose(this: CallStream): void {
  this[CALL].closed()
}

export class GrpcCall extends EventEmitter {
  request: Message | undefined
  cancelled = false
  /** The status has been sent (or the stream is gone): nothing more goes out. */
  private finished = false
  private headersSent = false
  private pending: Buffer | undefined
  /** Sent when the stream asks for them, after the last message. */
  trailers: OutgoingHttpHeaders = OK_TRAILERS
  private deadline: NodeJS.Timeout | undefined
  private readonly started = performance.now()
  /** Run with the first request message, for a call whose request is not a stream. */
  private onRequest: CallHandler | undefined
  private meta: MetadataLike | undefined

  constructor(
    private readonly stream: ServerHttp2Stream,
    readonly method: MethodInfo,
    private readonly maxReceiveBytes: number,
    timeoutMs: number | undefined,
    private readonly headers: IncomingHttpHeaders = {},
    private readonly onFailed?: (call: FailedCall) => void,
  ) {
    super()
    ;(stream as CallStream)[CALL] = this
    stream.on('data', onStreamData)
    stream.on('end', onStreamEnd)
    stream.on('drain', onStreamDrain)
    stream.on('wantTrailers', onWantTrailers)
    stream.on('close', onStreamClose)
    if (timeoutMs !== undefined) {
      this.deadline = setTimeout(() => {
        this.fail(STATUS.DEADLINE_EXCEEDED, 'Deadline Exceeded')
        this.cancelled = true
        this.emit('cancelled')
      }, timeoutMs)
    }
  }

  /** The request's metadata (its headers), for credentials (caller.ts); made when first asked for. */
  get metadata(): MetadataLike {
    return (this.meta ??= headerMetadata(this.headers))
  }

  /**
   * Runs `handler` once the request message is in; a stream that ends without one fails with INTERNAL.
   * (Calls with a request stream start their handler at once.)
   */
  awaitRequest(handler: CallHandler): void {
    this.onRequest = handler
  }

  /** Runs the handler; what it throws ends the call with that error. */
  run(handler: CallHandler): void {
    try {
      handler(this)
    } catch (err) {
      this.destroy(err)
    }
  }

  get writable(): boolean {
    return !this.finished && !this.stream.destroyed && !this.stream.writableEnded
  }

  /** The connection's verified client certificate, as grpc-js offers it. */
  getAuthContext(): AuthContextLike {
    return socketAuthContext(this.stream.session?.socket)
  }

  /** Sends one message (a plain object for the method's response type, or bytes already encoded). */
  write(message: Message | Buffer, written?: (err?: Error | null) => void): boolean {
    return this.writeParts([Buffer.isBuffer(message) ? message : encode(this.method.response, message)], written)
  }

  /**
   * Sends one message given as its parts in order (already encoded), without joining them (the watch
   * outbox's responses: a head and the events of several batches): the length prefix and each part are
   * queued as they are, so a large message is not copied.
   */
  writeParts(parts: readonly Buffer[], written?: (err?: Error | null) => void): boolean {
    if (!this.writable) {
      if (written) queueMicrotask(() => written())
      return false
    }
    let length = 0
    for (const part of parts) length += part.length
    this.sendHeaders()
    const stream = this.stream
    // Corked, the prefix and the parts reach nghttp2 as one vector write.
    stream.cork()
    let ok = stream.write(lengthPrefix(length), parts.length === 0 ? written : undefined)
    parts.forEach((part, i) => (ok = stream.write(part, i === parts.length - 1 ? written : undefined)))
    stream.uncork()
    return ok
  }

  /** Ends the call with OK. */
  end(): void {
    this.finish(STATUS.OK, '')
  }

  /** Ends the call with the error's status (anything not a gRPC error becomes INTERNAL). */
  destroy(err?: unknown): void {
    if (err === undefined) return this.fail(STATUS.CANCELLED, 'Cancelled')
    const { code, message, kvlogCode } = statusOf(err)
    this.finish(code, message, kvlogCode)
  }

  /** A unary answer: one message and OK, or the error. */
  answer(err: unknown, response?: Message | Buffer): void {
    if (err !== null && err !== undefined) return this.destroy(err)
    if (this.finished) return
    const body = Buffer.isBuffer(response) ? response : encode(this.method.response, response ?? {})
    this.finished = true
    if (this.deadline) clearTimeout(this.deadline)
    const stream = this.stream
    if (stream.destroyed || stream.writableEnded) return
    this.sendHeaders()
    stream.cork()
    stream.write(lengthPrefix(body.length))
    stream.end(body)
    stream.uncork()
  }

  fail(code: number, message: string, kvlog?: string): void {
    this.finish(code, message, kvlog)
  }

  private sendHeaders(): void {
    if (this.headersSent) return
    this.headersSent = true
    this.stream.respond(RESPONSE_HEADERS, WITH_TRAILERS)
  }

  private finish(code: number, message: string, kvlog?: string): void {
    if (this.finished) return
    this.finished = true
    if (this.deadline) clearTimeout(this.deadline)
    if (code !== STATUS.OK && code !== STATUS.CANCELLED) this.reportFailure(code, message, kvlog)
    const stream = this.stream
    if (stream.destroyed || stream.writableEnded) return
    const trailers: OutgoingHttpHeaders = { 'grpc-status': String(code) }
    if (message !== '') trailers['grpc-message'] = percentEncode(message)
    if (kvlog !== undefined) trailers['kvlog-code'] = kvlog
    if (!this.headersSent) {
      // Trailers-only: the status rides in the one HEADERS frame.
      this.headersSent = true
      stream.respond({ ...RESPONSE_HEADERS, ...trailers }, { endStream: true })
      return
    }
    this.trailers = trailers
    stream.end()
  }

  private reportFailure(code: number, message: string, kvlog: string | undefined): void {
    if (this.onFailed === undefined) return
    const socket = this.stream.session?.socket
    const host = socket?.remoteAddress ?? ''
    this.onFailed({
      method: this.headers[':path'] ?? '',
      code: STATUS_NAMES.get(code) ?? String(code),
      grpcStatus: code,
      ...(kvlog !== undefined ? { kvlogCode: kvlog } : {}),
      message,
      peer: `${host.includes(':') ? `[${host}]` : host}:${socket?.remotePort ?? ''}`,
      ms: Math.round(performance.now() - this.started),
    })
  }

  /** The client's side of the stream has ended. */
  received(): void {
    if (this.finished) return
    if (this.pending !== undefined && this.pending.length > 0)
      return this.fail(STATUS.INTERNAL, 'grpc: incomplete message at end of stream')
    if (!this.method.requestStream && this.request === undefined)
      return this.fail(STATUS.INTERNAL, 'grpc: no request message before end of stream')
    this.emit('end')
  }

  /** The stream is gone: a call not finished by then was cancelled. */
  closed(): void {
    if (this.deadline) clearTimeout(this.deadline)
    if (!this.finished) {
      this.finished = true
      this.cancelled = true
      this.emit('cancelled')
    }
    this.emit('close')
  }

  /** Splits incoming bytes into messages. */
  receive(chunk: Buffer): void {
    if (this.finished) return
    let buf = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
    while (buf.length >= 5) {
      const compressed = buf[0]
      const length = buf.readUInt32BE(1)
      if (length > this.maxReceiveBytes) {
        this.pending = undefined
        return this.fail(STATUS.RESOURCE_EXHAUSTED, `grpc: received message larger than max (${length} vs. ${this.maxReceiveBytes})`)
      }
      if (buf.length < 5 + length) break
      if (compressed !== 0) return this.fail(STATUS.INTERNAL, 'grpc: compressed flag set with identity or empty encoding')
      const body = buf.subarray(5, 5 + length)
      buf = buf.subarray(5 + length)
      let message: Message
      try {
        message = decode(this.method.request, body)
      } catch (err) {
        return this.fail(STATUS.INTERNAL, `grpc: error unmarshalling request: ${err instanceof Error ? err.message : String(err)}`)
      }
      if (this.method.requestStream) {
        this.emit('data', message)
        if (this.finished) return
      } else if (this.request === undefined) {
        this.request = message
        const handler = this.onRequest
        this.onRequest = undefined
        if (handler !== undefined) this.run(handler)
        if (this.finished) return
      }
    }
    this.pending = buf.length > 0 ? buf : undefined
  }
}

/** gRPC's message prefix: not compressed, then the length (4 bytes, big-endian). */
function lengthPrefix(length: number): Buffer {
  const out = Buffer.allocUnsafe(5)
  out[0] = 0
  out.writeUInt32BE(length, 1)
  return out
}

export function isGrpcRequest(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type']
  return typeof type === 'string' && type.startsWith('application/grpc')
}
