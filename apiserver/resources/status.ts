/**
 * Errors of the resource API as Kubernetes Status objects (metav1.Status), built from the one error
 * registry: a KvlogError's code gives the HTTP status and the reason (apiserver/errors.ts). The
 * constructors below produce kube-apiserver's messages, so clients that parse them (kubectl) are happy.
 *
 * Field order follows kube-apiserver's JSON: kind, apiVersion, metadata, status, message, reason,
 * details, code (a watch's ERROR event must match it exactly).
 */
import { ERROR_STATUS } from '../errors.js'
import { isKvlogError, KvlogError, type ErrorCode } from '../../log/errors.js'
import type { ResourceType } from './registry.js'

export interface StatusCause {
  reason: string
  message: string
  field: string
}

export interface StatusDetails {
  name?: string
  group?: string
  kind?: string
  causes?: StatusCause[]
}

export interface K8sStatus {
  kind: 'Status'
  apiVersion: 'v1'
  metadata: Record<string, never>
  status: 'Success' | 'Failure'
  message: string
  reason: string
  details?: StatusDetails
  code: number
}

/** The Status for any error; anything that is not a KvlogError is an InternalError. */
export function statusOf(err: unknown): K8sStatus {
  const e = isKvlogError(err) ? err : new KvlogError('INTERNAL', 'internal error; see the server log')
  const s = ERROR_STATUS[e.code]
  const base = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: e.message, reason: s.k8sReason } as const
  const details = e.details.k8s as StatusDetails | undefined
  return details === undefined ? { ...base, code: s.http } : { ...base, details, code: s.http }
}

/** "pods", or "widgets.example.com" for a group (kube's qualified resource). */
export function qualified(rt: ResourceType): string {
  return rt.group === '' ? rt.resource : `${rt.resource}.${rt.group}`
}

function k8sError(code: ErrorCode, message: string, details: StatusDetails): KvlogError {
  return new KvlogError(code, message, { k8s: details })
}

export function notFound(rt: ResourceType, name: string): KvlogError {
  return k8sError('NOT_FOUND', `${qualified(rt)} "${name}" not found`, { name, group: rt.group, kind: rt.resource })
}

export function alreadyExists(rt: ResourceType, name: string): KvlogError {
  return k8sError('ALREADY_EXISTS', `${qualified(rt)} "${name}" already exists`, { name, group: rt.group, kind: rt.resource })
}

export function conflict(
  rt: ResourceType,
  name: string,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): KvlogError {
  return k8sError('CONFLICT', `Operation cannot be fulfilled on ${qualified(rt)} "${name}": ${why}`, {
    name,
    group: rt.group,
    kind: rt.resource,
  })
}

/** 422 Invalid with one cause per bad field (kube's field.ErrorList). */
export function invalidObject(rt: ResourceType, name: string, causes: StatusCause[]): KvlogError {
  const list = causes.map((c) => `${c.field}: ${c.message}`).join(', ')
  return k8sError('INVALID_OBJECT', `${rt.kind}${rt.group === '' ? '' : `.${rt.group}`} "${name}" is invalid: ${list}`, {
    name,
    group: rt.group,
    kind: rt.kind,
    causes,
  })
}

/** 401 as kube-apiserver words it (it says no more than that to an unauthenticated client). */
export function unauthorized(): KvlogError {
  return new KvlogError('UNAUTHENTICATED', 'Unauthorized')
}

/**
 * 403 with kube-apiserver's RBAC message, e.g. `configmaps "x" is forbidden: User "alice" cannot get
 * resource "configmaps" in API group "" in the namespace "default"`.
 */
export function forbidden(
  rt: ResourceType,
  verb: string,
  user: string,
  namespace: string | undefined,
  name: string | undefined,
): KvlogError {
  const subject = name === undefined ? qualified(rt) : `${qualified(rt)} "${name}"`
  const where = namespace === undefined ? 'at the cluster scope' : `in the namespace "${namespace}"`
  return k8sError(
    'PERMISSION_DENIED',
    `${subject} is forbidden: User "${user}" cannot ${verb} resource "${rt.resource}" in API group "${rt.group}" ${where}`,
    {
      name,
      group: rt.group,
      kind: rt.resource,
    },
  )
}

/** 422 Invalid for bad list/watch options (kube validates ListOptions the same way). */
export function invalidOptions(field: string, message: string): KvlogError {
  return k8sError('INVALID_OBJECT', `ListOptions.meta.k8s.io "" is invalid: ${field}: ${message}`, {
    group: 'meta.k8s.io',
    kind: 'ListOptions',
    causes: [{ reason: 'FieldValueInvalid', field, message }],
  })
}

export function badRequest(message: string): KvlogError {
  return new KvlogError('INVALID_ARGUMENT', message)
}

export function methodNotAllowed(): KvlogError {
  return new KvlogError('METHOD_NOT_ALLOWED', 'the server does not allow this method on the requested resource')
}

/** 404 for a path that names no resource (kube answers a bare "404 page not found" Status). */
export function noSuchPath(): KvlogError {
  return new KvlogError('NOT_FOUND', 'the server could not find the requested resource')
}

/** The ERROR event a watch sends when its resourceVersion is older than the log keeps (410 Expired). */
export function tooOldStatus(requested: number, oldest: number): K8sStatus {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${requested} (${oldest})`,
    reason: 'Expired',
    code: 410,
  }
}
