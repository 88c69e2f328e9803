/**
 * The registry of stable error codes.
 *
 * Every error that crosses a boundary (the log's API, a front door, the client) carries one of these codes.
 * Codes never change; messages may. Each front door maps a code to its protocol's status exactly once
 * (apiserver/errors.ts), and docs/errors.md lists every code (a test checks both).
 *
 * Programmer mistakes inside the process (calling an internal function with the wrong shape) are plain
 * TypeErrors, not KvlogErrors.
 */

export const ERROR_CODES = {
  INVALID_ARGUMENT: 'The request is malformed: a wrong type, a missing field or a value out of range.',
  EMPTY_KEY: 'A key is required and was empty.',
  KEY_NOT_FOUND: 'A put with ignoreValue or ignoreLease named a key that does not exist.',
  DUPLICATE_KEY: 'A transaction writes the same key twice (two puts, or a put inside a deleted range).',
  TOO_MANY_OPS:
    'A transaction has more compares or operations in one branch than maxTxnOps, or more in total across all its nested transactions than maxTxnTotalOps.',
  REQUEST_TOO_LARGE: 'The request is larger than maxRequestBytes.',
  COMPACTED: 'The requested revision is below the compact revision; its history is gone. Relist.',
  FUTURE_REVISION: 'The requested revision is above the current revision.',
  LEASE_NOT_FOUND: 'The lease does not exist (never granted, revoked or expired).',
  LEASE_EXISTS: 'A lease grant asked for an id that is already in use.',
  LEASE_TTL_TOO_LARGE: "A lease grant asked for a TTL above 9,000,000,000 seconds (etcd's limit).",
  NO_SPACE: 'The database is over its space quota; only reads and deletes are accepted until space is freed.',
  CLOSED: 'The store is closed or shutting down.',
  READ_ONLY: 'The server mirrors another store (it follows an etcd until cutover) and takes no writes; retry after the cutover.',
  NOT_FOUND: 'The addressed resource or route does not exist.',
  UNKNOWN_WATCH: 'The watch id does not name a watch on this connection.',
  WATCH_ID_EXISTS: 'A watch with the requested id already exists on this connection.',
  TOO_MANY_WATCHERS: 'The connection already has maxWatchersPerConnection watches.',
  UNAVAILABLE: 'The server cannot serve the request right now; retry later.',
  NOT_APPLIED:
    "A cluster write was refused before it reached the log (the member it went to does not lead, leadership changed, or it waited past its deadline in the leader's queue): nothing was written; retry.",
  MEMBERSHIP_UNSETTLED:
    'A cluster membership change was asked while the previous one is not yet held durably by a majority of the members; retry once it is.',
  PEER_URL_EXISTS: 'MemberAdd named a peer URL that a member, or a member added and not started yet, already has.',
  TOO_MANY_LEARNERS:
    'MemberAdd of a learner while the cluster already has one (etcd allows one learner at a time); promote or remove it first.',
  MEMBER_NOT_LEARNER: 'MemberPromote named a member that already counts toward the majority (every member not added as a learner does).',
  LEARNER_NOT_READY:
    'MemberPromote named a learner that has not started yet, or holds less than nine tenths of the log durably; retry once it has caught up.',
  NOT_ENOUGH_STARTED_MEMBERS:
    "A membership change (MemberAdd of a voting member, MemberRemove of one, MemberPromote) after which the voting members that have started would no longer be a majority of the voting members, counting those added and not started (etcd's strict reconfiguration check, clusterStrictReconfigCheck): start or remove the members added and not started first.",
  MEMBER_NOT_FOUND: 'A membership change named a member id that no member has (as MemberList lists them).',
  MEMBERSHIP_UNHEALTHY:
    "A cluster membership change would leave fewer live members than the cluster needs (etcd's strict reconfiguration check, clusterStrictReconfigCheck); bring the down members back first.",
  OUTCOME_UNKNOWN:
    'A cluster write may or may not have been applied (the log did not answer within one leader lease, or leadership ended while its publish was in flight); read before retrying a write that is not idempotent.',
  ALREADY_EXISTS: 'The object to create already exists (resource API).',
  CONFLICT:
    'A precondition does not hold: the object was modified or replaced meanwhile (a resourceVersion or uid; an auth change made at the same moment through another cluster member). Reread and retry.',
  INVALID_OBJECT: 'The object fails validation: a bad name, label, annotation or field (resource API; details.causes lists the fields).',
  METHOD_NOT_ALLOWED: 'The resource does not support this method on this path (resource API).',
  FORBIDDEN:
    'The resource API refuses the write by its own rules: creating in a namespace that is being terminated, or deleting a namespace that must always exist.',
  UNSUPPORTED_MEDIA_TYPE: 'The request body has a content type the route does not accept (e.g. server-side apply).',
  UNAUTHENTICATED:
    'Auth is enabled and the request carries no valid identity: no token or certificate, an unknown or expired token, or a wrong user name or password. Authenticate again.',
  PERMISSION_DENIED:
    'The authenticated user has no role that permits this operation on every key it touches (or the operation needs the root role).',
  FAILED_PRECONDITION:
    'The auth change does not fit the current auth state: a user or role that does not exist, a role or permission that is not granted, auth not enabled, or a change that would lock root out.',
  JSON_TOO_DEEP: 'A JSON body or object nests arrays and objects deeper than maxJsonDepth.',
  INVALID_ENCODING: 'A JSON body is not valid UTF-8 (kvlog refuses it rather than replace the bad bytes).',
  FORBIDDEN_ORIGIN:
    "A browser request (it has an Origin header) from an origin that is not the server's own and not in cors: a WebSocket upgrade or a write.",
  FORBIDDEN_HOST: 'The Host header names a host that is not in hostWhitelist (by default: not a loopback name on a loopback listener).',
  TOO_MANY_ATTEMPTS:
    'Too many failed logins from this client address (or as this user from addresses that failed) within loginFailureWindow; retry after it, from a client that knows the password.',
  INTERNAL: 'An unexpected failure inside the server. The store stays consistent; see the server log.',
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export const ALL_ERROR_CODES = Object.keys(ERROR_CODES) as ErrorCode[]

/** Facts attached to an error that a client can act on (e.g. the floor to relist from). */
export interface ErrorDetails {
  /** With COMPACTED: the compact revision, the oldest revision that can still be read or watched. */
  compactRevision?: number
  /** With COMPACTED and FUTURE_REVISION: the store's current revision. */
  currentRevision?: number
  /** The offending field, for INVALID_ARGUMENT and friends. */
  field?: string
  [name: string]: unknown
}

export class KvlogError extends Error {
  readonly code: ErrorCode
  readonly details: ErrorDetails

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message)
    this.name = 'KvlogError'
    this.code = code
    this.details = details
  }
}

export function isKvlogError(err: unknown, code?: ErrorCode): err is KvlogError {
  return err instanceof KvlogError && (code === undefined || err.code === code)
}

export function invalid(field: string, message: string): KvlogError {
  return new KvlogError('INVALID_ARGUMENT', `${field}: ${message}`, { field })
}

export function compacted(requested: number, compactRevision: number, currentRevision: number): KvlogError {
  return new KvlogError(
    'COMPACTED',
    `required revision ${requested} has been compacted; the oldest available revision is ${compactRevision}`,
    { compactRevision, currentRevision, requestedRevision: requested },
  )
}

export function futureRevision(requested: number, currentRevision: number): KvlogError {
  return new KvlogError(
    'FUTURE_REVISION',
    `required revision ${requested} is a future revision; the current revision is ${currentRevision}`,
    { currentRevision, requestedRevision: requested },
  )
}
