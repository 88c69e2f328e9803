/**
 * Protobuf answers: a single object of a built-in kind, for a client whose Accept header lists
 * `application/vnd.kubernetes.protobuf` before JSON (kubectl's typed clients). The object is encoded
 * with the messages of proto/k8s.proto (the inverse of protobuf.ts) in the `k8s\0` + runtime.Unknown
 * envelope.
 *
 * Only what the messages declare can be encoded. An object with a field they do not declare (objects
 * are schema-light: a Pod may carry fields beyond the declared subset) or a value of the wrong JSON type
 * is answered as JSON instead, which every Kubernetes client also accepts. Lists, watches, Tables and
 * errors are always JSON.
 */
import protobuf from 'protobufjs'
import type { JsonObject } from '../codec.js'
import type { K8sObject } from './k8s-object.js'
import { INLINE, MAGIC, messageOf, PROTOBUF_TYPE, root } from './protobuf.js'
import type { ResourceType } from './registry.js'

/** Whether the Accept header prefers protobuf: it is listed, and before any JSON type. */
export function prefersProtobuf(accept: string | undefined): boolean {
  if (accept === undefined) return false
  const types = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase())
  const pb = types.indexOf(PROTOBUF_TYPE)
  const json = types.findIndex((t) => t === 'application/json' || t === '*/*' || t === 'application/*')
  return pb !== -1 && (json === -1 || pb < json)
}

/** Signals a value the messages cannot carry; the answer falls back to JSON. */
class NotEncodable extends Error {}

/** The protobuf answer for `obj`, or undefined when it must be JSON. */
export function encodeProtobufObject(rt: ResourceType, obj: K8sObject): Buffer | undefined {
  const type = messageOf(rt)
  if (type === undefined) return undefined
  try {
    const { apiVersion, kind, ...rest } = obj
    const w = protobuf.Writer.create()
    w.uint32((1 << 3) | 2).fork()
    w.uint32((1 << 3) | 2).string(apiVersion)
    w.uint32((2 << 3) | 2).string(kind)
    w.ldelim()
    w.uint32((2 << 3) | 2).bytes(encodeMessage(type, rest))
    w.uint32((3 << 3) | 2).string('')
    w.uint32((4 << 3) | 2).string('')
    return Buffer.concat([MAGIC, w.finish()])
  } catch (err) {
    if (err instanceof NotEncodable) return undefined
    throw err
  }
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

function encodeMessage(type: protobuf.Type, value: unknown): Uint8Array {
  if (!isObject(value)) throw new NotEncodable()
  const w = protobuf.Writer.create()
  const used = new Set<string>()
  for (const field of type.fieldsArray.slice().sort((a, b) => a.id - b.id)) {
    if (INLINE.has(field.name) && field.resolvedType instanceof protobuf.Type) {
      // An embedded Go struct: its fields sit in this object.
      const inner: JsonObject = {}
      for (const f of field.resolvedType.fieldsArray) {
        if (f.name in value) {
          inner[f.name] = value[f.name]
          used.add(f.name)
        }
      }
      w.uint32((field.id << 3) | 2).bytes(encodeMessage(field.resolvedType, inner))
      continue
    }
    const v = value[field.name]
    used.add(field.name)
    if (v === undefined || v === null) continue
    if (field instanceof protobuf.MapField) {
      if (!isObject(v)) throw new NotEncodable()
      for (const [k, x] of Object.entries(v)) {
        const entry = protobuf.Writer.create()
        entry.uint32((1 << 3) | 2).string(k)
        writeValue(entry, 2, field, x)
        w.uint32((field.id << 3) | 2).bytes(entry.finish())
      }
    } else if (field.repeated) {
      if (!Array.isArray(v)) throw new NotEncodable()
      for (const x of v) writeValue(w, field.id, field, x)
    } else {
      writeValue(w, field.id, field, v)
    }
  }
  for (const k of Object.keys(value)) if (!used.has(k)) throw new NotEncodable()
  return w.finish()
}

function writeValue(w: protobuf.Writer, id: number, field: protobuf.FieldBase, v: unknown): void {
  const message = field.resolvedType
  if (message instanceof protobuf.Type) {
    w.uint32((id << 3) | 2).bytes(special(message, v))
    return
  }
  switch (field.type) {
    case 'string':
      if (typeof v !== 'string') throw new NotEncodable()
      w.uint32((id << 3) | 2).string(v)
      return
    case 'bytes':
      if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) throw new NotEncodable()
      w.uint32((id << 3) | 2).bytes(Buffer.from(v, 'base64'))
      return
    case 'bool':
      if (typeof v !== 'boolean') throw new NotEncodable()
      w.uint32(id << 3).bool(v)
      return
    case 'int32':
      if (!Number.isInteger(v) || Math.abs(v as number) > 2 ** 31 - 1) throw new NotEncodable()
      w.uint32(id << 3).int32(v as number)
      return
    case 'int64':
      if (!Number.isSafeInteger(v)) throw new NotEncodable()
      w.uint32(id << 3).int64(v as number)
      return
    default:
      throw new NotEncodable()
  }
}

/** Time and MicroTime from RFC 3339, Quantity, IntOrString and FieldsV1 from their JSON forms. */
function special(type: protobuf.Type, v: unknown): Uint8Array {
  const w = protobuf.Writer.create()
  switch (type.name) {
    case 'Time':
    case 'MicroTime': {
      const ms = typeof v === 'string' ? Date.parse(v) : NaN
      if (Number.isNaN(ms)) throw new NotEncodable()
      const fraction = /\.(\d+)/.exec(v as string)?.[1] ?? ''
      w.uint32(1 << 3).int64(Math.floor(ms / 1000))
      const nanos = Number(fraction.padEnd(9, '0').slice(0, 9))
      if (nanos > 0) w.uint32(2 << 3).int32(nanos)
      return w.finish()
    }
    case 'Quantity':
      if (typeof v !== 'string') throw new NotEncodable()
      return w
        .uint32((1 << 3) | 2)
        .string(v)
        .finish()
    case 'IntOrString':
      if (typeof v === 'string')
        return w
          .uint32(1 << 3)
          .int64(1)
          .uint32((3 << 3) | 2)
          .string(v)
          .finish()
      if (!Number.isInteger(v)) throw new NotEncodable()
      return w
        .uint32(1 << 3)
        .int64(0)
        .uint32(2 << 3)
        .int32(v as number)
        .finish()
    case 'FieldsV1':
      return w
        .uint32((1 << 3) | 2)
        .bytes(Buffer.from(JSON.stringify(v)))
        .finish()
    default:
      return encodeMessage(root.lookupType(`k8s.${type.name}`), v)
  }
}
