/**
 * How etcd 3.4 lays its state out in the bbolt backend (mvcc/kvstore.go, mvcc/revision.go, lease/lessor.go):
 *
 *   bucket "key"     revision → mvccpb.KeyValue. The revision key is 8 bytes main revision, '_', 8 bytes
 *                    sub revision (the op's index within its revision), big-endian, plus 't' for a
 *                    delete (a tombstone, whose KeyValue holds only the key). A compaction at F keeps, per
 *                    key, only its newest version at or below F (and not a tombstone) and everything above F.
 *   bucket "meta"    consistent_index (u64 big-endian), scheduledCompactRev and finishedCompactRev (a
 *                    revision key of the compact revision)
 *   bucket "lease"   lease id (u64 big-endian) → leasepb.Lease {ID 1, TTL 2, RemainingTTL 3}
 *   and "alarm", "auth", "authRoles", "authUsers", "cluster", "members", "members_removed".
 *
 * The protobuf messages are encoded here by hand: three varint fields and two byte fields do not need a
 * protobuf library, and decoding checks every length against the buffer.
 */
import type { KeyValue } from '../../log/types.js'
import { snapshotError } from './bbolt-read.js'

export const KEY_BUCKET = 'key'
export const META_BUCKET = 'meta'
export const LEASE_BUCKET = 'lease'
/** The buckets etcd 3.4 creates on start; an exported file has them all, most of them empty. */
export const ETCD_BUCKETS = [
  'alarm',
  'auth',
  'authRoles',
  'authUsers',
  'cluster',
  KEY_BUCKET,
  LEASE_BUCKET,
  'members',
  'members_removed',
  META_BUCKET,
]
export const CONSISTENT_INDEX = 'consistent_index'
export const SCHEDULED_COMPACT = 'scheduledCompactRev'
export const FINISHED_COMPACT = 'finishedCompactRev'

export interface Revision {
  main: number
  sub: number
  tombstone: boolean
}

export function revisionKey(main: number, sub: number, tombstone = false): Buffer {
  const b = Buffer.alloc(tombstone ? 18 : 17)
  b.writeBigInt64BE(BigInt(main), 0)
  b[8] = 0x5f
  b.writeBigInt64BE(BigInt(sub), 9)
  if (tombstone) b[17] = 0x74
  return b
}

export function parseRevisionKey(b: Buffer): Revision {
  if ((b.length !== 17 && b.length !== 18) || b[8] !== 0x5f || (b.length === 18 && b[17] !== 0x74))
    throw snapshotError('SCHEMA', `bad revision key ${b.toString('hex')} in bucket "key"`)
  const main = b.readBigInt64BE(0)
  const sub = b.readBigInt64BE(9)
  if (main < 1n || main > BigInt(Number.MAX_SAFE_INTEGER) || sub < 0n || sub > 0xffffn)
    throw snapshotError('SCHEMA', `revision ${main}.${sub} is out of range`)
  return { main: Number(main), sub: Number(sub), tombstone: b.length === 18 }
}

export function u64(n: bigint | number): Buffer {
  const b = Buffer.alloc(8)
  b.writeBigUInt64BE(BigInt.asUintN(64, BigInt(n)))
  return b
}

// --- protobuf ---------------------------------------------------------------------------------------------

function varint(n: bigint, out: number[]): void {
  let v = BigInt.asUintN(64, n)
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80)
    v >>= 7n
  }
  out.push(Number(v))
}

class ProtoWriter {
  private readonly parts: Buffer[] = []
  int(field: number, n: bigint | number): this {
    if (BigInt(n) === 0n) return this
    const out: number[] = []
    varint(BigInt(field << 3), out)
    varint(BigInt(n), out)
    this.parts.push(Buffer.from(out))
    return this
  }
  bytes(field: number, b: Buffer): this {
    if (b.length === 0) return this
    const out: number[] = []
    varint(BigInt((field << 3) | 2), out)
    varint(BigInt(b.length), out)
    this.parts.push(Buffer.from(out), b)
    return this
  }
  finish(): Buffer {
    return Buffer.concat(this.parts)
  }
}

