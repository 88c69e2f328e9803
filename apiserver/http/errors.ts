/**
 * Errors on the native HTTP API: `{ "error": { "code", "message", "details"? } }` with the HTTP status
 * of the code (apiserver/errors.ts). fastify's own errors (bad JSON, body too large, schema validation)
 * are mapped to our codes so clients only ever see stable codes.
 */
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { ERROR_STATUS } from '../errors.js'
import { isKvlogError, type ErrorCode } from '../../log/errors.js'

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> }
}

export function errorBody(code: ErrorCode, message: string, details?: Record<string, unknown>): ErrorBody {
  return { error: details && Object.keys(details).length > 0 ? { code, message, details } : { code, message } }
}

/**
 * fastify's own client errors (malformed JSON, `__proto__` keys, wrong content type, body over
 * bodyLimit, ...) carry a 4xx statusCode: map them by status, so none can surface as INTERNAL.
 */
function clientErrorCode(err: FastifyError): ErrorCode | undefined {
  const status = err.statusCode
  if (status === undefined || status < 400 || status >= 500) return undefined
  return status === 413 ? 'REQUEST_TOO_LARGE' : 'INVALID_ARGUMENT'
}

/** The app's error handler; `maxRequestBytes` goes into REQUEST_TOO_LARGE details as documented. */
export function errorHandler(maxRequestBytes: number) {
  return (err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void => {
    if (isKvlogError(err)) {
      void reply.status(ERROR_STATUS[err.code].http).send(errorBody(err.code, err.message, err.details))
      return
    }
    const code = clientErrorCode(err as FastifyError)
    if (code !== undefined) {
      const details = code === 'REQUEST_TOO_LARGE' ? { maxRequestBytes } : undefined
      void reply.status(ERROR_STATUS[code].http).send(errorBody(code, err.message, details))
      return
    }
    request.log.error({ err }, 'unexpected error')
    void reply.status(500).send(errorBody('INTERNAL', 'internal error; see the server log'))
  }
}

/**
 * Errors Node's HTTP parser raises before fastify sees a request (header overflow, malformed request
 * line): answered in the same error shape, then the connection is closed.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW'
  const status = tooLarge ? 431 : 400
  const body = JSON.stringify(
    errorBody(
      tooLarge ? 'REQUEST_TOO_LARGE' : 'INVALID_ARGUMENT',
      tooLarge ? 'request headers (or URL) too large' : 'malformed HTTP request',
    ),
  )
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}
