/**
 * Errors on the native HTTP API: `{ "error": { "code", "message", "details"? } }` with the HTTP status
 * of the code (apiserver/errors.ts). fastify's own errors (bad JSON, body too large, schema validation)
 * are mapped to our codes so clients only ever see stable codes.
 */
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

export function handleError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  if (isKvlogError(err)) {
    void reply.status(ERROR_STATUS[err.code].http).send(errorBody(err.code, err.message, err.details))
    return
  }
  const code = clientErrorCode(err as FastifyError)
  if (code !== undefined) {
    void reply.status(ERROR_STATUS[code].http).send(errorBody(code, err.message))
    return
  }
  request.log.error({ err }, 'unexpected error')
  void reply.status(500).send(errorBody('INTERNAL', 'internal error; see the server log'))
}
