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

/** fastify's error codes that mean "the client sent something wrong", mapped to ours. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'REQUEST_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'INVALID_ARGUMENT',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_ARGUMENT',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_ARGUMENT',
  FST_ERR_VALIDATION: 'INVALID_ARGUMENT',
}

export function handleError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  if (isKvlogError(err)) {
    void reply.status(ERROR_STATUS[err.code].http).send(errorBody(err.code, err.message, err.details))
    return
  }
  const fastifyCode = (err as FastifyError).code
  const mapped = fastifyCode === undefined ? undefined : FASTIFY_CODES[fastifyCode]
  if (mapped !== undefined || (err as FastifyError).validation !== undefined || err instanceof SyntaxError) {
    const code = mapped ?? 'INVALID_ARGUMENT'
    void reply.status(ERROR_STATUS[code].http).send(errorBody(code, err.message))
    return
  }
  request.log.error({ err }, 'unexpected error')
  void reply.status(500).send(errorBody('INTERNAL', 'internal error; see the server log'))
}