/** Fields of a message: varints as signed 64-bit bigints, length-delimited as buffers; others are refused. */
function readFields(b: Buffer, what: string): Map<number, bigint | Buffer> {
  const fields = new Map<number, bigint | Buffer>()
  let i = 0
  const read = (): bigint => {
    let v = 0n
    for (let shift = 0n; ; shift += 7n) {
      if (i >= b.length || shift > 63n) throw snapshotError('SCHEMA', `a ${what} message is malformed`)
      const byte = b[i++]
      v |= BigInt(byte & 0x7f) << shift
      if (byte < 0x80) return BigInt.asIntN(64, v)
    }
  }
  while (i < b.length) {
    const tag = Number(read())
    const field = tag >>> 3
    if ((tag & 7) === 0) fields.set(field, read())
    else if ((tag & 7) === 2) {
      const len = Number(read())
      if (len < 0 || i + len > b.length) throw snapshotError('SCHEMA', `a ${what} message is truncated`)
      fields.set(field, b.subarray(i, i + len))
      i += len
    } else throw snapshotError('SCHEMA', `a ${what} message has an unexpected wire type ${tag & 7}`)
  }
  return fields
}

function int(fields: Map<number, bigint | Buffer>, field: number): bigint {
  const v = fields.get(field)
  if (v === undefined) return 0n
  if (typeof v !== 'bigint') throw snapshotError('SCHEMA', `field ${field} should be a number`)
  return v
}

function bytes(fields: Map<number, bigint | Buffer>, field: number): Buffer {
  const v = fields.get(field)
  if (v === undefined) return Buffer.alloc(0)
  if (typeof v === 'bigint') throw snapshotError('SCHEMA', `field ${field} should be bytes`)
  return v
}

function safe(n: bigint, what: string): number {
  if (n < 0n || n > BigInt(Number.MAX_SAFE_INTEGER)) throw snapshotError('SCHEMA', `${what} ${n} is out of range`)
  return Number(n)
}

/** mvccpb.KeyValue: key 1, create_revision 2, mod_revision 3, version 4, value 5, lease 6. */
export function encodeKeyValue(kv: KeyValue): Buffer {
  return new ProtoWriter()
    .bytes(1, kv.key)
    .int(2, kv.createRevision)
    .int(3, kv.modRevision)
    .int(4, kv.version)
    .bytes(5, kv.value)
    .int(6, kv.lease)
    .finish()
}

/** A tombstone's value: a KeyValue with only the key. */
export function encodeTombstone(key: Buffer): Buffer {
  return new ProtoWriter().bytes(1, key).finish()
}

export function decodeKeyValue(b: Buffer): KeyValue {
  const f = readFields(b, 'KeyValue')
  return {
    key: Buffer.from(bytes(f, 1)),
    createRevision: safe(int(f, 2), 'create_revision'),
    modRevision: safe(int(f, 3), 'mod_revision'),
    version: safe(int(f, 4), 'version'),
    value: Buffer.from(bytes(f, 5)),
    lease: BigInt.asUintN(64, int(f, 6)),
  }
}

export interface LeaseRecord {
  id: bigint
  /** Granted TTL, seconds. */
  ttl: number
  /** Seconds left when written; 0 = unknown (etcd then starts the full TTL again). */
  remainingTtl: number
}

export function encodeLease(l: LeaseRecord): Buffer {
  return new ProtoWriter().int(1, BigInt.asIntN(64, l.id)).int(2, l.ttl).int(3, l.remainingTtl).finish()
}

export function decodeLease(b: Buffer): LeaseRecord {
  const f = readFields(b, 'Lease')
  return { id: BigInt.asUintN(64, int(f, 1)), ttl: safe(int(f, 2), 'lease TTL'), remainingTtl: safe(int(f, 3), 'lease remaining TTL') }
}
