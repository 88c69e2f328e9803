/**
 * JSON encoding of the native API (HTTP and watch streams), shared by both.
 *
 * Keys and values are bytes. In JSON a byte field `key` is a UTF-8 string; bytes that are not valid UTF-8
 * travel as `keyBase64` instead (likewise value, rangeEnd, prevValue). Requests may use either form; a
 * response uses `key` when the bytes are valid UTF-8 and `keyBase64` otherwise, so any bytes round-trip.
 * Lease ids are decimal strings (64-bit ids do not fit a JSON number). Revisions are JSON numbers.
 */
import { invalid } from '../log/errors.js'
import type { Event, KeyValue, LogEntry } from '../log/types.js'
import type { EventJson, KeyValueJson } from '../wire/native-api.js'

// ignoreBOM: a leading U+FEFF is part of the bytes, not a byte-order mark to strip.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

export type JsonObject = Record<string, unknown>

/** Writes `bytes` as `<name>` (UTF-8) or `<name>Base64` into `out`. */
export function putBytes(out: JsonObject, name: string, bytes: Uint8Array): void {
  const text = utf8(bytes)
  if (text !== undefined) out[name] = text
  else out[`${name}Base64`] = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
}

/** The bytes as a string if they are valid UTF-8 (and survive the round-trip), else undefined. */
export function utf8(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** Reads a byte field given as `<name>` or `<name>Base64`; undefined when neither is present. */
export function getBytes(input: JsonObject, name: string): Buffer | undefined {
  const text = input[name]
  const b64 = input[`${name}Base64`]
  if (text !== undefined && b64 !== undefined) throw invalid(name, `give ${name} or ${name}Base64, not both`)
  if (text !== undefined) {
    if (typeof text !== 'string') throw invalid(name, 'must be a string')
    // A lone surrogate has no UTF-8 form; encoding would silently replace it (merging distinct keys).
    if (!text.isWellFormed()) throw invalid(name, `is not well-formed Unicode; send such bytes as ${name}Base64`)
    return Buffer.from(text, 'utf8')
  }
  if (b64 !== undefined) {
    if (typeof b64 !== 'string' || b64.length % 4 !== 0 || !BASE64.test(b64)) {
      throw invalid(`${name}Base64`, 'must be base64')
    }
    return Buffer.from(b64, 'base64')
  }
  return undefined
}

export function leaseToJson(lease: bigint): string {
  return lease.toString()
}

/** A lease id from JSON: a decimal string (or a safe integer), 0..2^64-1. */
export function leaseFromJson(value: unknown, field: string): bigint {
  if (value === undefined || value === null) return 0n
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
  if (typeof value === 'string' && /^[0-9]{1,20}$/.test(value)) {
    const lease = BigInt(value)
    if (lease < 1n << 64n) return lease
  }
  throw invalid(field, 'must be a lease id: a decimal string between 0 and 2^64-1')
}

export function kvToJson(kv: KeyValue, keysOnly = false): KeyValueJson {
  const bytes: JsonObject = {}
  putBytes(bytes, 'key', kv.key)
  if (!keysOnly) putBytes(bytes, 'value', kv.value)
  const out: KeyValueJson = { ...bytes, createRevision: kv.createRevision, modRevision: kv.modRevision, version: kv.version }
  if (kv.lease !== 0n) out.lease = leaseToJson(kv.lease)
  return out
}

/**
 * kvToJson's JSON text, written straight from a kv's fields (Log.rangeInto's sink): the same bytes as
 * JSON.stringify(kvToJson(kv, keysOnly)) without an object per kv.
 */
export function kvJsonText(
  key: Uint8Array,
  value: Uint8Array,
  createRevision: number,
  modRevision: number,
  version: number,
  lease: bigint,
  keysOnly = false,
): string {
  let text = `{${bytesJsonText('key', key)}`
  if (!keysOnly) text += `,${bytesJsonText('value', value)}`
  text += `,"createRevision":${createRevision},"modRevision":${modRevision},"version":${version}`
  if (lease !== 0n) text += `,"lease":"${leaseToJson(lease)}"`
  return `${text}}`
}

/** putBytes's field as JSON text: `"<name>":<string>` or `"<name>Base64":"<base64>"`. */
function bytesJsonText(name: string, bytes: Uint8Array): string {
  const text = utf8(bytes)
  if (text !== undefined) return `"${name}":${JSON.stringify(text)}`
  return `"${name}Base64":"${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}"`
}

/** One event: type, revision, kv, and prevKv when present. */
export function eventToJson(event: Event, revision: number, withPrevKv: boolean): EventJson {
  const out: EventJson = { type: event.type, revision, kv: kvToJson(event.kv) }
  if (withPrevKv && event.prevKv !== undefined) out.prevKv = kvToJson(event.prevKv)
  return out
}

/** Each event with its commit time and, when the entry records one, who wrote it: { door, user? } (no user = anonymous). */
export function entryEventsToJson(entry: LogEntry, withPrevKv: boolean): EventJson[] {
  const time = new Date(entry.timestamp).toISOString()
  const author = entry.author === undefined ? undefined : { ...entry.author }
  return entry.events.map((e) =>
    author === undefined
      ? { ...eventToJson(e, entry.revision, withPrevKv), time }
      : { ...eventToJson(e, entry.revision, withPrevKv), time, author },
  )
}
