/**
 * Request parsing for the native HTTP API: query strings and JSON bodies become the log's request
 * shapes. Unknown fields, wrong types and bad numbers are INVALID_ARGUMENT naming the field, so a typo
 * is never silently ignored.
 */
import { invalid, KvlogError } from '../log/errors.js'
import { prefixEnd } from '../log/keys.js'
import { getBytes, type JsonObject } from './codec.js'

export type Query = Record<string, string | string[] | undefined>

/** Rejects fields other than `allowed` (byte fields count with their Base64 twin). */
export function onlyFields(input: JsonObject, allowed: readonly string[], where: string): void {
  for (const name of Object.keys(input)) {
    if (!allowed.includes(name)) throw invalid(where === '' ? name : `${where}.${name}`, 'unknown field')
  }
}

export function asObject(value: unknown, where: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(where, 'must be a JSON object')
  return value as JsonObject
}

/** A query parameter given once, as a string. */
export function queryString(q: Query, name: string): string | undefined {
  const v = q[name]
  if (Array.isArray(v)) throw invalid(name, 'given more than once')
  return v
}

export function queryInt(q: Query, name: string): number | undefined {
  const v = queryString(q, name)
  if (v === undefined) return undefined
  if (!/^[0-9]{1,16}$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw invalid(name, `must be a non-negative integer, got ${JSON.stringify(v)}`)
  }
  return Number(v)
}

export function queryBool(q: Query, name: string): boolean {
  const v = queryString(q, name)
  if (v === undefined || v === 'false') return false
  if (v === 'true' || v === '') return true
  throw invalid(name, `must be true or false, got ${JSON.stringify(v)}`)
}

export function queryEnum<T extends string>(q: Query, name: string, values: readonly T[]): T | undefined {
  const v = queryString(q, name)
  if (v === undefined) return undefined
  if (!(values as readonly string[]).includes(v)) throw invalid(name, `must be one of ${values.join(', ')}`)
  return v as T
}

export const KEY_SELECTION_PARAMS = ['key', 'keyBase64', 'rangeEnd', 'rangeEndBase64', 'prefix', 'fromKey'] as const

/**
 * Which keys a request addresses: `key` alone; `prefix=true` (every key starting with key); `fromKey=true`
 * (every key >= key); or `rangeEnd` ([key, rangeEnd)). At most one of the three.
 */
export function keySelection(input: JsonObject | Query, flags: { prefix: boolean; fromKey: boolean }): { key: Buffer; rangeEnd?: Buffer } {
  const key = getBytes(input as JsonObject, 'key')
  if (key === undefined) throw invalid('key', 'is required (key or keyBase64)')
  if (key.length === 0) throw new KvlogError('EMPTY_KEY', 'key: a key is required', { field: 'key' })
  const rangeEnd = getBytes(input as JsonObject, 'rangeEnd')
  const ways = Number(flags.prefix) + Number(flags.fromKey) + Number(rangeEnd !== undefined)
  if (ways > 1) throw invalid('rangeEnd', 'give at most one of prefix, fromKey and rangeEnd')
  if (flags.prefix) return { key, rangeEnd: prefixEnd(key) }
  if (flags.fromKey) return { key, rangeEnd: Buffer.from([0]) }
  return rangeEnd === undefined ? { key } : { key, rangeEnd }
}

/** Booleans in a JSON body: absent = false; anything but a boolean is an error. */
export function bodyBool(input: JsonObject, name: string, where: string): boolean {
  const v = input[name]
  if (v === undefined) return false
  if (typeof v !== 'boolean') throw invalid(`${where}${name}`, 'must be a boolean')
  return v
}

/** Non-negative safe integers in a JSON body; absent = undefined. */
export function bodyInt(input: JsonObject, name: string, where: string): number | undefined {
  const v = input[name]
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw invalid(`${where}${name}`, 'must be a non-negative integer')
  }
  return v
}

/** A JSON body that is exactly `{ "revision": N }` (compact, cursor commits). */
export function revisionBody(body: unknown): number {
  const b = asObject(body, 'body')
  onlyFields(b, ['revision'], '')
  const revision = bodyInt(b, 'revision', '')
  if (revision === undefined) throw invalid('revision', 'is required')
  return revision
}
