/**
 * Each stable error code (log/errors.ts) mapped once to its protocol statuses. The front doors use this
 * table and nothing else; docs/errors.md shows it, and test/apiserver/errors.test.ts keeps both complete.
 *
 * gRPC codes are numbers from the gRPC spec (so this file needs no gRPC import); Kubernetes reasons are
 * metav1.StatusReason values.
 */
import type { ErrorCode } from '../log/errors.js'

export interface ProtocolStatus {
  http: number
  grpc: GrpcCode
  k8sReason: string
}

/** The gRPC status codes used here (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const GRPC = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  OUT_OF_RANGE: 11,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const
export type GrpcCode = (typeof GRPC)[keyof typeof GRPC]

export const ERROR_STATUS: Record<ErrorCode, ProtocolStatus> = {
  INVALID_ARGUMENT: { http: 400, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'BadRequest' },
  EMPTY_KEY: { http: 400, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'BadRequest' },
  KEY_NOT_FOUND: { http: 400, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'BadRequest' },
  DUPLICATE_KEY: { http: 400, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'BadRequest' },
  TOO_MANY_OPS: { http: 400, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'BadRequest' },
  REQUEST_TOO_LARGE: { http: 413, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'RequestEntityTooLarge' },
  COMPACTED: { http: 410, grpc: GRPC.OUT_OF_RANGE, k8sReason: 'Expired' },
  FUTURE_REVISION: { http: 400, grpc: GRPC.OUT_OF_RANGE, k8sReason: 'BadRequest' },
  LEASE_NOT_FOUND: { http: 404, grpc: GRPC.NOT_FOUND, k8sReason: 'NotFound' },
  LEASE_EXISTS: { http: 409, grpc: GRPC.FAILED_PRECONDITION, k8sReason: 'AlreadyExists' },
  LEASE_TTL_TOO_LARGE: { http: 400, grpc: GRPC.OUT_OF_RANGE, k8sReason: 'BadRequest' },
  NO_SPACE: { http: 507, grpc: GRPC.RESOURCE_EXHAUSTED, k8sReason: 'InternalError' },
  CLOSED: { http: 503, grpc: GRPC.UNAVAILABLE, k8sReason: 'ServiceUnavailable' },
  READ_ONLY: { http: 503, grpc: GRPC.UNAVAILABLE, k8sReason: 'ServiceUnavailable' },
  NOT_FOUND: { http: 404, grpc: GRPC.NOT_FOUND, k8sReason: 'NotFound' },
  UNKNOWN_WATCH: { http: 404, grpc: GRPC.NOT_FOUND, k8sReason: 'NotFound' },
  WATCH_ID_EXISTS: { http: 409, grpc: GRPC.ALREADY_EXISTS, k8sReason: 'AlreadyExists' },
  TOO_MANY_WATCHERS: { http: 429, grpc: GRPC.RESOURCE_EXHAUSTED, k8sReason: 'TooManyRequests' },
  UNAVAILABLE: { http: 503, grpc: GRPC.UNAVAILABLE, k8sReason: 'ServiceUnavailable' },
  NOT_APPLIED: { http: 503, grpc: GRPC.UNAVAILABLE, k8sReason: 'ServiceUnavailable' },
  MEMBERSHIP_UNSETTLED: { http: 503, grpc: GRPC.UNAVAILABLE, k8sReason: 'ServiceUnavailable' },
  NOT_ENOUGH_STARTED_MEMBERS: { http: 409, grpc: GRPC.FAILED_PRECONDITION, k8sReason: 'Conflict' },
  MEMBER_NOT_FOUND: { http: 404, grpc: GRPC.NOT_FOUND, k8sReason: 'NotFound' },
  MEMBERSHIP_UNHEALTHY: { http: 503, grpc: GRPC.UNAVAILABLE, k8sReason: 'ServiceUnavailable' },
  PEER_URL_EXISTS: { http: 409, grpc: GRPC.FAILED_PRECONDITION, k8sReason: 'Conflict' },
  TOO_MANY_LEARNERS: { http: 409, grpc: GRPC.FAILED_PRECONDITION, k8sReason: 'Conflict' },
  MEMBER_NOT_LEARNER: { http: 409, grpc: GRPC.FAILED_PRECONDITION, k8sReason: 'Conflict' },
  LEARNER_NOT_READY: { http: 409, grpc: GRPC.FAILED_PRECONDITION, k8sReason: 'Conflict' },
  // kube-apiserver answers a write its storage did not confirm in time the same way (504 Timeout).
  OUTCOME_UNKNOWN: { http: 504, grpc: GRPC.UNAVAILABLE, k8sReason: 'Timeout' },
  ALREADY_EXISTS: { http: 409, grpc: GRPC.ALREADY_EXISTS, k8sReason: 'AlreadyExists' },
  CONFLICT: { http: 409, grpc: GRPC.FAILED_PRECONDITION, k8sReason: 'Conflict' },
  INVALID_OBJECT: { http: 422, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'Invalid' },
  METHOD_NOT_ALLOWED: { http: 405, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'MethodNotAllowed' },
  FORBIDDEN: { http: 403, grpc: GRPC.PERMISSION_DENIED, k8sReason: 'Forbidden' },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'UnsupportedMediaType' },
  UNAUTHENTICATED: { http: 401, grpc: GRPC.UNAUTHENTICATED, k8sReason: 'Unauthorized' },
  PERMISSION_DENIED: { http: 403, grpc: GRPC.PERMISSION_DENIED, k8sReason: 'Forbidden' },
  FAILED_PRECONDITION: { http: 412, grpc: GRPC.FAILED_PRECONDITION, k8sReason: 'BadRequest' },
  JSON_TOO_DEEP: { http: 400, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'BadRequest' },
  INVALID_ENCODING: { http: 400, grpc: GRPC.INVALID_ARGUMENT, k8sReason: 'BadRequest' },
  FORBIDDEN_ORIGIN: { http: 403, grpc: GRPC.PERMISSION_DENIED, k8sReason: 'Forbidden' },
  FORBIDDEN_HOST: { http: 403, grpc: GRPC.PERMISSION_DENIED, k8sReason: 'Forbidden' },
  TOO_MANY_ATTEMPTS: { http: 429, grpc: GRPC.RESOURCE_EXHAUSTED, k8sReason: 'TooManyRequests' },
  INTERNAL: { http: 500, grpc: GRPC.INTERNAL, k8sReason: 'InternalError' },
}
