/**
 * One plain HTTP request/response on the client port, the same whether it came over HTTP/1.1 or as an
 * HTTP/2 stream that is not gRPC: what the JSON gateway is written against.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2'
import type { Readable } from 'node:stream'

export interface Exchange {
  method: string
  /** The path with its query string. */
  url: string
  headers: IncomingHttpHeaders
  /** The request body. */
  body: Readable
  /** Sends the status and headers (once). */
  respond(status: number, headers: Record<string, string>): void
  /** Writes body bytes; false when the client is not reading fast enough (wait for onDrain). */
  write(chunk: string | Buffer): boolean
  end(chunk?: string | Buffer): void
  onDrain(fn: () => void): void
  /** Called once when the exchange is over: answered, or the client went away. */
  onClose(fn: () => void): void
  /** The client is gone or the response ended. */
  readonly closed: boolean
}

export function h1Exchange(req: IncomingMessage, res: ServerResponse): Exchange {
  let closed = false
  res.on('close', () => (closed = true))
  return {
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    headers: req.headers,
    body: req,
    respond: (status, headers) => {
      if (!res.headersSent) res.writeHead(status, headers)
    },
    write: (chunk) => (closed ? false : res.write(chunk)),
    end: (chunk) => {
      if (!closed) res.end(chunk)
    },
    onDrain: (fn) => res.once('drain', fn),
    onClose: (fn) => res.once('close', fn),
    get closed() {
      return closed || res.writableEnded
    },
  }
}

/** Headers HTTP/2 does not carry (the stream ends, not the connection): Node refuses them in a response. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'])

export function h2Exchange(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Exchange {
  // As HTTP/1.1's response does, a body written before any headers goes out under status 200.
  const headersFirst = () => {
    if (!stream.headersSent) stream.respond({ ':status': 200 })
  }
  const closed = () => stream.destroyed || stream.closed || stream.writableEnded
  return {
    method: String(headers[':method'] ?? 'GET'),
    url: String(headers[':path'] ?? '/'),
    headers,
    body: stream,
    respond: (status, h) => {
      if (stream.headersSent || closed()) return
      const fields: OutgoingHttpHeaders = { ':status': status }
      for (const [name, value] of Object.entries(h)) if (!CONNECTION_HEADERS.has(name.toLowerCase())) fields[name] = value
      stream.respond(fields)
    },
    write: (chunk) => {
      if (closed()) return false
      headersFirst()
      return stream.write(chunk)
    },
    end: (chunk) => {
      if (closed()) return
      headersFirst()
      stream.end(chunk)
    },
    onDrain: (fn) => stream.once('drain', fn),
    onClose: (fn) => stream.once('close', fn),
    get closed() {
      return closed()
    },
  }
}
