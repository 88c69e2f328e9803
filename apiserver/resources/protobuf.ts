/**
 * Protobuf request bodies (`Content-Type: application/vnd.kubernetes.protobuf`), what kubectl's typed
 * clients send for built-in kinds (`kubectl create namespace|configmap|secret ...`).
 *
 * A body is the 4-byte magic `k8s\0` followed by a runtime.Unknown: typeMeta (apiVersion, kind), raw (the
 * object's own message), contentEncoding and contentType (both empty for kubectl). The object is decoded
 * into exactly the JSON object a JSON client would have sent: field names are the JSON names, bytes are
 * base64, int64 are numbers, Time is RFC 3339, Quantity a string, IntOrString a number or a string, and
 * zero values of non-pointer fields are left out as Go's `omitempty` leaves them out (see proto/k8s.proto).
 *
 * Decoding is strict: a field number the message does not declare, a wrong wire type, a length past the
 * end, a truncated varint or an int64 beyond 2^53 is 400 BadRequest; nothing is silently dropped. A kind
 * without a message here (CRDs, CustomResourceDefinition itself) is 415, as kube-apiserver answers a
 * protobuf body for a custom resource.
 */
import { fileURLToPath } from 'node:url'
import protobuf from 'protobufjs'
import { KvlogError } from '../../log/errors.js'
import type { JsonObject } from '../codec.js'
import { apiVersionOf } from './paths.js'
import type { ResourceType } from './registry.js'
import { badRequest } from './status.js'

export const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf'

export const MAGIC = Buffer.from('k8s\0', 'latin1')

const PROTO_FILE = fileURLToPath(new URL('../../../apiserver/resources/proto/k8s.proto', import.meta.url))
export const root = new protobuf.Root()
root.loadSync(PROTO_FILE, { keepCase: true })
root.resolveAll()

/** The message of each built-in kind, by group and kind. */
const MESSAGES: Record<string, string> = {
  '/Namespace': 'Namespace',
  '/ConfigMap': 'ConfigMap',
  '/Secret': 'Secret',
  '/Event': 'Event',
  '/Pod': 'Pod',
  '/Node': 'Node',
  'coordination.k8s.io/Lease': 'Lease',
  '/Service': 'Service',
  '/ServiceAccount': 'ServiceAccount',
  'apps/Deployment': 'Deployment',
  'batch/Job': 'Job',
  'batch/CronJob': 'CronJob',
  'rbac.authorization.k8s.io/Role': 'Role',
  'rbac.authorization.k8s.io/ClusterRole': 'ClusterRole',
  'rbac.authorization.k8s.io/RoleBinding': 'RoleBinding',
  'rbac.authorization.k8s.io/ClusterRoleBinding': 'RoleBinding',
}

/** Embedded Go structs: their fields are the parent's fields in JSON. */
export const INLINE = new Set(['localObjectReference', 'volumeSource'])

/** A protobuf request body, kept as bytes until the route knows which kind it is for. */
export class ProtobufBody {
  constructor(readonly bytes: Buffer) {}
}

/** The message type of a kind, or undefined when the kind is JSON-only. */
export function messageOf(rt: ResourceType): protobuf.Type | undefined {
  if (rt.crd !== undefined) return undefined
  const name = MESSAGES[`${rt.group}/${rt.kind}`]
  return name === undefined ? undefined : root.lookupType(`k8s.${name}`)
}

export function supportsProtobuf(rt: ResourceType): boolean {
  return messageOf(rt) !== undefined
}

export function unsupportedProtobuf(): KvlogError {
  return new KvlogError(
    'UNSUPPORTED_MEDIA_TYPE',
    'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
  )
}

/**
 * The JSON object a protobuf body holds, for the kind at `rt`. The envelope's typeMeta becomes the
 * object's apiVersion and kind, so the usual checks against the URL apply (bodyObject in objects.ts).
 */
