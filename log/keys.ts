/**
 * Keys and key ranges as every engine sees them: user keys are bytes (strings are UTF-8), a range follows
 * etcd's rangeEnd conventions, and prefixEnd turns a prefix into a rangeEnd.
 */
import { invalid, KvlogError } from './errors.js'
import type { BytesLike } from './types.js'

const EMPTY = Buffer.alloc(0)
const ZERO_KEY = Buffer.from([0])

/** Accepts bytes or a string (UTF-8); anything else is INVALID_ARGUMENT naming `field`. */
export function toBytes(value: unknown, field: string): Buffer {
  if (Buffer.isBuffer(value)) return value
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  throw invalid(field, `expected bytes or a string, got ${describe(value)}`)
}

/** Like toBytes, but the key must not be empty (EMPTY_KEY). */
export function toKey(value: unknown, field = 'key'): Buffer {
  const key = toBytes(value, field)
  if (key.length === 0) throw new KvlogError('EMPTY_KEY', `${field}: a key is required`, { field })
  return key
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}

/** The smallest key greater than every key with this prefix: the rangeEnd for a prefix ([0x00] = to the end). */
export function prefixEnd(prefix: BytesLike): Buffer {
  const bytes = Buffer.from(toBytes(prefix, 'prefix'))
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] < 0xff) {
      const end = bytes.subarray(0, i + 1)
      end[i]++
      return end
    }
  }
  return Buffer.from(ZERO_KEY)
}

/**
 * A key range in etcd's conventions, resolved to bounds: `end` undefined means unbounded above.
 * No rangeEnd: just `key`. rangeEnd [0x00]: every key >= key. Otherwise [key, rangeEnd).
 */
export interface Bounds {
  start: Buffer
  end: Buffer | undefined
  single: boolean
}

export function toBounds(key: Buffer, rangeEnd: Buffer | undefined): Bounds {
  if (rangeEnd === undefined || rangeEnd.length === 0) return { start: key, end: undefined, single: true }
  if (rangeEnd.length === 1 && rangeEnd[0] === 0) {
    return { start: key.length === 1 && key[0] === 0 ? EMPTY : key, end: undefined, single: false }
  }
  return { start: key, end: rangeEnd, single: false }
}

export function inBounds(b: Bounds, key: Buffer): boolean {
  if (b.single) return key.equals(b.start)
  return Buffer.compare(key, b.start) >= 0 && (b.end === undefined || Buffer.compare(key, b.end) < 0)
}

/** Map key for in-memory overlays: one char per byte, so equal bytes give equal strings. */
export function keyId(key: Buffer): string {
  return key.toString('latin1')
}
