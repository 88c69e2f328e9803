/**
 * Objects of the resource API: how they are stored, read back, checked, and what the server manages in
 * their metadata.
 *
 * - Stored as JSON text without metadata.resourceVersion; on every read resourceVersion is the key's mod
 *   revision (for a DELETED watch event: the revision of the delete), as kube-apiserver does on etcd.
 * - Server-managed: uid (random, kept for the object's life), creationTimestamp, generation (1 on
 *   create, +1 when anything outside metadata changes, and outside status too for kinds with a status
 *   subresource), deletionTimestamp (set by a delete
 *   while finalizers remain). Clients cannot change these: values they send are replaced.
 * - apiVersion on read is the version the client asked for (no conversion: schema-light objects are the
 *   same in every served version, like a CRD with conversion strategy None).
 */
import { randomUUID } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import type { JsonObject } from '../codec.js'
import { jsonTooDeep, storedObjectMaxDepth } from '../json-limits.js'
import { KvlogError } from '../../log/errors.js'
import type { KeyValue } from '../../log/types.js'
import { apiVersionOf } from './paths.js'
import type { ResourceType } from './registry.js'
import { badRequest, invalidObject, type StatusCause } from './status.js'
import { timestamp, type K8sObject } from './k8s-object.js'
import { kindRules } from './strategy.js'
import { dns1123Label, dns1123Subdomain, labelValue, MAX_ANNOTATIONS_BYTES, pathSegmentName, qualifiedName } from './validation.js'

/** Where a request points: the kind, the version asked for, and the namespace of the path. */
export interface Target {
  rt: ResourceType
  version: string
  namespace?: string
}