export function decodeProtobufBody(bytes: Buffer, rt: ResourceType, version: string): JsonObject {
  const type = messageOf(rt)
  if (type === undefined) throw unsupportedProtobuf()
  if (bytes.length < MAGIC.length || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw badRequest(`provided data does not appear to be a protobuf message, expected prefix [${[...MAGIC].join(' ')}]`)
  }
  const envelope = guarded(() => readMessage(root.lookupType('k8s.Unknown'), bytes.subarray(MAGIC.length), 'Unknown', true))
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: unknown; kind?: unknown }
  const encoding = envelope.contentEncoding ?? ''
  const contentType = envelope.contentType ?? ''
  if (encoding !== '') throw badRequest(`unsupported content encoding in the protobuf envelope: ${JSON.stringify(encoding)}`)
  if (contentType !== '' && contentType !== PROTOBUF_TYPE)
    throw badRequest(`unsupported content type in the protobuf envelope: ${JSON.stringify(contentType)}`)
  if (!(envelope.raw instanceof Uint8Array)) throw badRequest('the protobuf envelope carries no object (runtime.Unknown.raw is empty)')
  const obj = guarded(() => readMessage(type, envelope.raw as Uint8Array, type.name, false))
  return {
    apiVersion:
      typeof typeMeta.apiVersion === 'string' && typeMeta.apiVersion !== '' ? typeMeta.apiVersion : apiVersionOf(rt.group, version),
    kind: typeof typeMeta.kind === 'string' && typeMeta.kind !== '' ? typeMeta.kind : rt.kind,
    ...obj,
  }
}

/** Reader failures (RangeError on a length past the end, bad varints) as 400. */
function guarded<T>(decode: () => T): T {
  try {
    return decode()
  } catch (err) {
    if (err instanceof KvlogError) throw err
    throw badRequest(`unable to decode the protobuf body: ${(err as Error).message}`)
  }
}

const WIRE_VARINT = 0
const WIRE_LEN = 2

/**
 * One message as JSON. `raw` keeps bytes fields as bytes (the envelope's object); otherwise bytes are
 * base64 as in JSON.
 */
function readMessage(type: protobuf.Type, bytes: Uint8Array, path: string, raw: boolean): JsonObject {
  const reader = protobuf.Reader.create(bytes)
  const out: JsonObject = {}
  while (reader.pos < reader.len) {
    const tag = reader.uint32()
    const id = tag >>> 3
    const wire = tag & 7
    const field = type.fieldsById[id]
    if (field === undefined)
      throw badRequest(`protobuf: ${path}: field number ${id} is not a field of ${type.name} that kvlog decodes; send this object as JSON`)
    const where = `${path}.${field.name}`
    if (field instanceof protobuf.MapField) {
      expectWire(wire, WIRE_LEN, where)
      const [k, v] = readMapEntry(field, reader.bytes(), where)
      const map = (out[field.name] ??= {}) as JsonObject
      map[k] = v
    } else if (field.repeated) {
      const list = (out[field.name] ??= []) as unknown[]
      if (wire === WIRE_LEN && isPackable(field.type)) {
        const packed = protobuf.Reader.create(reader.bytes())
        while (packed.pos < packed.len) list.push(readScalar(field, packed, where))
      } else {
        expectWire(wire, wireOf(field), where)
        list.push(readValue(field, reader, where, raw) ?? zeroOf(field))
      }
    } else {
      expectWire(wire, wireOf(field), where)
      const value = readValue(field, reader, where, raw)
      if (value === undefined || (!isPointer(field) && isZero(value))) delete out[field.name]
      else if (INLINE.has(field.name) && typeof value === 'object' && !(value instanceof Uint8Array)) Object.assign(out, value)
      else out[field.name] = value
    }
  }
  return out
}

export function isPointer(field: protobuf.FieldBase): boolean {
  return field.options?.['(ptr)'] === true
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false
}

function zeroOf(field: protobuf.FieldBase): unknown {
  return field.resolvedType instanceof protobuf.Type
    ? {}
    : field.type === 'string' || field.type === 'bytes'
      ? ''
      : field.type === 'bool'
        ? false
        : 0
}

