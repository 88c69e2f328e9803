/**
 * Errors the client raises. The client imports nothing from the server side, so the stable codes are
 * restated here as a string type (docs/errors.md is the registry).
 */
import { isStatus, type Status } from './resources/types.js'

export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'EMPTY_KEY'
  | 'KEY_NOT_FOUND'
  | 'DUPLICATE_KEY'
  | 'TOO_MANY_OPS'
  | 'REQUEST_TOO_LARGE'
  | 'COMPACTED'
  | 'FUTURE_REVISION'
  | 'LEASE_NOT_FOUND'
  | 'LEASE_EXISTS'
  | 'LEASE_TTL_TOO_LARGE'
  | 'NO_SPACE'
  | 'CLOSED'
  | 'READ_ONLY'
  | 'NOT_FOUND'
  | 'UNKNOWN_WATCH'
  | 'WATCH_ID_EXISTS'
  | 'TOO_MANY_WATCHERS'
  | 'UNAVAILABLE'
  | 'NOT_APPLIED'
  | 'OUTCOME_UNKNOWN'
  | 'MEMBERSHIP_UNSETTLED'
  | 'INTERNAL'

/** An error answered by the server, with its stable code and details. */
export class KvlogClientError extends Error {
  override readonly name = 'KvlogClientError'
  constructor(
    readonly code: ErrorCode | string,
    message: string,
    readonly status: number,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message)
  }
}

/**
 * The history a watch or a read needed was compacted. Relist (read the current state), then watch from
 * the list's revision + 1. `compactRevision` is the oldest revision still available.
 */
export class CompactedError extends KvlogClientError {
  constructor(
    message: string,
    readonly compactRevision: number,
    status = 410,
    details: Record<string, unknown> = {},
  ) {
    super('COMPACTED', message, status, details)
  }
}

/**
 * A write whose outcome is unknown: the connection failed after the request may have reached the server,
 * so it may or may not have been applied. Never retried automatically; read the key (or compare by
 * revision) to find out.
 */
export class OutcomeUnknownError extends Error {
  override readonly name = 'OutcomeUnknownError'
  readonly code = 'OUTCOME_UNKNOWN'
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message)
  }
}

/**
 * The endpoint is not kvlog's native port, or not spoken to as it expects: the etcd port (which answers
 * 404 without a JSON body), or a TLS port addressed as http://. Nothing was applied; fix the endpoint.
 */
export class WrongEndpointError extends Error {
  override readonly name = 'WrongEndpointError'
  readonly code = 'WRONG_ENDPOINT'
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message)
  }
}

/** The server could not be reached at all (nothing was sent): safe to retry. */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError'
  readonly code = 'UNREACHABLE'
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message)
  }
}

/**
 * An error of the Kubernetes-style resource API, answered as a Status. `code` is the Status reason
 * (NotFound, AlreadyExists, Conflict, Expired, Gone, Invalid, BadRequest, ...), `status` its HTTP code.
 * Expired (410) means the resourceVersion or continue token is older than the history kept: relist.
 */
export class StatusError extends KvlogClientError {
  constructor(
    readonly statusObject: Status,
    httpStatus: number,
  ) {
    super(
      statusObject.reason ?? (httpStatus === 410 ? 'Expired' : 'Unknown'),
      statusObject.message ?? `HTTP ${httpStatus}`,
      statusObject.code ?? httpStatus,
      statusObject.details ?? {},
    )
  }
}

/** True when `err` is a resource API error with this reason, e.g. isReason(err, 'NotFound'). */
export function isReason(err: unknown, reason: string): boolean {
  return err instanceof StatusError && err.code === reason
}

export function errorFromBody(status: number, body: unknown): KvlogClientError {
  if (isStatus(body)) return new StatusError(body, status)
  const e = (body as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined)?.error
  const code = e?.code ?? (status >= 500 ? 'UNAVAILABLE' : 'INVALID_ARGUMENT')
  const message = e?.message ?? `HTTP ${status}`
  const details = e?.details ?? {}
  if (code === 'COMPACTED') return new CompactedError(message, Number(details.compactRevision ?? 0), status, details)
  return new KvlogClientError(code, message, status, details)
}
