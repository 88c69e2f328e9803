/**
 * One plain HTTP request/response on the client port, the same whether it came over HTTP/1.1 or as an
 * HTTP/2 stream that is not gRPC: what the JSON gateway is written against.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { IncomingHttpHeaders } from 'node:http2'
import { Readable } from 'node:stream'
import type { H2Stream } from './h2/stream.js'

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

export function h2Exchange(stream: H2Stream, headers: IncomingHttpHeaders): Exchange {
  // The body as a Readable, fed as DATA arrives (HTTP/2's flow control has already bounded it).
  const body = new Readable({ read: () => undefined })
  stream.on('data', (chunk: Buffer) => body.push(chunk))
  stream.on('end', () => body.push(null))
  stream.on('close', () => {
    if (!stream.remoteEnded) body.destroy()
  })
  const text = (chunk: string | Buffer) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  // As HTTP/1.1's response does, a body written before any headers goes out under status 200.
  const headersFirst = () => {
    if (!stream.headersSent) stream.respond([[':status', '200']])
  }
  return {
    method: String(headers[':method'] ?? 'GET'),
    url: String(headers[':path'] ?? '/'),
    headers,
    body,
    respond: (status, h) => {
      // HTTP/2 has no connection header (the stream ends, not the connection).
      const fields: Array<[string, string]> = [[':status', String(status)]]
      for (const [name, value] of Object.entries(h)) if (name.toLowerCase() !== 'connection') fields.push([name, value])
      stream.respond(fields)
    },
    write: (chunk) => {
      headersFirst()
      return stream.write(text(chunk))
    },
    end: (chunk) => {
      if (!stream.writable) return
      headersFirst()
      if (chunk !== undefined && chunk.length > 0) stream.write(text(chunk))
      stream.end()
    },
    onDrain: (fn) => stream.once('drain', fn),
    onClose: (fn) => stream.once('close', fn),
    get closed() {
      return !stream.writable
    },
  }
}
