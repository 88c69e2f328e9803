/**
 * Value encodings of LevelLog's tables (see keyspace.ts for the keys).
 *
 * kv record (kv table, and materialized hist versions), 32-byte header then the value:
 *   [createRevision 8][modRevision 8][version 8][lease 8, unsigned][value ...]
 *
 * hist record, first byte says where the version's value lives:
 *   0x01 IN_LOG        a put whose op is in the log entry at the same revision (the common case); or, below
 *                      the compact revision, the key's live version whose op compaction took out of the
 *                      entry: then the kv record (modRevision = this revision) is its one copy
 *   0x02 TOMBSTONE     the key was deleted at this revision
 *   0x03 MATERIALIZED  a put whose value is here (a kv record follows): written by the writer when it
 *                      replaces or deletes a live version below the compact revision (whose kv record may
 *                      be its only copy), and by the compactions of earlier kvlog versions for every survivor
 *
 * log entry: msgpackr array [timestamp, ops] or [timestamp, ops, author], op = [kind, key, value, createRev,
 *   version, lease, prevRev], author = [door], [door, user] or [door, null, agent] (who changed what; an
 *   anonymous client's user agent or address; entries written before
 *   kvlog recorded it, and writes the store makes itself, have none)
 *   kind 0 = put, 1 = delete; value is null for deletes; lease is 0 or a bigint;
 *   prevRev = modRevision of the key's previous live version (0 if it did not exist): the pointer that
 *   finds prevKv, and that compaction follows to drop superseded versions. Compaction may rewrite an
 *   entry below the compact revision without some of its ops (their versions are gone); an entry holds
 *   at most one op per key, so a reader finds a version's op by its key.
 */
import { Packr } from 'msgpackr'
import { readRev, writeRev } from './keyspace.js'
import { OP_DELETE, OP_PUT, type LoggedOp } from '../ops.js'
import type { Author, KeyValue, KvSink } from '../types.js'

const HEADER = 32
const EMPTY = Buffer.alloc(0)

export function encodeKvRecord(kv: KeyValue): Buffer {
  const out = Buffer.allocUnsafe(HEADER + kv.value.length)
  writeKvRecord(out, 0, kv)
  return out
}

function writeKvRecord(out: Buffer, offset: number, kv: KeyValue): void {
  writeRev(out, offset, kv.createRevision)
  writeRev(out, offset + 8, kv.modRevision)
  writeRev(out, offset + 16, kv.version)
  out.writeBigUInt64BE(kv.lease, offset + 24)
  kv.value.copy(out, offset + HEADER)
}

/** The modRevision of an encoded kv record, without decoding the rest. */
export function kvRecordModRevision(record: Buffer): number {
  return readRev(record, 8)
}

export function decodeKvRecord(key: Buffer, record: Buffer, offset = 0, keysOnly = false): KeyValue {
  return {
    key,
    value: keysOnly ? EMPTY : record.subarray(offset + HEADER),
    createRevision: readRev(record, offset),
    modRevision: readRev(record, offset + 8),
    version: readRev(record, offset + 16),
    lease: record.readBigUInt64BE(offset + 24),
  }
}

/** Hands a kv record's fields to `sink` without making a KeyValue. */
export function sinkKvRecord(key: Buffer, record: Buffer, keysOnly: boolean, sink: KvSink): void {
  sink(
    key,
    keysOnly ? EMPTY : record.subarray(HEADER),
    readRev(record, 0),
    readRev(record, 8),
    readRev(record, 16),
    record.readBigUInt64BE(24),
  )
}

// ---------------------------------------------------------------------------------------------------------
// hist records

export const HIST_IN_LOG = 0x01
export const HIST_TOMBSTONE = 0x02
export const HIST_MATERIALIZED = 0x03

export const HIST_IN_LOG_RECORD = Buffer.from([HIST_IN_LOG])
export const HIST_TOMBSTONE_RECORD = Buffer.from([HIST_TOMBSTONE])

export function encodeMaterialized(kv: KeyValue): Buffer {
  const out = Buffer.allocUnsafe(1 + HEADER + kv.value.length)
  out[0] = HIST_MATERIALIZED
  writeKvRecord(out, 1, kv)
  return out
}

// ---------------------------------------------------------------------------------------------------------
// log entries

export interface LoggedEntry {
  timestamp: number
  ops: LoggedOp[]
  author?: Author
}

const packr = new Packr({ useRecords: false, moreTypes: false })

type WireOp = [number, Buffer, Buffer | null, number, number, number | bigint, number]

export function encodeEntry(entry: LoggedEntry): Buffer {
  const ops: WireOp[] = new Array(entry.ops.length)
  for (let i = 0; i < entry.ops.length; i++) {
    const op = entry.ops[i]
    ops[i] = [
      op.kind,
      op.key,
      op.kind === OP_PUT ? op.value : null,
      op.createRevision,
      op.version,
      op.lease === 0n ? 0 : op.lease,
      op.prevRevision,
    ]
  }
  const a = entry.author
  return packr.pack(a === undefined ? [entry.timestamp, ops] : [entry.timestamp, ops, authorRecord(a)])
}

/** An author as stored: [door], [door, user] or [door, null, agent]. */
type AuthorRecord = [string, (string | null)?, string?]

function authorRecord(a: Author): AuthorRecord {
  if (a.user !== undefined) return [a.door, a.user]
  return a.agent !== undefined ? [a.door, null, a.agent] : [a.door]
}

function authorOfRecord([door, user, agent]: AuthorRecord): Author {
  if (typeof user === 'string') return { door, user }
  return agent !== undefined ? { door, agent } : { door }
}

