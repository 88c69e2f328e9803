/**
 * Limits on JSON bodies that every door applies before it parses one (the native API, the resource API,
 * etcd's JSON gateway): the body must be valid UTF-8 (INVALID_ENCODING: decoding would silently turn bad
 * bytes into U+FFFD, so a key or value would not be what the client sent), and arrays and objects may
 * nest at most maxJsonDepth deep (JSON_TOO_DEEP: objects nested thousands deep were stored, then broke
 * every list and watch that had to encode them again). Both checks are one pass without recursion.
 * Objects stored through the doors that take values as opaque bytes (etcd's KV, the native API) are
 * held to the same depth where the resource API reads them (storedObjectMaxDepth).
 */
import { isUtf8 } from 'node:buffer'
import { KvlogError } from '../log/errors.js'

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count), or
 * `stopAbove` + 1 as soon as it is passed.
 */
export function jsonTextDepth(text: string | Buffer, stopAbove = Infinity): number {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text
  // Each level takes two bytes: a shorter text cannot go deeper.
  if (bytes.length < 2 * (stopAbove + 1)) return 0
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      deepest = Math.max(deepest, ++depth)
      if (deepest > stopAbove) return deepest
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--
  }
  return deepest
}

/** Whether JSON text nests deeper than `maxDepth`. */
export function jsonTooDeep(text: string | Buffer, maxDepth: number): boolean {
  return jsonTextDepth(text, maxDepth) > maxDepth
}

/** The deepest nesting of arrays and objects in a parsed value (iterative). */
export function jsonValueDepth(value: unknown): number {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (typeof v !== 'object' || v === null || Buffer.isBuffer(v) || ArrayBuffer.isView(v)) continue
    deepest = Math.max(deepest, d + 1)
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1])
  }
  return deepest
}

let storedDepth = Infinity

/** The depth past which a stored object is not decoded (the resource API skips it as not JSON). */
export function storedObjectMaxDepth(): number {
  return storedDepth
}

/** Set once at start from maxJsonDepth. */
export function setStoredObjectMaxDepth(maxDepth: number): void {
  storedDepth = maxDepth
}

export function tooDeep(maxDepth: number): KvlogError {
  return new KvlogError('JSON_TOO_DEEP', `JSON nests arrays and objects deeper than maxJsonDepth (${maxDepth})`, { maxJsonDepth: maxDepth })
}

/** Throws INVALID_ENCODING or JSON_TOO_DEEP; returns the body as text. */
export function checkJsonBody(body: Buffer, maxDepth: number): string {
  if (!isUtf8(body)) throw new KvlogError('INVALID_ENCODING', 'the JSON body is not valid UTF-8')
  if (jsonTooDeep(body, maxDepth)) throw tooDeep(maxDepth)
  return body.toString('utf8')
}
