/**
 * Leases (etcd's): a lease has a TTL and a deadline; keys put with the lease are deleted, all in one
 * revision, when it is revoked or its deadline passes. Leases are a store feature so every front door sees
 * the same ones.
 *
 * Durable records (meta table, written in the same LevelDB batches as the data they relate to):
 *
 *   meta "lease/" ‖ id (8 bytes BE)            → msgpack { ttl, deadline }      one per live lease
 *   meta "leasekey/" ‖ id (8 bytes BE) ‖ key   → empty                          one per attached key
 *
 * The attachment index is what lets an open find a lease's keys without scanning every key. It is kept by
 * the writer: track() runs when a transaction is evaluated (in revision order, before its batch is
 * written) and returns the index updates for that batch. So the in-memory table always describes the state
 * after everything evaluated so far, including groups still being written — which is what a revoke
 * evaluated right after a put that attached a key must see. (If a batch fails the writer stops and the
 * next open reloads the table from disk.)
 *
 * Deadlines are wall-clock milliseconds and persisted on grant and on every keep-alive, so leases survive a
 * restart with the deadline they had; one that expired while the server was down is revoked right after
 * the open.
 */
import { randomBytes } from 'node:crypto'
import { Packr } from 'msgpackr'
import { KvlogError } from '../errors.js'
import type { LeaseGrant, LeaseTimeToLive } from '../types.js'
import { MAX_LEASE_ID } from '../validate.js'
import { TAG_META } from './keyspace.js'
import type { Db } from './latest-view.js'
import { OP_PUT, type LoggedOp } from '../ops.js'
import type { BatchOp } from './segments.js'

const packr = new Packr({ useRecords: false })
const LEASE_PREFIX = Buffer.from([TAG_META, ...Buffer.from('lease/', 'ascii')])
const ATTACH_PREFIX = Buffer.from([TAG_META, ...Buffer.from('leasekey/', 'ascii')])
const EMPTY = Buffer.alloc(0)

/** etcd's MaxLeaseTTL: 9,000,000,000 seconds. */
const MAX_LEASE_TTL = 9_000_000_000

interface Lease {
  ttl: number
  deadline: number
  /** Attached keys, as latin1 strings of their bytes. */
  keys: Set<string>
}

function leaseRecordKey(id: bigint): Buffer {
  const k = Buffer.allocUnsafe(LEASE_PREFIX.length + 8)
  LEASE_PREFIX.copy(k)
  k.writeBigUInt64BE(id, LEASE_PREFIX.length)
  return k
}

function attachKey(id: bigint, key: Buffer): Buffer {
  const k = Buffer.allocUnsafe(ATTACH_PREFIX.length + 8 + key.length)
  ATTACH_PREFIX.copy(k)
  k.writeBigUInt64BE(id, ATTACH_PREFIX.length)
  key.copy(k, ATTACH_PREFIX.length + 8)
  return k
}

export class LeaseTable {
  private readonly leases = new Map<bigint, Lease>()
  /** For every key attached to a lease, the lease (latin1 key → id). */
  private readonly keyLease = new Map<string, bigint>()

  constructor(private readonly minTtl: number) {}

  /** Loads the leases and their attached keys (not the whole key space). */
  async load(db: Db): Promise<void> {
    for await (const [k, v] of db.iterator({ gte: LEASE_PREFIX, lt: prefixEnd(LEASE_PREFIX) })) {
      const { ttl, deadline } = packr.unpack(v) as { ttl: number; deadline: number }
      this.leases.set(k.readBigUInt64BE(LEASE_PREFIX.length), { ttl, deadline, keys: new Set() })
    }
    for await (const k of db.keys({ gte: ATTACH_PREFIX, lt: prefixEnd(ATTACH_PREFIX) })) {
      const id = k.readBigUInt64BE(ATTACH_PREFIX.length)
      const key = k.subarray(ATTACH_PREFIX.length + 8).toString('latin1')
      this.leases.get(id)?.keys.add(key)
      this.keyLease.set(key, id)
    }
  }

  has(id: bigint): boolean {
    return this.leases.has(id)
  }

  get size(): number {
    return this.leases.size
  }

  ids(): bigint[] {
    return [...this.leases.keys()]
  }

