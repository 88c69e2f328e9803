/**
 * Hand-written protobuf encoding for the hottest responses: response headers, PutResponse, RangeResponse,
 * and the parts of WatchResponse (per-watch head, events). protobufjs (proto.ts) encodes everything else;
 * these are the messages sent once per write, once per watcher per batch, or with a thousand kvs, where
 * building a plain object and converting its 64-bit fields through Long cost more than the write itself
 * (see docs/benchmarks.md).
 *
 * The bytes are what protobuf's canonical encoding gives (fields in number order, zero values and empty
 * bytes left out, as etcd's Go server writes them); test/apiserver/etcd/wire.test.ts decodes them with
 * protobufjs and compares with the messages proto.ts would encode.
 *
 * Field numbers (apiserver/etcd/proto/*.proto):
 *   ResponseHeader  1 cluster_id u64 · 2 member_id u64 · 3 revision i64 · 4 raft_term u64
 *   RangeResponse   1 header · 2 kvs (repeated KeyValue) · 3 more bool · 4 count i64
 *   PutResponse     1 header · 2 prev_kv
 *   WatchResponse   1 header · 2 watch_id i64 · … · 11 events (repeated Event)
 *   Event           1 type (DELETE = 1) · 2 kv · 3 prev_kv
 *   KeyValue        1 key · 2 create_revision · 3 mod_revision · 4 version · 5 value · 6 lease
 */
import type { Event, KeyValue, KvSink, RangeSummary } from '../../log/types.js'

/** Wire type 0 (varint) and 2 (length-delimited) tags: (field << 3) | type. */
const varintTag = (field: number) => field << 3
const bytesTag = (field: number) => (field << 3) | 2

/** Bytes needed for a non-negative integer (a safe integer or a uint64 bigint) as a varint. */
function varintSize(n: number | bigint): number {
  let size = 1
  if (typeof n === 'bigint') {
    while (n >= 0x80n) {
      n >>= 7n
      size++
    }
    return size
  }
  while (n >= 0x80) {
    n = Math.floor(n / 128)
    size++
  }
  return size
}

/** Writes a non-negative varint at `at`; returns the offset after it. */
function writeVarint(out: Buffer, at: number, n: number | bigint): number {
  if (typeof n === 'bigint') {
    while (n >= 0x80n) {
      out[at++] = Number(n & 0x7fn) | 0x80
      n >>= 7n
    }
    out[at++] = Number(n)
    return at
  }
  while (n >= 0x80) {
    out[at++] = (n % 128) | 0x80
    n = Math.floor(n / 128)
  }
  out[at++] = n
  return at
}

/** An int64 as protobuf writes it: negative numbers as their 64-bit two's complement (10 bytes). */
function int64(n: number): number | bigint {
  return n >= 0 ? n : BigInt.asUintN(64, BigInt(n))
}

/** A message built from fields, sized first and written once. */
class Fields {
  private readonly parts: Array<[tag: number, value: number | bigint | Buffer]> = []
  private size = 0

  varint(field: number, value: number | bigint): this {
    if (value === 0 || value === 0n) return this
    this.parts.push([varintTag(field), value])
    this.size += varintFieldSize(value)
    return this
  }

  /** A nested message, or already-encoded fields: written as is, even when empty. */
  message(field: number, value: Buffer): this {
    this.parts.push([bytesTag(field), value])
    this.size += 1 + varintSize(value.length) + value.length
    return this
  }

  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.size)
    let at = 0
    for (const [tag, value] of this.parts) {
      out[at++] = tag
      if (Buffer.isBuffer(value)) {
        at = writeVarint(out, at, value.length)
        at += value.copy(out, at)
      } else {
        at = writeVarint(out, at, value)
      }
    }
    return out
  }
}

/**
 * ResponseHeaders for one member: the constant fields are encoded once, and the last header is kept for
 * its revision (a watch fan-out asks for the same revision's header once per watcher). A returned header
 * is shared: callers copy it into their messages and never change it.
 */
export class HeaderEncoder {
  /** cluster_id and member_id (fields 1 and 2), then raft_term (field 4): revision (3) goes between. */
  private readonly before: Buffer
  private readonly after: Buffer
  private lastRevision = -1
  private last: Buffer = Buffer.alloc(0)

  constructor(clusterId: bigint, memberId: bigint, raftTerm: number) {
    this.before = new Fields().varint(1, clusterId).varint(2, memberId).finish()
    this.after = new Fields().varint(4, raftTerm).finish()
  }

  header(revision: number): Buffer {
    if (revision !== this.lastRevision) {
      this.last = Buffer.concat([this.before, new Fields().varint(3, revision).finish(), this.after])
      this.lastRevision = revision
    }
    return this.last
  }
}

/** Bytes of a varint field (tag + value), 0 when the value is zero (left out). */
function varintFieldSize(n: number | bigint): number {
  return n === 0 || n === 0n ? 0 : 1 + varintSize(n)
}

/** Bytes of a bytes field (tag + length + bytes), 0 when empty (left out). */
function bytesFieldSize(b: Buffer): number {
  return b.length === 0 ? 0 : 1 + varintSize(b.length) + b.length
}

function writeVarintField(out: Buffer, at: number, field: number, n: number | bigint): number {
  if (n === 0 || n === 0n) return at
  out[at++] = varintTag(field)
  return writeVarint(out, at, n)
}

function writeBytesField(out: Buffer, at: number, field: number, b: Buffer): number {
  if (b.length === 0) return at
  out[at++] = bytesTag(field)
  at = writeVarint(out, at, b.length)
  return at + b.copy(out, at)
}

