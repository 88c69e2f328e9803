/**
 * grpc-gateway's JSON for etcd's messages, as etcd 3.4 writes and reads it:
 * - out: proto field names (snake_case where the proto says so), bytes in base64, 64-bit integers as
 *   decimal strings, enums by name, and fields at their default value left out (0, "", false, empty
 *   lists, the first enum value: a PUT event has no "type"); a nested message that is set is written
 *   even when empty;
 * - in: the proto name or its lowerCamelCase JSON name; bytes as base64; 64-bit integers as strings or
 *   numbers; enums by name or number; unknown fields are ignored (as etcd's gateway does); a value of the
 *   wrong JSON type is an INVALID_ARGUMENT error.
 *
 * Requests are turned into the same plain objects the gRPC services decode (proto.ts), so one service
 * implementation answers both.
 */
import protobuf from 'protobufjs'
import { decode, encode, type Message } from '../proto.js'

export class JsonError extends Error {}

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'])
const INT32 = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32'])
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())
}

/** A JSON token: a whole string (so digits inside strings are skipped) or a number. */
const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g

/**
 * JSON.parse, except that an integer literal too large for a double (beyond 2^53) is read as its decimal
 * string, so no digit is lost. Go clients, and etcd3gw, send 64-bit ids as bare numbers (a lease ID is
 * usually above 2^53); fieldValue takes integers as numbers or strings alike.
 */
export function parseJson(text: string): unknown {
  return JSON.parse(
    text.replace(JSON_TOKEN, (token) => (/^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token)) ? `"${token}"` : token)),
  )
}

/** The JSON body of a request → the plain object the services take (proto.ts's decoded shape). */
export function requestFromJson(type: protobuf.Type, json: unknown): Message {
  const value = fromJson(type, json, type.name)
  return decode(type, encode(type, type.fromObject(value) as unknown as Message))
}

function fromJson(type: protobuf.Type, json: unknown, path: string): Record<string, unknown> {
  if (json === null || json === undefined) return {}
  if (typeof json !== 'object' || Array.isArray(json))
    throw new JsonError(`json: cannot unmarshal ${jsonKind(json)} into Go value of type ${goName(type)}`)
  const out: Record<string, unknown> = {}
  for (const field of type.fieldsArray) {
    const raw = (json as Record<string, unknown>)[field.name] ?? (json as Record<string, unknown>)[lowerCamel(field.name)]
    if (raw === undefined || raw === null) continue
    const where = `${path}.${field.name}`
    if (field.repeated) {
      if (!Array.isArray(raw)) throw new JsonError(`json: cannot unmarshal ${jsonKind(raw)} into Go value of type []${scalarGoName(field)}`)
      out[field.name] = raw.map((v) => fieldValue(field, v, where))
    } else {
      out[field.name] = fieldValue(field, raw, where)
    }
  }
  return out
}

function fieldValue(field: protobuf.Field, v: unknown, path: string): unknown {
  field.resolve()
  if (field.resolvedType instanceof protobuf.Type) return fromJson(field.resolvedType, v, path)
  if (field.resolvedType instanceof protobuf.Enum) {
    if (typeof v === 'string' && v in field.resolvedType.values) return v
    if (typeof v === 'number' && Number.isInteger(v)) return v
    throw new JsonError(`unknown value ${JSON.stringify(v)} for enum ${field.resolvedType.name}`)
  }
  const bad = () => new JsonError(`json: cannot unmarshal ${jsonKind(v)} into Go value of type ${scalarGoName(field)}`)
  if (field.type === 'bytes') {
    if (typeof v !== 'string') throw bad()
    if (!BASE64.test(v)) throw new JsonError(`illegal base64 data in field ${path}`)
    return Buffer.from(v, v.includes('-') || v.includes('_') ? 'base64url' : 'base64')
  }
  if (field.type === 'string') {
    if (typeof v !== 'string') throw bad()
    return v
  }
  if (field.type === 'bool') {
    if (typeof v !== 'boolean') throw bad()
    return v
  }
  if (INT64.has(field.type) || INT32.has(field.type)) {
    const text = typeof v === 'number' && Number.isInteger(v) ? String(v) : typeof v === 'string' && /^-?\d+$/.test(v) ? v : undefined
    if (text === undefined) throw bad()
    const n = BigInt(text)
    const unsigned = field.type.startsWith('u') || field.type === 'fixed64' || field.type === 'fixed32'
    const bits = INT64.has(field.type) ? 64 : 32
    const min = unsigned ? 0n : -(2n ** BigInt(bits - 1))
    const max = unsigned ? 2n ** BigInt(bits) - 1n : 2n ** BigInt(bits - 1) - 1n
    if (n < min || n > max) throw new JsonError(`json: ${text} overflows ${scalarGoName(field)} in field ${path}`)
    return bits === 64 ? text : Number(n)
  }
  if (typeof v !== 'number') throw bad()
  return v
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array'
  if (v === null) return 'null'
  return typeof v === 'object' ? 'object' : typeof v
}

function goName(type: protobuf.Type): string {
  return `${type.parent?.name ?? ''}.${type.name}`.replace(/^\./, '')
}

function scalarGoName(field: protobuf.Field): string {
  if (field.type === 'bytes') return '[]uint8'
  return field.type
}

/** A response (an object for proto.ts to encode, or bytes already encoded) → grpc-gateway's JSON object. */
export function responseToJson(type: protobuf.Type, response: Message | Buffer): Record<string, unknown> {
  const bytes = Buffer.isBuffer(response) ? response : encode(type, response)
  const message = type.decode(bytes)
  return prune(type, type.toObject(message, { longs: String, enums: String, bytes: String, defaults: false, oneofs: false })) as Record<
    string,
    unknown
  >
}

/** Leaves out fields at their default value, recursively (encode writes explicit zeros that decode keeps). */
function prune(type: protobuf.Type, obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const field of type.fieldsArray) {
    const v = obj[field.name]
    if (v === undefined || v === null) continue
    field.resolve()
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined
    if (field.repeated) {
      if (!Array.isArray(v) || v.length === 0) continue
      out[field.name] = nested ? v.map((x) => prune(nested, x as Record<string, unknown>)) : v
      continue
    }
    if (nested) {
      out[field.name] = prune(nested, v as Record<string, unknown>)
      continue
    }
    if (field.resolvedType instanceof protobuf.Enum) {
      if (v === field.resolvedType.valuesById[0] || v === 0) continue
      out[field.name] = v
      continue
    }
    if (v === '' || v === '0' || v === 0 || v === false) continue
    out[field.name] = v
  }
  return out
}
