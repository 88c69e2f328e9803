/**
 * Errors as etcd's gRPC clients expect them: the gRPC status from the one table in apiserver/errors.ts,
 * and for the codes etcd has its own error for, etcd's exact message (clients match on these strings:
 * clientv3 turns "etcdserver: mvcc: required revision has been compacted" into ErrCompacted, etcdctl
 * prints it). The stable kvlog code rides along in the trailing metadata `kvlog-code`.
 */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js'
import { isKvlogError, type ErrorCode } from '../../log/errors.js'
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
  return err instanceof Error && typeof (err as Partial<GrpcError>).code === 'number' && (err as Partial<GrpcError>).metadata instanceof Metadata
}

/** The gRPC code, message and kvlog code of anything a handler failed with (already mapped or not). */
export function statusOf(err: unknown): { code: number; message: string; kvlogCode?: string } {
  const given = err as Partial<GrpcError>
  const e = typeof given === 'object' && given !== null && typeof given.code === 'number' && typeof given.details === 'string'
    ? given
    : toGrpcError(err)
  const kvlog = e.metadata?.get('kvlog-code')?.[0]
  return { code: e.code ?? status.UNKNOWN, message: e.details ?? e.message ?? '', ...(typeof kvlog === 'string' ? { kvlogCode: kvlog } : {}) }
}