/** The size of a KeyValue message's body. */
function keyValueSize(key: Buffer, value: Buffer, createRevision: number, modRevision: number, version: number, lease: bigint): number {
  return (
    bytesFieldSize(key) +
    varintFieldSize(createRevision) +
    varintFieldSize(modRevision) +
    varintFieldSize(version) +
    bytesFieldSize(value) +
    varintFieldSize(lease)
  )
}

/** Writes a KeyValue message's body at `at`; returns the offset after it. */
function writeKeyValue(
  out: Buffer,
  at: number,
  key: Buffer,
  value: Buffer,
  createRevision: number,
  modRevision: number,
  version: number,
  lease: bigint,
): number {
  at = writeBytesField(out, at, 1, key)
  at = writeVarintField(out, at, 2, createRevision)
  at = writeVarintField(out, at, 3, modRevision)
  at = writeVarintField(out, at, 4, version)
  at = writeBytesField(out, at, 5, value)
  return writeVarintField(out, at, 6, lease)
}

export function keyValue(kv: KeyValue): Buffer {
  const out = Buffer.allocUnsafe(keyValueSize(kv.key, kv.value, kv.createRevision, kv.modRevision, kv.version, kv.lease))
  writeKeyValue(out, 0, kv.key, kv.value, kv.createRevision, kv.modRevision, kv.version, kv.lease)
  return out
}

/** Bytes a RangeEncoder gathers kvs in before it starts another chunk. */
const KVS_CHUNK = 64 * 1024

/**
 * A RangeResponse written as the log reads the range (Log.rangeInto): `sink` writes each kv as a
 * RangeResponse kvs field into chunks, with no object per key; finish() puts header, kvs, more and count
 * into one buffer.
 */
export class RangeEncoder {
  private readonly chunks: Buffer[] = []
  private chunk = Buffer.allocUnsafe(0)
  private at = 0
  private bytes = 0

  readonly sink: KvSink = (key, value, createRevision, modRevision, version, lease) => {
    const body = keyValueSize(key, value, createRevision, modRevision, version, lease)
    const size = 1 + varintSize(body) + body
    if (this.at + size > this.chunk.length) {
      this.seal()
      this.chunk = Buffer.allocUnsafe(Math.max(KVS_CHUNK, size))
    }
    this.chunk[this.at++] = bytesTag(2)
    this.at = writeVarint(this.chunk, this.at, body)
    this.at = writeKeyValue(this.chunk, this.at, key, value, createRevision, modRevision, version, lease)
  }

  finish(header: Buffer, r: Pick<RangeSummary, 'more' | 'count'>): Buffer {
    this.seal()
    const size = 1 + varintSize(header.length) + header.length + this.bytes + (r.more ? 2 : 0) + varintFieldSize(int64(r.count))
    const out = Buffer.allocUnsafe(size)
    out[0] = bytesTag(1) // the header is sent even when empty, as Fields.message does
    let at = writeVarint(out, 1, header.length)
    at += header.copy(out, at)
    for (const c of this.chunks) at += c.copy(out, at)
    at = writeVarintField(out, at, 3, r.more ? 1 : 0)
    at = writeVarintField(out, at, 4, int64(r.count))
    if (at !== size) throw new Error(`wire.RangeEncoder: wrote ${at} of ${size} bytes`)
    return out
  }

  private seal(): void {
    if (this.at === 0) return
    this.chunks.push(this.chunk.subarray(0, this.at))
    this.bytes += this.at
    this.at = 0
  }
}

/** A RangeResponse of kvs already read. */
export function rangeResponse(header: Buffer, r: { kvs: readonly KeyValue[]; more: boolean; count: number }): Buffer {
  const encoder = new RangeEncoder()
  for (const kv of r.kvs) encoder.sink(kv.key, kv.value, kv.createRevision, kv.modRevision, kv.version, kv.lease)
  return encoder.finish(header, r)
}

export function putResponse(header: Buffer, prevKv: KeyValue | undefined): Buffer {
  const fields = new Fields().message(1, header)
  if (prevKv !== undefined) fields.message(2, keyValue(prevKv))
  return fields.finish()
}

/** A WatchResponse's header and watch_id: followed by eventsField() parts, it is the whole response. */
export function watchHead(header: Buffer, watchId: number): Buffer {
  return new Fields().message(1, header).varint(2, int64(watchId)).finish()
}

/**
 * One event as WatchResponse field 11 (tag, length, Event). Encoded once per event object: the hub shares
 * event objects between watchers and batches (and the prevKv-less copy of each), so a fan-out to a
 * thousand watchers, or a catch-up from the ring, encodes each event once.
 */
const encodedEvents = new WeakMap<Event, Buffer>()

export function eventsField(event: Event): Buffer {
  let bytes = encodedEvents.get(event)
  if (bytes === undefined) {
    const e = new Fields().varint(1, event.type === 'DELETE' ? 1 : 0).message(2, keyValue(event.kv))
    if (event.prevKv !== undefined) e.message(3, keyValue(event.prevKv))
    bytes = new Fields().message(11, e.finish()).finish()
    encodedEvents.set(event, bytes)
  }
  return bytes
}

/** The events of a batch as WatchResponse fields (protobuf messages concatenate: append to a head). */
export function eventsFields(events: readonly Event[]): Buffer {
  if (events.length === 1) return eventsField(events[0])
  return Buffer.concat(events.map(eventsField))
}
