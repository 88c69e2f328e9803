/**
 * Limits on JSON bodies that every door applies before it parses one (the native API, the resource API,
 * etcd's JSON gateway): the body must be valid UTF-8 (INVALID_ENCODING: decoding would silently turn bad
 * bytes into U+FFFD, so a key or value would not be what the client sent), and arrays and objects may
 * nest at most maxJsonDepth deep (JSON_TOO_DEEP: objects nested thousands deep were stored, then broke
 * every list and watch that had to encode them again). Both checks are one pass without recursion.
 */
import { isUtf8 } from 'node:buffer'
import { KvlogError } from '../log/errors.js'

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count). */
export function jsonTextDepth(text: string | Buffer): number {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) deepest = Math.max(deepest, ++depth)
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--
  }
  return deepest
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

export function tooDeep(maxDepth: number): KvlogError {
  return new KvlogError('JSON_TOO_DEEP', `JSON nests arrays and objects deeper than maxJsonDepth (${maxDepth})`, { maxJsonDepth: maxDepth })
}

/** Throws INVALID_ENCODING or JSON_TOO_DEEP; returns the body as text. */
export function checkJsonBody(body: Buffer, maxDepth: number): string {
  if (!isUtf8(body)) throw new KvlogError('INVALID_ENCODING', 'the JSON body is not valid UTF-8')
  if (jsonTextDepth(body) > maxDepth) throw tooDeep(maxDepth)
  return body.toString('utf8')
}