  /** Validates a grant and picks the id; the caller writes `record(...)` and then calls `add`. */
  planGrant(ttlSeconds: number, requested: bigint): LeaseGrant {
    if (!Number.isSafeInteger(ttlSeconds)) throw new KvlogError('INVALID_ARGUMENT', 'ttl: an integer number of seconds', { field: 'ttl' })
    if (ttlSeconds > MAX_LEASE_TTL)
      throw new KvlogError('LEASE_TTL_TOO_LARGE', `too large lease TTL: ${ttlSeconds} s (max ${MAX_LEASE_TTL})`)
    const ttl = Math.max(ttlSeconds, this.minTtl)
    if (requested !== 0n) {
      if (this.leases.has(requested))
        throw new KvlogError('LEASE_EXISTS', `lease ${requested} already exists`, { lease: requested.toString() })
      return { id: requested, ttl }
    }
    let id: bigint
    do id = randomBytes(8).readBigUInt64BE() & MAX_LEASE_ID
    while (id === 0n || this.leases.has(id))
    return { id, ttl }
  }

  /** Adds a granted lease (or replaces its deadline) in memory; returns its durable record. */
  put(id: bigint, ttl: number, deadline: number): BatchOp {
    const lease = this.leases.get(id)
    if (lease === undefined) this.leases.set(id, { ttl, deadline, keys: new Set() })
    else lease.deadline = deadline
    return { type: 'put', key: leaseRecordKey(id), value: packr.pack({ ttl, deadline }) }
  }

  /** The lease's TTL and remaining time, or undefined if it does not exist. */
  timeToLive(id: bigint, withKeys: boolean, now: number): LeaseTimeToLive | undefined {
    const lease = this.leases.get(id)
    if (lease === undefined) return undefined
    const ttl = Math.max(0, Math.floor((lease.deadline - now) / 1000))
    const out: LeaseTimeToLive = { id, ttl, grantedTtl: lease.ttl }
    if (withKeys) out.keys = [...lease.keys].sort().map((k) => Buffer.from(k, 'latin1'))
    return out
  }

  grantedTtl(id: bigint): number | undefined {
    return this.leases.get(id)?.ttl
  }

  /** Leases whose deadline is at or before `now`. */
  expired(now: number): bigint[] {
    const out: bigint[] = []
    for (const [id, lease] of this.leases) if (lease.deadline <= now) out.push(id)
    return out
  }

  /**
   * Removes a lease from memory (at evaluation time, so later transactions see it gone) and returns the
   * keys to delete and the record deletions for the revoke's batch.
   */
  revoke(id: bigint): { keys: Buffer[]; records: BatchOp[] } {
    const lease = this.leases.get(id)
    if (lease === undefined) throw new KvlogError('LEASE_NOT_FOUND', `requested lease not found: ${id}`, { lease: id.toString() })
    this.leases.delete(id)
    const keys = [...lease.keys].sort().map((k) => Buffer.from(k, 'latin1'))
    // The keys' attachment records go with their deletes (track); the lease record goes here.
    return { keys, records: [{ type: 'del', key: leaseRecordKey(id) }] }
  }

  /**
   * Keeps the attachment index in step with an evaluated transaction's writes; returns the index records
   * for its batch. A put moves the key to its (possibly zero) lease; a delete detaches it.
   */
  track(ops: readonly LoggedOp[], out: BatchOp[]): void {
    for (const op of ops) {
      // The common case, no leases in use: no work per op.
      if (op.lease === 0n && this.keyLease.size === 0) continue
      const name = op.key.toString('latin1')
      const before = this.keyLease.get(name) ?? 0n
      const after = op.kind === OP_PUT ? op.lease : 0n
      if (before === after) continue
      if (before !== 0n) {
        this.keyLease.delete(name)
        this.leases.get(before)?.keys.delete(name)
        out.push({ type: 'del', key: attachKey(before, op.key) })
      }
      if (after !== 0n) {
        this.keyLease.set(name, after)
        this.leases.get(after)?.keys.add(name)
        out.push({ type: 'put', key: attachKey(after, op.key), value: EMPTY })
      }
    }
  }
}

function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix)
  end[end.length - 1]++
  return end
}
