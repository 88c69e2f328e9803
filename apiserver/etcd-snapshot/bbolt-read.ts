/**
 * Reads a bbolt database file held in memory (the layout is in bbolt-write.ts): the meta page with the
 * higher txid among those whose magic, version and checksum hold, then the root bucket's B+tree and the
 * buckets it names, nested or inline. Every offset is checked against the file before it is used, so a
 * damaged file gives a KvlogError (INVALID_ARGUMENT, details.field 'snapshot', details.reason one of
 * NOT_BBOLT, CHECKSUM, TRUNCATED, CORRUPT), never an out-of-range read or an endless walk.
 */
import { KvlogError } from '../../log/errors.js'
import {
  BRANCH_PAGE,
  BUCKET_LEAF,
  ELEMENT_SIZE,
  fnv1a64,
  LEAF_PAGE,
  MAGIC,
  META_PAGE,
  META_SUMMED,
  PAGE_HEADER,
  VERSION,
} from './bbolt-write.js'

export type SnapshotFault = 'NOT_BBOLT' | 'CHECKSUM' | 'TRUNCATED' | 'CORRUPT' | 'SCHEMA'

export function snapshotError(reason: SnapshotFault, message: string): KvlogError {
  return new KvlogError('INVALID_ARGUMENT', `etcd snapshot: ${message}`, { field: 'snapshot', reason })
}

/** Whether `head` (a file's first bytes) starts with a bbolt meta page. */
export function looksLikeBbolt(head: Buffer): boolean {
  return head.length >= PAGE_HEADER + 4 && (head.readUInt16LE(8) & META_PAGE) !== 0 && head.readUInt32LE(PAGE_HEADER) === MAGIC
}

/** Where a bucket's tree starts: a page of the file, or an inline page inside its parent's value. */
type Root = { pgid: number } | { inline: Buffer }

/** B+trees deeper than this are taken for a loop (a 4 KiB-page tree this deep would not fit in memory). */
const MAX_DEPTH = 64

export class BboltReader {
  readonly pageSize: number
  readonly highWater: number
  readonly txid: bigint
  private readonly root: Root

