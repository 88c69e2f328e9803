/**
 * HPACK (RFC 7541): the header compression of HTTP/2.
 *
 * Decoding is complete: indexed fields, literals with and without indexing, never-indexed literals,
 * Huffman-coded strings and dynamic table size updates, with the dynamic table kept in step with the
 * client's encoder. A block that breaks the rules throws HpackError, which ends the connection
 * (COMPRESSION_ERROR): the table can no longer be trusted.
 *
 * Encoding never adds to the client's dynamic table (literals "without indexing", names from the static
 * table where it has them), so kvlog has no table to keep in step and nothing to evict; fixed blocks
 * (a gRPC answer's headers and its OK trailers) are encoded once at start.
 */
import type { IncomingHttpHeaders } from 'node:http2'
import { HpackError } from './hpack-error.js'
import { huffmanDecode } from './huffman.js'

/** RFC 7541 Appendix A. */
const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
]

/** RFC 7541 4.1: an entry's size is its name and value lengths plus 32. */
const ENTRY_OVERHEAD = 32

/** Decodes the header blocks of one connection, in the order they arrive. */
export class HpackDecoder {
  /** The dynamic table, oldest first (index 62 is the last element). */
  private readonly table: Array<readonly [string, string]> = []
  private tableBytes = 0
  private maxTableBytes: number

  /** `limit`: the SETTINGS_HEADER_TABLE_SIZE this side announced (4,096 unless it said otherwise). */
  constructor(private readonly limit = 4096) {
    this.maxTableBytes = limit
  }

  /**
   * One complete header block as Node's http2 gives headers: a null-prototype object, names lower-case;
   * repeated names joined with ', ' ('; ' for cookie), as HTTP allows.
   */
  decode(block: Uint8Array): IncomingHttpHeaders {
    const headers = Object.create(null) as IncomingHttpHeaders
    const cursor = { pos: 0 }
    let fieldsSeen = false
    while (cursor.pos < block.length) {
      const byte = block[cursor.pos]!
      if (byte & 0x80) {
        const [name, value] = this.entry(readInteger(block, cursor, 7))
        add(headers, name, value)
        fieldsSeen = true
      } else if (byte & 0x40) {
        const [name, value] = this.literal(block, cursor, 6)
        this.insert(name, value)
        add(headers, name, value)
        fieldsSeen = true
      } else if (byte & 0x20) {
        // A size update is only allowed at the start of a block (RFC 7541 4.2).
        if (fieldsSeen) throw new HpackError('dynamic table size update after a header field')
        const size = readInteger(block, cursor, 5)
        if (size > this.limit) throw new HpackError(`dynamic table size ${size} over the announced ${this.limit}`)
        this.maxTableBytes = size
        this.evict(0)
      } else {
        // 0001xxxx never indexed, 0000xxxx without indexing: both have a 4-bit name index.
        const [name, value] = this.literal(block, cursor, 4)
        add(headers, name, value)
        fieldsSeen = true
      }
    }
    return headers
  }

  private literal(block: Uint8Array, cursor: { pos: number }, prefixBits: number): [string, string] {
    const index = readInteger(block, cursor, prefixBits)
    const name = index === 0 ? readString(block, cursor) : this.entry(index)[0]
    return [name, readString(block, cursor)]
  }

  private entry(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('index 0')
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!
    const entry = this.table[this.table.length - 1 - (index - STATIC_TABLE.length - 1)]
    if (entry === undefined) throw new HpackError(`index ${index} beyond the dynamic table`)
    return entry
  }

  private insert(name: string, value: string): void {
    const size = name.length + value.length + ENTRY_OVERHEAD
    this.evict(size)
    // An entry larger than the whole table empties it and is not added (RFC 7541 4.4).
    if (size > this.maxTableBytes) return
    this.table.push([name, value])
    this.tableBytes += size
  }

  /** Evicts the oldest entries until `room` more bytes fit. */
  private evict(room: number): void {
    while (this.table.length > 0 && this.tableBytes + room > this.maxTableBytes) {
      const [name, value] = this.table.shift()!
      this.tableBytes -= name.length + value.length + ENTRY_OVERHEAD
    }
  }
}

function add(headers: IncomingHttpHeaders, name: string, value: string): void {
  const previous = headers[name]
  if (previous === undefined) headers[name] = value
  else if (name.startsWith(':')) throw new HpackError(`repeated pseudo-header ${name}`)
  else headers[name] = `${String(previous)}${name === 'cookie' ? '; ' : ', '}${value}`
}

/** RFC 7541 5.1: an integer with an N-bit prefix. */
function readInteger(block: Uint8Array, cursor: { pos: number }, prefixBits: number): number {
  const max = (1 << prefixBits) - 1
  let value = block[cursor.pos++]! & max
  if (value < max) return value
  let shift = 0
  for (;;) {
    if (cursor.pos >= block.length) throw new HpackError('truncated integer')
    const byte = block[cursor.pos++]!
    value += (byte & 0x7f) * 2 ** shift
    shift += 7
    if ((byte & 0x80) === 0) break
    if (shift > 28) throw new HpackError('integer too large')
  }
  if (value > 0x7fffffff) throw new HpackError('integer too large')
  return value
}

/** RFC 7541 5.2: a string literal, Huffman-coded or raw; bytes as latin1 (header values are octets). */
function readString(block: Uint8Array, cursor: { pos: number }): string {
  if (cursor.pos >= block.length) throw new HpackError('truncated string')
  const huffman = (block[cursor.pos]! & 0x80) !== 0
  const length = readInteger(block, cursor, 7)
  const end = cursor.pos + length
  if (end > block.length) throw new HpackError('truncated string')
  const raw = block.subarray(cursor.pos, end)
  cursor.pos = end
  return Buffer.from(huffman ? huffmanDecode(raw) : raw).toString('latin1')
}

/** The static table's index of each name (its first entry), and of each exact name and value. */
const STATIC_NAME = new Map<string, number>()
const STATIC_FIELD = new Map<string, number>()
STATIC_TABLE.forEach(([name, value], i) => {
  if (!STATIC_NAME.has(name)) STATIC_NAME.set(name, i + 1)
  STATIC_FIELD.set(`${name}\0${value}`, i + 1)
})

/**
 * Encodes header fields (names lower-case) as one block: a static table match as an indexed field, else
 * a literal without indexing (name by static index where there is one), raw strings (latin1).
 */
export function encodeHeaders(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  const parts: number[] = []
  for (const [rawName, value] of fields) {
    const name = rawName.toLowerCase()
    const exact = STATIC_FIELD.get(`${name}\0${value}`)
    if (exact !== undefined) {
      writeInteger(parts, 0x80, 7, exact)
      continue
    }
    const nameIndex = STATIC_NAME.get(name)
    if (nameIndex !== undefined) writeInteger(parts, 0x00, 4, nameIndex)
    else {
      parts.push(0x00)
      writeString(parts, name)
    }
    writeString(parts, value)
  }
  return Buffer.from(parts)
}

function writeInteger(out: number[], firstByteBits: number, prefixBits: number, value: number): void {
  const max = (1 << prefixBits) - 1
  if (value < max) {
    out.push(firstByteBits | value)
    return
  }
  out.push(firstByteBits | max)
  let rest = value - max
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80)
    rest = Math.floor(rest / 0x80)
  }
  out.push(rest)
}

function writeString(out: number[], text: string): void {
  const bytes = Buffer.from(text, 'latin1')
  writeInteger(out, 0x00, 7, bytes.length)
  for (const b of bytes) out.push(b)
}
