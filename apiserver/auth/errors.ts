/**
 * Why an auth check or an auth change failed. Each reason has a stable code from the registry
 * (log/errors.ts), which is all the native and resource doors need; the etcd door also maps the reason to
 * etcd's own message and gRPC status (apiserver/etcd/errors.ts), since etcd clients match on the text.
 * The reason rides in the error's details as `reason`.
 */
import { KvlogError, type ErrorCode } from '../../log/errors.js'

export const AUTH_REASONS = {
  /** No token and no certificate on a request while auth is enabled (etcd: "user name is empty"). */
  NO_IDENTITY: 'UNAUTHENTICATED',
  INVALID_TOKEN: 'UNAUTHENTICATED',
  /** A JWT issued before the last change of users, roles or permissions: authenticate again. */
  AUTH_OLD_REVISION: 'UNAUTHENTICATED',
  AUTH_FAILED: 'UNAUTHENTICATED',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  USER_EMPTY: 'INVALID_ARGUMENT',
  ROLE_EMPTY: 'INVALID_ARGUMENT',
  USER_EXISTS: 'ALREADY_EXISTS',
  ROLE_EXISTS: 'ALREADY_EXISTS',
  USER_NOT_FOUND: 'FAILED_PRECONDITION',
  ROLE_NOT_FOUND: 'FAILED_PRECONDITION',
  ROLE_NOT_GRANTED: 'FAILED_PRECONDITION',
  PERMISSION_NOT_GRANTED: 'FAILED_PRECONDITION',
  ROOT_USER_NOT_EXIST: 'FAILED_PRECONDITION',
  ROOT_ROLE_NOT_EXIST: 'FAILED_PRECONDITION',
  AUTH_NOT_ENABLED: 'FAILED_PRECONDITION',
  INVALID_AUTH_MGMT: 'FAILED_PRECONDITION',
  /** More password checks are waiting than authMaxPendingLogins: the login is refused at once. */
  TOO_MANY_LOGINS: 'UNAVAILABLE',
  /** Authenticate on a server that has only the JWT public key. */
  JWT_VERIFY_ONLY: 'FAILED_PRECONDITION',
} as const satisfies Record<string, ErrorCode>

export type AuthReason = keyof typeof AUTH_REASONS

const MESSAGES: Record<AuthReason, string> = {
  NO_IDENTITY: 'auth is enabled and the request carries no token or client certificate',
  INVALID_TOKEN: 'the auth token is unknown or has expired',
  AUTH_OLD_REVISION: 'the auth token was issued before the last change of the auth state; authenticate again',
  AUTH_FAILED: 'authentication failed, invalid user name or password',
  PERMISSION_DENIED: 'permission denied',
  USER_EMPTY: 'user name is empty',
  ROLE_EMPTY: 'role name is empty',
  USER_EXISTS: 'user name already exists',
  ROLE_EXISTS: 'role name already exists',
  USER_NOT_FOUND: 'user name not found',
  ROLE_NOT_FOUND: 'role name not found',
  ROLE_NOT_GRANTED: 'role is not granted to the user',
  PERMISSION_NOT_GRANTED: 'permission is not granted to the role',
  ROOT_USER_NOT_EXIST: 'root user does not exist',
  ROOT_ROLE_NOT_EXIST: 'root user does not have root role',
  AUTH_NOT_ENABLED: 'authentication is not enabled',
  INVALID_AUTH_MGMT: 'the change would leave auth enabled without a root user holding the root role',
  TOO_MANY_LOGINS: 'too many password checks are waiting; retry later',
  JWT_VERIFY_ONLY: 'this server has only the JWT public key and cannot issue tokens',
}

export function authError(reason: AuthReason, detail?: string): KvlogError {
  const message = detail === undefined ? MESSAGES[reason] : `${MESSAGES[reason]}: ${detail}`
  return new KvlogError(AUTH_REASONS[reason], message, { reason })
}

/** The auth reason of an error, if it is one. */
export function authReason(err: KvlogError): AuthReason | undefined {
  const r = err.details.reason
  return typeof r === 'string' && r in AUTH_REASONS ? (r as AuthReason) : undefined
}
