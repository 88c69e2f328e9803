/**
 * The etcd client port, served as etcd serves it: gRPC and the JSON gateway share one listener.
 *
 *   TCP (or TLS, ALPN h2 / http/1.1) ─▶ first bytes = the HTTP/2 preface? ─┬─ yes: Node's http2 session
 *                                                                          │    content-type application/grpc* ─▶ gRPC
 *                                                                          │    anything else                  ─▶ gateway
 *                                                                          └─ no: HTTP/1.1                      ─▶ gateway
 *
 * The split is made on the connection's first bytes (a client speaking HTTP/2 sends the 24-byte preface
 * first, with or without TLS), so cleartext HTTP/1.1 and HTTP/2 with prior knowledge both work. The bytes
 * read to decide are put back, and the socket is handed to an `http2` server (nghttp2) or an HTTP/1.1
 * server that never listen themselves. Over TLS, HTTP/2 needs ALPN h2 (as gRPC clients negotiate).
 *
 * Limits (docs/security.md): connections and streams per port (`maxConnections`, `maxStreams`), the time a connection may take to
 * show its protocol, and on each HTTP/2 connection nghttp2's own (concurrent streams, decoded header
 * list size and pairs, SETTINGS entries, session memory, invalid frames, refused streams, outstanding
 * pings) plus keepalive, ping policy and idle timeout (session-guard.ts).
 *
 * Shutdown: close() stops accepting, sends GOAWAY on every HTTP/2 connection (open streams may finish) and
 * closes idle HTTP/1.1 connections; whatever is still open after the grace period is cut.
 */