export function decodeEntry(bytes: Buffer): LoggedEntry {
  const [timestamp, wire, author] = packr.unpack(bytes) as [number, WireOp[], AuthorRecord | undefined]
  const ops: LoggedOp[] = new Array(wire.length)
  for (let i = 0; i < wire.length; i++) {
    const [kind, key, value, createRevision, version, lease, prevRevision] = wire[i]
    ops[i] = {
      kind: kind === OP_PUT ? OP_PUT : OP_DELETE,
      key: asBuffer(key),
      value: value === null ? EMPTY : asBuffer(value),
      createRevision,
      version,
      lease: typeof lease === 'bigint' ? lease : BigInt(lease),
      prevRevision,
    }
  }
  if (author === undefined) return { timestamp, ops }
  return { timestamp, ops, author: authorOfRecord(author) }
}

/** What compaction plans with of a logged op: the rest is needed only when an entry is rewritten. */
export type OpRef = Pick<LoggedOp, 'kind' | 'key' | 'prevRevision'>

/**
 * A log entry's timestamp and, per op, its kind, key (a view into `bytes`) and prevRevision, without
 * making the rest: no values, leases or the arrays msgpackr builds. Compaction reads every entry it scans
 * and needs only these (a quarter of what it allocated was decoding entries in full). Reads the layout
 * encodeEntry writes; anything else (or a damaged entry) goes to decodeEntry, which says what is wrong.
 */
export function decodeEntryRefs(bytes: Buffer): { timestamp: number; ops: OpRef[] } {
  const refs = readEntryRefs(bytes)
  if (refs !== undefined) return refs
  const { timestamp, ops } = decodeEntry(bytes)
  return { timestamp, ops }
}

/** decodeEntryRefs without the fallback: undefined when `bytes` is not laid out as encodeEntry writes. */
export function readEntryRefs(bytes: Buffer): { timestamp: number; ops: OpRef[] } | undefined {
  try {
    const r = new MsgpackReader(bytes)
    const fields = r.arrayLength()
    if (fields !== 2 && fields !== 3) return undefined
    const timestamp = r.number()
    const n = r.arrayLength()
    const ops: OpRef[] = new Array(n)
    for (let i = 0; i < n; i++) {
      if (r.arrayLength() !== 7) return undefined
      const kind = r.number() === OP_PUT ? OP_PUT : OP_DELETE
      const key = r.bin()
      r.skip() // value
      r.skip() // createRevision
      r.skip() // version
      r.skip() // lease
      ops[i] = { kind, key, prevRevision: r.number() }
    }
    // The author comes last and compaction does not plan with it: the rest of the bytes are its.
    if (fields === 3) return { timestamp, ops }
    return r.done() ? { timestamp, ops } : undefined
  } catch {
    return undefined // past the end: damaged, decodeEntry says so
  }
}

/** The msgpack forms encodeEntry's entries use: arrays, numbers, bin, nil. Past the end it throws or done() is false. */
class MsgpackReader {
  private pos = 0

  constructor(private readonly b: Buffer) {}

  done(): boolean {
    return this.pos === this.b.length
  }

  arrayLength(): number {
    const t = this.b[this.pos++]
    if (t >= 0x90 && t <= 0x9f) return t - 0x90
    if (t === 0xdc) return this.advance(2, this.b.readUInt16BE(this.pos))
    if (t === 0xdd) return this.advance(4, this.b.readUInt32BE(this.pos))
    throw new RangeError('not an array')
  }

  number(): number {
    const b = this.b
    const at = this.pos + 1
    const t = b[this.pos++]
    if (t <= 0x7f) return t
    if (t >= 0xe0) return t - 0x100
    switch (t) {
      case 0xcc:
        return this.advance(1, b[at])
      case 0xcd:
        return this.advance(2, b.readUInt16BE(at))
      case 0xce:
        return this.advance(4, b.readUInt32BE(at))
      case 0xcf:
        return this.advance(8, Number(b.readBigUInt64BE(at)))
      case 0xd0:
        return this.advance(1, b.readInt8(at))
      case 0xd1:
        return this.advance(2, b.readInt16BE(at))
      case 0xd2:
        return this.advance(4, b.readInt32BE(at))
      case 0xd3:
        return this.advance(8, Number(b.readBigInt64BE(at)))
      case 0xca:
        return this.advance(4, b.readFloatBE(at))
      case 0xcb:
        return this.advance(8, b.readDoubleBE(at))
      default:
        throw new RangeError('not a number')
    }
  }

  bin(): Buffer {
    const start = this.binStart()
    return this.b.subarray(start, this.pos)
  }

  /** Skips a nil, a number or a bin. */
  skip(): void {
    const t = this.b[this.pos]
    if (t === 0xc0) this.pos++
    else if (t >= 0xc4 && t <= 0xc6) this.binStart()
    else this.number()
  }

  /** Moves past a bin; returns where its bytes start. */
  private binStart(): number {
    const b = this.b
    const t = b[this.pos++]
    let length: number
    if (t === 0xc4) length = this.advance(1, b[this.pos])
    else if (t === 0xc5) length = this.advance(2, b.readUInt16BE(this.pos))
    else if (t === 0xc6) length = this.advance(4, b.readUInt32BE(this.pos))
    else throw new RangeError('not a bin')
    const start = this.pos
    this.pos += length
    if (this.pos > b.length) throw new RangeError('bin past the end')
    return start
  }

  private advance<T>(n: number, value: T): T {
    this.pos += n
    return value
  }
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)
}
