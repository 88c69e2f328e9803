/**
 * The etcd client port, served as etcd serves it: gRPC and the JSON gateway share one listener.
 *
 *   TCP (or TLS, ALPN h2 / http/1.1) ─▶ first bytes = the HTTP/2 preface? ─┬─ yes: HTTP/2 session
 *                                                                          │    content-type application/grpc* ─▶ gRPC
 *                                                                          │    anything else                  ─▶ gateway
 *                                                                          └─ no: HTTP/1.1                      ─▶ gateway
 *
 * The split is made on the connection's first bytes (a client speaking HTTP/2 sends the 24-byte preface
 * first, with or without TLS), so cleartext HTTP/1.1 and HTTP/2 with prior knowledge both work.
 *
 * HTTP/2 is kvlog's own (h2/connection.ts), on the socket itself. Keepalive: every connection is pinged
 * each `keepaliveIntervalMs`; one that does not answer within `keepaliveTimeoutMs` is dropped (etcd's
 * --grpc-keepalive-interval/-timeout).
 * Shutdown: close() stops accepting, sends GOAWAY on every HTTP/2 connection (open streams may finish) and
 * closes idle HTTP/1.1 connections; whatever is still open after the grace period is cut.
 */
import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from 'node:http'
import type { IncomingHttpHeaders } from 'node:http2'
import { createServer as createTcpServer, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls'
import { secureContextOptions, type TlsFiles } from '../../tls.js'
import { isGrpcRequest } from './grpc-call.js'
import { h1Exchange, h2Exchange, type Exchange } from './exchange.js'
import { H2Connection } from './h2/connection.js'
import { CLIENT_PREFACE as PREFACE } from './h2/frames.js'
import type { H2Stream } from './h2/stream.js'

const HEADERS_TIMEOUT_MS = 10_000

export interface ClientPortOptions {
  host: string
  port: number
  tls: TlsFiles | undefined
  keepaliveIntervalMs: number
  keepaliveTimeoutMs: number
  grpc(stream: H2Stream, headers: IncomingHttpHeaders): void
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
  const sessions = new Set<H2Connection>()
  const sockets = new Set<Socket>()
  const startH2 = (socket: Socket) => {
    const session = new H2Connection(socket, {
      keepaliveIntervalMs: options.keepaliveIntervalMs,
      keepaliveTimeoutMs: options.keepaliveTimeoutMs,
      onStream: (stream, headers) => {
        if (isGrpcRequest(headers)) options.grpc(stream, headers)
        else options.http(h2Exchange(stream, headers))
      },
    })
    sessions.add(session)
    session.onClose(() => sessions.delete(session))
  }
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
      clearTimeout(idle)
      socket.pause()
      socket.unshift(seen)
      if (prefix) {
        startH2(socket)
        socket.resume()
      } else {
        arm(socket)
        socket.on('close', () => disarm(socket))
        h1.emit('connection', socket)
        socket.resume()
      }
    }
    // A connection that never says anything is closed (as HTTP/1.1's header timeout would).
    const idle = setTimeout(() => socket.destroy(), HEADERS_TIMEOUT_MS)
    socket.on('data', sniff)
  }

  const tls = options.tls
  const server: Server =
    tls === undefined ? createTcpServer(route) : createTlsServer({ ...secureContextOptions(tls), ALPNProtocols: ['h2', 'http/1.1'] }, route)
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
        for (const s of sessions) s.goAway()
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
