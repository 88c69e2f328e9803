/**
 * Errors as etcd's gRPC clients expect them: the gRPC status from the one table in apiserver/errors.ts,
 * and for the codes etcd has its own error for, etcd's exact message (clients match on these strings:
 * clientv3 turns "etcdserver: mvcc: required revision has been compacted" into ErrCompacted, etcdctl
 * prints it). The stable kvlog code rides along in the trailing metadata `kvlog-code`.
 */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js'
import { isKvlogError, type ErrorCode } from '../../log/errors.js'
import { authReason, type AuthReason } from '../auth/errors.js'
import { ERROR_STATUS } from '../errors.js'

/** etcd's messages (etcdserver/api/v3rpc/rpctypes), for the codes that have an etcd counterpart. */
const ETCD_MESSAGES: Partial<Record<ErrorCode, string>> = {
  EMPTY_KEY: 'etcdserver: key is not provided',
  KEY_NOT_FOUND: 'etcdserver: key not found',
  DUPLICATE_KEY: 'etcdserver: duplicate key given in txn request',
  TOO_MANY_OPS: 'etcdserver: too many operations in txn request',
  REQUEST_TOO_LARGE: 'etcdserver: request is too large',
  COMPACTED: 'etcdserver: mvcc: required revision has been compacted',
  FUTURE_REVISION: 'etcdserver: mvcc: required revision is a future revision',
  LEASE_NOT_FOUND: 'etcdserver: requested lease not found',
  LEASE_EXISTS: 'etcdserver: lease already exists',
  LEASE_TTL_TOO_LARGE: 'etcdserver: too large lease TTL',
  NO_SPACE: 'etcdserver: mvcc: database space exceeded',
  CLOSED: 'etcdserver: server stopped',
  NOT_APPLIED: 'etcdserver: leader changed',
  OUTCOME_UNKNOWN: 'etcdserver: request timed out',
  // etcd's ErrUnhealthy: its strict reconfiguration check refuses a change that the cluster cannot take now.
  MEMBERSHIP_UNSETTLED: 'etcdserver: unhealthy cluster',
  MEMBERSHIP_UNHEALTHY: 'etcdserver: unhealthy cluster',
  NOT_ENOUGH_STARTED_MEMBERS: 'etcdserver: re-configuration failed due to not enough started members',
  MEMBER_NOT_FOUND: 'etcdserver: member not found',
  PEER_URL_EXISTS: 'etcdserver: Peer URLs already exists',
  TOO_MANY_LEARNERS: 'etcdserver: too many learner members in cluster',
  MEMBER_NOT_LEARNER: 'etcdserver: can only promote a learner member',
  LEARNER_NOT_READY: 'etcdserver: can only promote a learner member which is in sync with leader',
}

/**
 * etcd's auth errors (rpctypes): its message and gRPC status for each auth reason. The status is etcd's,
 * not the registry's, where they differ (a request without a token is INVALID_ARGUMENT "user name is
 * empty" in etcd, UNAUTHENTICATED for the other doors): etcd clients act on these exact pairs.
 */