  constructor(private readonly file: Buffer) {
    if (file.length < PAGE_HEADER + META_SUMMED + 8) throw snapshotError('NOT_BBOLT', `${file.length} bytes is too short for a bbolt file`)
    const meta0 = readMeta(file, 0)
    if (meta0.magic !== MAGIC) throw snapshotError('NOT_BBOLT', 'not a bbolt database (bad magic)')
    const pageSize = meta0.pageSize
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) throw snapshotError('CORRUPT', `bad page size ${pageSize}`)
    const metas = [meta0, file.length >= pageSize * 2 ? readMeta(file, pageSize) : undefined]
    const valid = metas.filter((m) => m !== undefined && m.magic === MAGIC && m.version === VERSION && m.checksumOk)
    if (valid.length === 0) {
      if (file.length < pageSize * 2) throw snapshotError('TRUNCATED', 'the file ends inside its meta pages')
      throw snapshotError(meta0.version !== VERSION ? 'NOT_BBOLT' : 'CHECKSUM', 'no meta page has a valid version and checksum')
    }
    const meta = valid.reduce((a, b) => (b!.txid > a!.txid ? b : a))!
    this.pageSize = pageSize
    this.highWater = toNumber(meta.highWater)
    this.txid = meta.txid
    if (file.length < this.highWater * pageSize)
      throw snapshotError('TRUNCATED', `the file has ${file.length} bytes, its meta page says ${meta.highWater} pages of ${pageSize}`)
    this.root = { pgid: toNumber(meta.root) }
  }

  /** The top-level buckets' names, in order. */
  bucketNames(): Buffer[] {
    const names: Buffer[] = []
    for (const [key, , flags] of this.walk(this.root, 0, new Set())) if (flags & BUCKET_LEAF) names.push(key)
    return names
  }

  /** A top-level bucket's key/value pairs in key order (nested buckets are left out); undefined if missing. */
  bucket(name: string): Iterable<[Buffer, Buffer]> | undefined {
    for (const [key, value, flags] of this.walk(this.root, 0, new Set())) {
      if (!(flags & BUCKET_LEAF) || key.toString('latin1') !== name) continue
      const entries = this.walk(this.bucketRoot(value), 0, new Set())
      return (function* () {
        for (const [k, v, f] of entries) if (!(f & BUCKET_LEAF)) yield [k, v] as [Buffer, Buffer]
      })()
    }
    return undefined
  }

  private bucketRoot(value: Buffer): Root {
    if (value.length < 16) throw snapshotError('CORRUPT', 'a bucket value is shorter than its header')
    const pgid = toNumber(value.readBigUInt64LE(0))
    return pgid === 0 ? { inline: value.subarray(16) } : { pgid }
  }

  /** Every leaf element under `root`, in key order: [key, value, flags]. */
  private *walk(root: Root, depth: number, seen: Set<number>): Generator<[Buffer, Buffer, number]> {
    if (depth > MAX_DEPTH) throw snapshotError('CORRUPT', 'the B+tree is deeper than any real one (a loop?)')
    if (!('inline' in root)) {
      if (seen.has(root.pgid)) throw snapshotError('CORRUPT', `page ${root.pgid} is referenced twice`)
      seen.add(root.pgid)
    }
    const page = 'inline' in root ? root.inline : this.page(root.pgid)
    if (page.length < PAGE_HEADER) throw snapshotError('CORRUPT', 'an inline bucket is shorter than a page header')
    const flags = page.readUInt16LE(8)
    const count = page.readUInt16LE(10)
    if (PAGE_HEADER + count * ELEMENT_SIZE > page.length) throw snapshotError('CORRUPT', 'a page has more elements than fit in it')
    if (flags & LEAF_PAGE) {
      for (let i = 0; i < count; i++) {
        const at = PAGE_HEADER + i * ELEMENT_SIZE
        const pos = at + page.readUInt32LE(at + 4)
        const ksize = page.readUInt32LE(at + 8)
        const vsize = page.readUInt32LE(at + 12)
        if (pos + ksize + vsize > page.length) throw snapshotError('CORRUPT', 'a leaf element points outside its page')
        yield [page.subarray(pos, pos + ksize), page.subarray(pos + ksize, pos + ksize + vsize), page.readUInt32LE(at)]
      }
    } else if (flags & BRANCH_PAGE && !('inline' in root)) {
      for (let i = 0; i < count; i++) {
        const at = PAGE_HEADER + i * ELEMENT_SIZE
        yield* this.walk({ pgid: toNumber(page.readBigUInt64LE(at + 8)) }, depth + 1, seen)
      }
    } else {
      throw snapshotError('CORRUPT', `page ${'inline' in root ? '(inline)' : root.pgid} is neither a leaf nor a branch (flags ${flags})`)
    }
  }

  /** Page `pgid` with its overflow pages. */
  private page(pgid: number): Buffer {
    if (pgid < 2 || pgid >= this.highWater) throw snapshotError('CORRUPT', `page id ${pgid} is outside the file's ${this.highWater} pages`)
    const start = pgid * this.pageSize
    const overflow = this.file.readUInt32LE(start + 12)
    const end = start + (overflow + 1) * this.pageSize
    if (end > this.highWater * this.pageSize) throw snapshotError('CORRUPT', `page ${pgid} overflows past the file's end`)
    return this.file.subarray(start, end)
  }
}

interface Meta {
  magic: number
  version: number
  pageSize: number
  root: bigint
  highWater: bigint
  txid: bigint
  checksumOk: boolean
}

function readMeta(file: Buffer, offset: number): Meta {
  const m = offset + PAGE_HEADER
  const checksum = file.readBigUInt64LE(m + META_SUMMED)
  return {
    magic: file.readUInt32LE(m),
    version: file.readUInt32LE(m + 4),
    pageSize: file.readUInt32LE(m + 8),
    root: file.readBigUInt64LE(m + 16),
    highWater: file.readBigUInt64LE(m + 40),
    txid: file.readBigUInt64LE(m + 48),
    // bbolt accepts a zero checksum (files written before checksums existed).
    checksumOk: checksum === 0n || checksum === fnv1a64(file.subarray(m, m + META_SUMMED)),
  }
}

function toNumber(n: bigint): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw snapshotError('CORRUPT', `page id ${n} is out of range`)
  return Number(n)
}