/** A stored kv as the object a client sees; undefined if the value is not a JSON object (or nests past maxJsonDepth). */
export function decodeStored(kv: KeyValue, target: Target, resourceVersion = kv.modRevision): K8sObject | undefined {
  let obj: unknown
  // Nested past maxJsonDepth (written through a door that stores bytes): could not be encoded again.
  if (jsonTooDeep(kv.value, storedObjectMaxDepth())) return undefined
  try {
    obj = JSON.parse(kv.value.toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined
  const o = obj as K8sObject
  const metadata = typeof o.metadata === 'object' && o.metadata !== null ? o.metadata : {}
  return {
    ...o,
    apiVersion: apiVersionOf(target.rt.group, target.version),
    kind: target.rt.kind,
    metadata: { ...metadata, resourceVersion: String(resourceVersion) },
  }
}

/** The JSON text to store: the object without its resourceVersion (that is the key's mod revision). */
export function encodeForStorage(obj: K8sObject): string {
  const { resourceVersion: _rv, selfLink: _sl, ...metadata } = obj.metadata
  return JSON.stringify({ ...obj, metadata })
}

/** The JSON object of a request body, its kind and apiVersion checked against the URL. */
function bodyObject(body: unknown, target: Target): K8sObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the request body must be a JSON object')
  const obj = { ...(body as JsonObject) } as K8sObject
  const { rt } = target
  if (obj.kind !== undefined && obj.kind !== rt.kind) {
    throw badRequest(`the object provided is unrecognized (must be of type ${rt.kind}): kind ${JSON.stringify(obj.kind)}`)
  }
  if (obj.apiVersion !== undefined && !rt.versions.some((v) => apiVersionOf(rt.group, v) === obj.apiVersion)) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersionOf(rt.group, target.version)})`,
    )
  }
  if (obj.metadata === undefined) obj.metadata = {}
  if (typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata)) {
    throw invalidObject(rt, '', [{ reason: 'FieldValueInvalid', field: 'metadata', message: 'Invalid value: must be an object' }])
  }
  obj.metadata = { ...obj.metadata }
  obj.apiVersion = apiVersionOf(rt.group, target.version)
  obj.kind = rt.kind
  const ns = obj.metadata.namespace
  if (!rt.namespaced) delete obj.metadata.namespace
  else if (ns !== undefined && ns !== '' && target.namespace !== undefined && ns !== target.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
  } else if (target.namespace !== undefined) obj.metadata.namespace = target.namespace
  return obj
}

const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789'

/** A new object: name (or generateName), server metadata, kind rules, validation. */
export function prepareCreate(body: unknown, target: Target): K8sObject {
  const obj = bodyObject(body, target)
  const meta = obj.metadata
  if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
    throw badRequest('resourceVersion should not be set on objects to be created')
  }
  if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string' && meta.generateName !== '') {
    let suffix = ''
    for (let i = 0; i < 5; i++) suffix += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)]
    meta.name = meta.generateName + suffix
  }
  meta.uid = randomUUID()
  meta.creationTimestamp = timestamp()
  meta.generation = 1
  delete meta.deletionTimestamp
  delete meta.deletionGracePeriodSeconds
  delete meta.managedFields
  // A custom resource's status is written through /status only (built-in kinds leave it to their rules).
  if (target.rt.crd !== undefined && target.rt.statusSubresource === true) delete obj.status
  kindRules(target.rt).prepare?.(obj, undefined)
  validate(obj, target)
  return obj
}

/**
 * The object after an update (PUT or patch) of `current`: server metadata kept, generation bumped.
 * For a kind with a status subresource, an update of the object keeps the stored .status, and an update
 * of /status (`subresource`) changes nothing but .status.
 */
export function prepareUpdate(body: unknown, current: K8sObject, target: Target, name: string, subresource?: 'status'): K8sObject {
  let obj = bodyObject(body, target)
  if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
    throw badRequest(`the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${name})`)
  }
  const statusOnly = target.rt.statusSubresource === true
  if (subresource === 'status') {
    const { status: _s, ...rest } = current
    obj = obj.status === undefined ? { ...rest } : { ...rest, status: obj.status }
    obj.metadata = { ...current.metadata }
  } else if (statusOnly) {
    delete obj.status
    if (current.status !== undefined) obj.status = current.status
  }
  const meta = obj.metadata
  meta.name = name
  const old: JsonObject = current.metadata
  for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds']) {
    if (old[field] === undefined) delete meta[field]
    else meta[field] = old[field]
  }
  delete meta.managedFields
  meta.generation = typeof old.generation === 'number' ? old.generation : 1
  if (!isDeepStrictEqual(specOf(obj, statusOnly), specOf(current, statusOnly))) meta.generation += 1
  kindRules(target.rt).prepare?.(obj, current)
  validate(obj, target)
  return obj
}

/** What generation counts changes of: all but metadata, and but status where status is a subresource. */
function specOf(obj: K8sObject, withoutStatus: boolean): JsonObject {
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = obj
  if (withoutStatus) delete rest.status
  return rest
}

/** Throws INVALID_OBJECT (422) listing every bad field. */
export function validate(obj: K8sObject, target: Target): void {
  const { rt } = target
  const meta = obj.metadata
  const causes: StatusCause[] = []
  const bad = (field: string, value: unknown, messages: string[]) => {
    for (const m of messages) causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${m}` })
  }
  const name = meta.name
  if (name === undefined || name === '') {
    causes.push({ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' })
  } else if (typeof name !== 'string') bad('metadata.name', name, ['must be a string'])
  else bad('metadata.name', name, [...pathSegmentName(name), ...(kindRules(rt).labelName ? dns1123Label(name) : dns1123Subdomain(name))])
  if (rt.namespaced && target.namespace === undefined && (typeof meta.namespace !== 'string' || meta.namespace === '')) {
    causes.push({ reason: 'FieldValueRequired', field: 'metadata.namespace', message: 'Required value' })
  } else if (rt.namespaced && typeof meta.namespace === 'string') bad('metadata.namespace', meta.namespace, dns1123Label(meta.namespace))
  checkStringMap(
    meta.labels,
    'metadata.labels',
    (k, v) => {
      bad('metadata.labels', k, qualifiedName(k))
      bad(`metadata.labels`, v, labelValue(v))
    },
    bad,
  )
  let annotationBytes = 0
  checkStringMap(
    meta.annotations,
    'metadata.annotations',
    (k, v) => {
      bad('metadata.annotations', k, qualifiedName(k.toLowerCase()))
      annotationBytes += k.length + v.length
    },
    bad,
  )
  if (annotationBytes > MAX_ANNOTATIONS_BYTES) {
    causes.push({
      reason: 'FieldValueTooLong',
      field: 'metadata.annotations',
      message: `Too long: must have at most ${MAX_ANNOTATIONS_BYTES} bytes`,
    })
  }
  if (meta.finalizers !== undefined && (!Array.isArray(meta.finalizers) || meta.finalizers.some((f) => typeof f !== 'string'))) {
    bad('metadata.finalizers', meta.finalizers, ['must be a list of strings'])
  }
  causes.push(...(kindRules(rt).validate?.(obj) ?? []))
  if (causes.length > 0) throw invalidObject(rt, typeof name === 'string' ? name : '', causes)
}

function checkStringMap(
  value: unknown,
  field: string,
  each: (k: string, v: string) => void,
  bad: (f: string, v: unknown, m: string[]) => void,
): void {
  if (value === undefined || value === null) return
  if (typeof value !== 'object' || Array.isArray(value)) return bad(field, value, ['must be a map of strings'])
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') bad(`${field}.${k}`, v, ['must be a string'])
    else each(k, v)
  }
}

/**
 * A stored value that is not a JSON object (written through another front door): it cannot be served as
 * an object. Lists and watches skip such keys; a get, update or delete of one is this InternalError.
 */
export function notAnObject(key: string): KvlogError {
  return new KvlogError('INTERNAL', `the value stored at ${key} is not a JSON object`)
}
