/**
 * The native API's JSON conventions, client side: byte fields travel as `name` (UTF-8) or `nameBase64`;
 * lease ids as decimal strings. Keys and values come back as Buffers.
 */

import type { Author, EventType } from '../wire/native-api.js'

export type Bytes = Uint8Array | string

/** Which keys: one key; or with `prefix`, `fromKey` or `rangeEnd`, a range. */
export interface KeyRange {
  prefix?: boolean
  fromKey?: boolean
  rangeEnd?: Bytes
}

export interface KeyValue {
  key: Buffer
  value: Buffer
  createRevision: number
  modRevision: number
  version: number
  /** 0n when the key has no lease. */
  lease: bigint
}

export interface WatchEvent {
  type: EventType
  revision: number
  kv: KeyValue
  prevKv?: KeyValue
  /** Commit time, ISO 8601. */
  time?: string
  /** Who wrote it; absent for writes the store made itself. */
  author?: Author
}

export interface HistoryEvent extends WatchEvent {
  time: string
}

/** A lease id: a bigint, or its decimal string (kept exact: 64-bit ids do not fit a JS number). */
export type LeaseId = bigint | string

/** The decimal form of a lease id; anything but 0 .. 2^64-1 is a TypeError (a caller's mistake). */
export function leaseId(id: LeaseId): string {
  const text = typeof id === 'bigint' ? id.toString() : id
  if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) >= 1n << 64n) throw new TypeError(`not a lease id: ${JSON.stringify(String(id))}`)
  return BigInt(text).toString()
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Sets `name` or `nameBase64` on `out` so that any bytes survive JSON. */
export function bytesField(out: Record<string, unknown>, name: string, value: Bytes): void {
  if (typeof value === 'string') {
    out[name] = value
    return
  }
  const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  try {
    out[name] = UTF8.decode(buf)
  } catch {
    out[`${name}Base64`] = buf.toString('base64')
  }
}

/** The same as query parameters. */
export function bytesParam(params: URLSearchParams, name: string, value: Bytes): void {
  const o: Record<string, unknown> = {}
  bytesField(o, name, value)
  for (const [k, v] of Object.entries(o)) params.set(k, String(v))
}

export function readBytes(o: Record<string, unknown>, name: string): Buffer {
  const text = o[name]
  if (typeof text === 'string') return Buffer.from(text, 'utf8')
  const b64 = o[`${name}Base64`]
  return typeof b64 === 'string' ? Buffer.from(b64, 'base64') : Buffer.alloc(0)
}

export function readKv(o: Record<string, unknown>): KeyValue {
  return {
    key: readBytes(o, 'key'),
    value: readBytes(o, 'value'),
    createRevision: Number(o.createRevision),
    modRevision: Number(o.modRevision),
    version: Number(o.version),
    lease: typeof o.lease === 'string' ? BigInt(o.lease) : 0n,
  }
}

export function readEvent(o: Record<string, unknown>): WatchEvent {
  const event: WatchEvent = { type: o.type as 'PUT' | 'DELETE', revision: Number(o.revision), kv: readKv(o.kv as Record<string, unknown>) }
  if (o.prevKv !== undefined) event.prevKv = readKv(o.prevKv as Record<string, unknown>)
  if (typeof o.time === 'string') event.time = o.time
  const a = o.author as { door?: unknown; user?: unknown; agent?: unknown } | undefined
  if (a !== undefined && typeof a.door === 'string')
    event.author =
      typeof a.user === 'string'
        ? { door: a.door, user: a.user }
        : typeof a.agent === 'string'
          ? { door: a.door, agent: a.agent }
          : { door: a.door }
  return event
}