import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from 'node:http'
import {
  constants,
  createServer as createHttp2Server,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2'
import { createServer as createTcpServer, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls'
import { secureContextOptions, type TlsFiles } from '../../tls.js'
import { isGrpcRequest } from './grpc-call.js'
import { h1Exchange, h2Exchange, type Exchange } from './exchange.js'
import { guardSession, type SessionGuardOptions } from './session-guard.js'

/** HTTP/2's connection preface (RFC 9113 3.4). */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')
const HEADERS_TIMEOUT_MS = 10_000
/** The window kvlog announces for each stream and the whole connection: a client may send this much ahead. */
const STREAM_WINDOW_BYTES = 1 << 20
const CONNECTION_WINDOW_BYTES = 1 << 24
const MB = 1_000_000

/** nghttp2's limits on one HTTP/2 connection (config: maxConcurrentStreams, http2*). */
export interface Http2Limits {
  maxConcurrentStreams: number
  maxHeaderListSize: number
  maxHeaderListPairs: number
  /** Bytes (nghttp2 counts whole megabytes). */
  maxSessionMemory: number
  maxSettings: number
  maxOutstandingPings: number
  maxSessionInvalidFrames: number
  maxSessionRejectedStreams: number
}

export interface ClientPortOptions extends SessionGuardOptions {
  host: string
  port: number
  tls: TlsFiles | undefined
  http2: Http2Limits
  maxConnections: number
  /** Streams open at once over all connections. */
  maxStreams: number
  /** A connection must show its protocol (and finish TLS) within this time. */
  unknownProtocolTimeoutMs: number
  grpc(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void
  /** Every request that is not gRPC (HTTP/1.1, or HTTP/2 with another content type). */
  http(exchange: Exchange): void
}

export interface ClientPort {
  /** "host:port" as bound. */
  address: string
  url: string
  close(graceMs: number): Promise<void>
  /** New connections get these files; open ones keep theirs. False on a plaintext port. */
  setTls(tls: TlsFiles): boolean
}

export async function listenClientPort(options: ClientPortOptions): Promise<ClientPort> {
  const sessions = new Set<ServerHttp2Session>()
  const sockets = new Set<Socket>()
  let openStreams = 0
  const limits = options.http2
  const h2 = createHttp2Server({
    maxHeaderListPairs: limits.maxHeaderListPairs,
    maxSessionMemory: Math.max(1, Math.floor(limits.maxSessionMemory / MB)),
    maxSettings: limits.maxSettings,
    maxOutstandingPings: limits.maxOutstandingPings,
    maxSessionInvalidFrames: limits.maxSessionInvalidFrames,
    maxSessionRejectedStreams: limits.maxSessionRejectedStreams,
    unknownProtocolTimeout: options.unknownProtocolTimeoutMs,
    settings: {
      maxConcurrentStreams: limits.maxConcurrentStreams,
      maxHeaderListSize: limits.maxHeaderListSize,
      initialWindowSize: STREAM_WINDOW_BYTES,
    },
  })
  h2.on('session', (session: ServerHttp2Session) => {
    sessions.add(session)
    session.on('error', () => undefined)
    session.once('close', () => sessions.delete(session))
    session.once('connect', () => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES))
    guardSession(session, options)
  })
  const streamClosed = () => openStreams--
  h2.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
    stream.on('error', ignore)
    // nghttp2 applies SETTINGS_MAX_HEADER_LIST_SIZE only once the client has acknowledged it; until then
    // the limit is checked here (the header list's size as HTTP/2 counts it: name, value, 32 per field).
    if (headerListBytes(rawHeaders) > limits.maxHeaderListSize) return stream.close(constants.NGHTTP2_ENHANCE_YOUR_CALM)
    if (openStreams >= options.maxStreams) return stream.close(constants.NGHTTP2_REFUSED_STREAM)
    openStreams++
    stream.on('close', streamClosed)
    if (isGrpcRequest(headers)) options.grpc(stream, headers)
    else options.http(h2Exchange(stream, headers))
  })

  // A slow client may not hold a connection open forever: headers within 10 s, the whole request within
  // 30 s (the gateway answers a body that is not complete after 10 s itself), checked every second.
  const h1 = createHttp1Server(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: 30_000, connectionsCheckingInterval: 1000 },
    (req: IncomingMessage, res: ServerResponse) => {
      disarm(req.socket)
      res.on('finish', () => arm(req.socket))
      options.http(h1Exchange(req, res))
    },
  )
  // The HTTP/1.1 server gets its connections from `route` and never listens itself; its timeout checks
  // start on 'listening', so it is told it listens. Those checks do not cover every connection handed
  // over this way, so an HTTP/1.1 connection also has HEADERS_TIMEOUT_MS to send each request's headers.
  h1.emit('listening')
  const headerTimers = new WeakMap<Socket, NodeJS.Timeout>()
  const arm = (socket: Socket) => {
    disarm(socket)
    if (!socket.destroyed) headerTimers.set(socket, setTimeout(() => socket.destroy(), HEADERS_TIMEOUT_MS).unref())
  }
  const disarm = (socket: Socket) => clearTimeout(headerTimers.get(socket))

  const route = (socket: Socket) => {
    sockets.add(socket)
    // Small answers (a unary call's headers, message and trailers) go out at once, not after Nagle's delay.
    socket.setNoDelay(true)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    let seen: Buffer = Buffer.alloc(0)
    const sniff = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk])
      const n = Math.min(seen.length, PREFACE.length)
      const prefix = seen.subarray(0, n).equals(PREFACE.subarray(0, n))
      if (prefix && n < PREFACE.length) return
      socket.removeListener('data', sniff)
      clearTimeout(unknown)
      socket.pause()
      socket.unshift(seen)
      if (prefix) {
        h2.emit('connection', socket)
      } else {
        arm(socket)
        socket.on('close', () => disarm(socket))
        h1.emit('connection', socket)
        socket.resume()
      }
    }
    // A connection that does not show its protocol in time is closed.
    const unknown = setTimeout(() => socket.destroy(), options.unknownProtocolTimeoutMs)
    socket.on('data', sniff)
  }

  const tls = options.tls
  const server: Server =
    tls === undefined
      ? createTcpServer(route)
      : createTlsServer(
          { ...secureContextOptions(tls), ALPNProtocols: ['h2', 'http/1.1'], handshakeTimeout: options.unknownProtocolTimeoutMs },
          route,
        )
  server.maxConnections = options.maxConnections
  server.on('tlsClientError', () => undefined)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const bound = server.address()
  const port = typeof bound === 'object' && bound !== null ? bound.port : options.port
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  const address = `${host}:${port}`
  return {
    address,
    url: `${tls === undefined ? 'http' : 'https'}://${address}`,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        server.close()
        h1.close() // stops its timeout checks
        for (const s of sessions) s.close()
        h1.closeIdleConnections()
        const done = () => {
          if (sessions.size === 0 && sockets.size === 0) {
            clearTimeout(cut)
            clearInterval(poll)
            resolve()
          }
        }
        const cut = setTimeout(() => {
          for (const s of sessions) s.destroy()
          for (const s of sockets) s.destroy()
          clearInterval(poll)
          resolve()
        }, graceMs)
        const poll = setInterval(() => {
          h1.closeIdleConnections()
          done()
        }, 20)
        done()
      }),
    setTls(files) {
      if (tls === undefined) return false
      ;(server as TlsServer).setSecureContext(secureContextOptions(files)) // ALPN stays the server's
      return true
    },
  }
}

/** A stream's errors end it ('close' follows); there is nothing more to do with them. */
function ignore(): void {}

/** `rawHeaders` is name, value, name, value, ... */
function headerListBytes(rawHeaders: readonly string[]): number {
  let bytes = 0
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) bytes += rawHeaders[i]!.length + rawHeaders[i + 1]!.length + 32
  return bytes
}