function isPackable(type: string): boolean {
  return type === 'int32' || type === 'int64' || type === 'bool'
}

function wireOf(field: protobuf.FieldBase): number {
  return isPackable(field.type) ? WIRE_VARINT : WIRE_LEN
}

function expectWire(got: number, want: number, where: string): void {
  if (got !== want) throw badRequest(`protobuf: ${where}: wire type ${got}, expected ${want}`)
}

function readMapEntry(field: protobuf.MapField, bytes: Uint8Array, where: string): [string, unknown] {
  const reader = protobuf.Reader.create(bytes)
  let key = ''
  let value: unknown
  while (reader.pos < reader.len) {
    const tag = reader.uint32()
    if (tag >>> 3 === 1) {
      expectWire(tag & 7, WIRE_LEN, `${where} (key)`)
      key = reader.string()
    } else if (tag >>> 3 === 2) {
      expectWire(tag & 7, wireOf(field), `${where}[${JSON.stringify(key)}]`)
      value = readValue(field, reader, `${where}[${JSON.stringify(key)}]`, false)
    } else {
      throw badRequest(`protobuf: ${where}: map entry field number ${tag >>> 3}`)
    }
  }
  return [key, value ?? zeroOf(field)]
}

/** A field's value; undefined for a Time that is Go's zero time (encoded as an empty message). */
function readValue(field: protobuf.FieldBase, reader: protobuf.Reader, where: string, raw: boolean): unknown {
  const message = field.resolvedType
  if (message instanceof protobuf.Type) return special(message, reader.bytes(), where)
  if (field.type === 'bytes') {
    const bytes = reader.bytes()
    return raw ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
  }
  return readScalar(field, reader, where)
}

function readScalar(field: protobuf.FieldBase, reader: protobuf.Reader, where: string): unknown {
  switch (field.type) {
    case 'string':
      return reader.string()
    case 'bool':
      return reader.bool()
    case 'int32':
      return reader.int32()
    case 'int64':
      return safeNumber(reader.int64() as unknown as { toNumber(): number } | number, where)
    default:
      throw new TypeError(`k8s.proto: field type ${field.type} of ${where} has no decoder`)
  }
}

function safeNumber(v: { toNumber(): number } | number, where: string): number {
  const n = typeof v === 'number' ? v : v.toNumber()
  if (!Number.isSafeInteger(n)) throw badRequest(`protobuf: ${where}: integer out of range`)
  return n
}

/** Messages with a JSON form of their own; others decode field by field. */
function special(type: protobuf.Type, bytes: Uint8Array, where: string): unknown {
  switch (type.name) {
    case 'Time':
    case 'MicroTime': {
      if (bytes.length === 0) return undefined
      const t = readMessage(type, bytes, where, false)
      return rfc3339(Number(t.seconds ?? 0), Number(t.nanos ?? 0), type.name === 'MicroTime', where)
    }
    case 'Quantity':
      return readMessage(type, bytes, where, false).string ?? ''
    case 'IntOrString': {
      const v = readMessage(type, bytes, where, false)
      return v.type === 1 ? (v.strVal ?? '') : (v.intVal ?? 0)
    }
    case 'FieldsV1': {
      const raw = readMessage(type, bytes, where, true).Raw
      if (!(raw instanceof Uint8Array)) return {}
      try {
        return JSON.parse(Buffer.from(raw).toString('utf8')) as unknown
      } catch {
        throw badRequest(`protobuf: ${where}: not JSON`)
      }
    }
    default:
      return readMessage(type, bytes, where, false)
  }
}

/** Time: seconds precision, as metav1.Time marshals; MicroTime: six fractional digits. */
function rfc3339(seconds: number, nanos: number, micro: boolean, where: string): string {
  const ms = seconds * 1000
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15 || nanos < 0 || nanos > 999_999_999)
    throw badRequest(`protobuf: ${where}: time out of range`)
  const iso = new Date(ms).toISOString().slice(0, 19)
  return micro ? `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${iso}Z`
}