export const ETCD_AUTH_ERRORS: Record<AuthReason, [status, string]> = {
  NO_IDENTITY: [status.INVALID_ARGUMENT, 'etcdserver: user name is empty'],
  USER_EMPTY: [status.INVALID_ARGUMENT, 'etcdserver: user name is empty'],
  ROLE_EMPTY: [status.INVALID_ARGUMENT, 'etcdserver: role name is empty'],
  INVALID_TOKEN: [status.UNAUTHENTICATED, 'etcdserver: invalid auth token'],
  AUTH_OLD_REVISION: [status.INVALID_ARGUMENT, 'etcdserver: revision of auth store is old'],
  AUTH_FAILED: [status.INVALID_ARGUMENT, 'etcdserver: authentication failed, invalid user ID or password'],
  PERMISSION_DENIED: [status.PERMISSION_DENIED, 'etcdserver: permission denied'],
  USER_EXISTS: [status.FAILED_PRECONDITION, 'etcdserver: user name already exists'],
  ROLE_EXISTS: [status.FAILED_PRECONDITION, 'etcdserver: role name already exists'],
  USER_NOT_FOUND: [status.FAILED_PRECONDITION, 'etcdserver: user name not found'],
  ROLE_NOT_FOUND: [status.FAILED_PRECONDITION, 'etcdserver: role name not found'],
  ROLE_NOT_GRANTED: [status.FAILED_PRECONDITION, 'etcdserver: role is not granted to the user'],
  PERMISSION_NOT_GRANTED: [status.FAILED_PRECONDITION, 'etcdserver: permission is not granted to the role'],
  ROOT_USER_NOT_EXIST: [status.FAILED_PRECONDITION, 'etcdserver: root user does not exist'],
  ROOT_ROLE_NOT_EXIST: [status.FAILED_PRECONDITION, 'etcdserver: root user does not have root role'],
  AUTH_NOT_ENABLED: [status.FAILED_PRECONDITION, 'etcdserver: authentication is not enabled'],
  INVALID_AUTH_MGMT: [status.FAILED_PRECONDITION, 'etcdserver: invalid auth management'],
  TOO_MANY_LOGINS: [status.UNAVAILABLE, 'etcdserver: too many requests'],
  JWT_VERIFY_ONLY: [status.UNKNOWN, 'auth: token signing attempted with verify-only key'],
}

export interface GrpcError extends Partial<ServiceError> {
  code: status
  details: string
  metadata: Metadata
}

/** The gRPC error for anything a handler threw. Unexpected errors are INTERNAL, with the message. */
export function toGrpcError(err: unknown): GrpcError {
  if (isGrpcError(err)) return err
  const metadata = new Metadata()
  if (isKvlogError(err)) {
    metadata.set('kvlog-code', err.code)
    const reason = authReason(err)
    if (reason !== undefined) {
      const [code, details] = ETCD_AUTH_ERRORS[reason]
      return { name: 'Error', message: details, code, details, metadata }
    }
    const details = ETCD_MESSAGES[err.code] ?? `etcdserver: ${err.message}`
    return { name: 'Error', message: details, code: ERROR_STATUS[err.code].grpc as number as status, details, metadata }
  }
  metadata.set('kvlog-code', 'INTERNAL')
  const details = `etcdserver: internal error: ${err instanceof Error ? err.message : String(err)}`
  return { name: 'Error', message: details, code: status.INTERNAL, details, metadata }
}

/** An error with a given status and message, for the few etcd errors that have no kvlog code. */
export function grpcError(code: status, details: string): GrpcError & Error {
  return Object.assign(new Error(details), { code, details, metadata: new Metadata() })
}

/** For RPCs kvlog does not serve: UNIMPLEMENTED with the reason (docs/api.md lists them). */
export function unimplemented(reason: string): GrpcError & Error {
  return grpcError(status.UNIMPLEMENTED, `kvlog: ${reason}`)
}

function isGrpcError(err: unknown): err is GrpcError {
  return (
    err instanceof Error && typeof (err as Partial<GrpcError>).code === 'number' && (err as Partial<GrpcError>).metadata instanceof Metadata
  )
}

/** The gRPC code, message and kvlog code of anything a handler failed with (already mapped or not). */
export function statusOf(err: unknown): { code: number; message: string; kvlogCode?: string } {
  const given = err as Partial<GrpcError>
  const e =
    typeof given === 'object' && given !== null && typeof given.code === 'number' && typeof given.details === 'string'
      ? given
      : toGrpcError(err)
  const kvlog = e.metadata?.get('kvlog-code')?.[0]
  return {
    code: e.code ?? status.UNKNOWN,
    message: e.details ?? e.message ?? '',
    ...(typeof kvlog === 'string' ? { kvlogCode: kvlog } : {}),
  }
}
