/**
 * The data model of the log (docs/architecture.md, "Data model"), shared by every backend and every front door.
 *
 * - Revisions are safe integers. An empty store is at revision 1; the first write gets 2 (as in etcd).
 *   A transaction that writes gets exactly one new revision, shared by all its writes, in op order.
 * - Keys and values are bytes. The in-process API also accepts strings (encoded as UTF-8) for
 *   convenience; what comes back is always a Buffer.
 * - Lease ids are 64-bit: they are bigints here (0n = no lease), never numbers.
 */

import type { Author, EventType } from '../wire/native-api.js'

/** The event type and a write's author are the native API's wire types, shared with the client. */
export type { Author, EventType }

/** Bytes as accepted by the API. Strings are encoded as UTF-8. */
export type BytesLike = Uint8Array | string

export interface KeyValue {
  key: Buffer
  value: Buffer
  /** Revision of the put that created the key (since its last delete). */
  createRevision: number
  /** Revision of the last write to the key. */
  modRevision: number
  /** 1 on create, +1 per put; a deleted key has no version (it is gone). */
  version: number
  /** The lease the key is attached to, 0n for none. */
  lease: bigint
}

/**
 * One write to one key at one revision. For a DELETE, `kv` holds the key with an empty value, zero create
 * revision and version, and modRevision = the revision of the delete (as etcd reports it).
 * `prevKv` is the key's state just before this write, absent when it did not exist.
 */
export interface Event {
  type: EventType
  kv: KeyValue
  prevKv?: KeyValue
}

/** Everything one revision did: its commit time (ms since the epoch), its events in op order, its author. */
export interface LogEntry {
  revision: number
  timestamp: number
  events: Event[]
  author?: Author
}

// ---------------------------------------------------------------------------------------------------------
// Reads

export type SortOrder = 'NONE' | 'ASCEND' | 'DESCEND'
export type SortTarget = 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE'

/**
 * Which keys a request addresses, with etcd's conventions:
 * - no rangeEnd: the single key `key`;
 * - rangeEnd = [0x00]: every key >= key (with key = [0x00] too: every key);
 * - otherwise the half-open interval [key, rangeEnd). Use prefixEnd(prefix) for a prefix.
 */
export interface KeyRange {
  key: BytesLike
  rangeEnd?: BytesLike
}

export interface RangeOptions {
  rangeEnd?: BytesLike
  /** Read at this revision; 0 or absent = the latest. Below the compact revision: COMPACTED. */
  revision?: number
  /** At most this many kvs (0 or absent = no limit). `more` tells whether some were left out. */
  limit?: number
  sortOrder?: SortOrder
  sortTarget?: SortTarget
  keysOnly?: boolean
  countOnly?: boolean
  minModRevision?: number
  maxModRevision?: number
  minCreateRevision?: number
  maxCreateRevision?: number
  /**
   * Answer from this member's copy without first catching up with the cluster (etcd's serializable read):
   * may miss writes acknowledged elsewhere. Single node: no difference.
   */
  serializable?: boolean
}

export interface RangeResult {
  kvs: KeyValue[]
  /** True when the limit left out kvs that matched. */
  more: boolean
  /** The number of keys in the range at the revision read, ignoring limit and filters (as etcd counts). */
  count: number
  /** The revision the range was read at (the store's revision for a latest read). */
  revision: number
}

/**
 * Receives a range's kvs in order as they are read (Log.rangeInto): a KeyValue's fields, without an object
 * per key. `key` and `value` may be views into the engine's read buffers, valid only during the call: a
 * sink copies what it keeps. `value` is empty for keysOnly.
 */
export type KvSink = (key: Buffer, value: Buffer, createRevision: number, modRevision: number, version: number, lease: bigint) => void

/** A range's answer without its kvs (they went to a KvSink). */
export type RangeSummary = Omit<RangeResult, 'kvs'>

export interface HistoryOptions {
  rangeEnd?: BytesLike
  /** First revision to include (default: the compact revision). Below the compact revision: COMPACTED. */
  fromRevision?: number
  /** Last revision to include (default: the current revision). */
  toRevision?: number
  /**
   * Stop after at least this many events, at a revision boundary (a revision is never split, so a result may
   * hold a few more). 0 or absent = no limit.
   */
  limit?: number
  /** Include each event's prevKv. */
  prevKv?: boolean
}

export interface HistoryResult {
  /** Matching events grouped by revision, in revision order; revisions with no matching event are left out. */
  entries: LogEntry[]
  /** True when the limit stopped the read before toRevision. */
  more: boolean
  /** Where to continue: the first revision not yet read. */
  nextRevision: number
  /** The store's revision when the history was read. */
  revision: number
  compactRevision: number
}

// ---------------------------------------------------------------------------------------------------------
// Transactions

export type CompareTarget = 'VALUE' | 'VERSION' | 'CREATE' | 'MOD' | 'LEASE'
export type CompareResult = 'EQUAL' | 'NOT_EQUAL' | 'LESS' | 'GREATER'

/**
 * A compare on one key, or on every key of [key, rangeEnd) (all must satisfy it). A key that does not exist
 * compares as version 0, create 0, mod 0, lease 0; a VALUE compare on a missing key is always false (etcd).
 */
export interface Compare {
  key: BytesLike
  rangeEnd?: BytesLike
  target: CompareTarget
  result: CompareResult
  /** Bytes for VALUE, a number for VERSION/CREATE/MOD, a bigint (or number) for LEASE. */
  value: BytesLike | number | bigint
}

export interface PutOp {
  type: 'put'
  key: BytesLike
  value?: BytesLike
  lease?: bigint | number
  prevKv?: boolean
  /** Keep the key's current value (the key must exist). */
  ignoreValue?: boolean
  /** Keep the key's current lease (the key must exist). */
  ignoreLease?: boolean
}

export interface DeleteOp {
  type: 'delete'
  key: BytesLike
  rangeEnd?: BytesLike
  prevKv?: boolean
}

export interface RangeOp extends RangeOptions {
  type: 'range'
  key: BytesLike
}

export interface TxnOp {
  type: 'txn'
  compare?: Compare[]
  success?: Op[]
  failure?: Op[]
}

export type Op = PutOp | DeleteOp | RangeOp | TxnOp

export interface TxnRequest {
  compare?: Compare[]
  success?: Op[]
  failure?: Op[]
  /** Recorded with the entry if the transaction writes. */
  author?: Author
}

export interface PutResult {
  type: 'put'
  prevKv?: KeyValue
}

export interface DeleteResult {
  type: 'delete'
  deleted: number
  prevKvs?: KeyValue[]
}

export interface RangeOpResult extends RangeResult {
  type: 'range'
}

export interface TxnOpResult {
  type: 'txn'
  succeeded: boolean
  results: OpResult[]
}

export type OpResult = PutResult | DeleteResult | RangeOpResult | TxnOpResult

export interface TxnResult {
  succeeded: boolean
  results: OpResult[]
  /** The transaction's revision if it wrote, else the store's revision when it was evaluated. */
  revision: number
  /** Whether the transaction wrote (and so got a revision of its own). */
  wrote: boolean
}

// ---------------------------------------------------------------------------------------------------------
// Status and compaction

/** A span of the log (docs/architecture.md, "Segments"): rolled over by entry count or bytes. */
export interface Segment {
  id: number
  firstRevision: number
  lastRevision: number
  /** Commit time of the first and last entry, ms since the epoch. */
  firstTimestamp: number
  lastTimestamp: number
  entries: number
  /** Encoded bytes of the entries (log records only; indexes are not counted). */
  bytes: number
}

/**
 * Log entries below the compact revision that compaction kept because they hold a key's surviving version
 * (its newest below the floor, read through the hist index) that is no longer live: a live one is kept
 * in the key's kv record only. They are not history (history and watches
 * start at the floor), so the segment table, which describes the readable log, does not count them.
 */
export interface BelowFloor {
  entries: number
  /** Encoded bytes of those entries. */
  bytes: number
}

export interface LogStatus {
  revision: number
  compactRevision: number
  /** Bytes of the database files on disk. */
  dbSize: number
  /** The readable log, at or above the compact revision. */
  segments: Segment[]
  belowFloor: BelowFloor
  /**
   * Compaction in progress (scheduled, not finished), if any: progress is the revision it has removed
   * history up to (method 'drop': where it started until its walk of the hist index is done, then the target).
   */
  compaction?: { target: number; progress: number }
  /** The on-disk format version. */
  formatVersion: number
  /** Cluster mode only: this member's view of the cluster. */
  cluster?: ClusterStatus
}

export interface ClusterStatus {
  clusterName: string
  member: string
  role: 'leader' | 'follower'
  /** The leading member's name, '' if none is known. */
  leader: string
  /** The leader's epoch: unique to one leadership and growing, with gaps (log/jetstream/election.ts). */
  epoch: number
  /** The leader's term (etcd's raftTerm): one more with every new leadership. */
  term: number
  /**
   * Milliseconds since this member last renewed its leader lease successfully (null: it holds none). A
   * leader that publishes with this beyond leaderLease would be a second leader; it steps down first.
   */
  leaseRenewedAgo: number | null
  /** The last stream sequence applied to this member's copy (etcd's raftIndex). */
  applied: number
  /** The stream's last sequence when last asked. */
  streamLast: number
  /** streamLast - applied, at least 0. */
  lag: number
  /** Seconds since the last applied message was committed, 0 when caught up. */
  lagSeconds: number
  /** Leader changes this member has seen since it started. */
  leaderChanges: number
  /** The members whose majority acknowledges writes (they joined and were not removed). */
  roster: string[]
}

export interface CompactResult {
  /** The compact revision after the call (never lowered). */
  compactRevision: number
  /**
   * Revisions compacted by this call: the log entries below the new floor it went through. Their history
   * is gone. Method 'scan' keeps an entry that holds a surviving version (see LogStatus.belowFloor);
   * method 'drop' removes every entry below the floor, surviving versions being copied into hist first.
   */
  removedRevisions: number
  /** History index entries removed by this call. */
  removedVersions: number
  /** Method 'drop': the log's table files removed whole (without reading them), and their bytes. */
  droppedFiles?: number
  droppedBytes?: number
  durationMs: number
}

/** Called after every durable batch with its entries in revision order (with prevKv filled in). */
export type CommitListener = (entries: readonly LogEntry[]) => void

export interface LeaseGrant {
  id: bigint
  /** The TTL granted, in seconds (raised to the minimum TTL if asked for less). */
  ttl: number
}

export interface LeaseTimeToLive {
  id: bigint
  /** Seconds left before expiry (rounded down). */
  ttl: number
  grantedTtl: number
  /** The attached keys, when asked for. */
  keys?: Buffer[]
}

export interface SnapshotStream {
  /** The revision the snapshot holds. */
  revision: number
  /** The database's approximate size on disk: a progress estimate, not the stream's exact length. */
  estimatedBytes: number
  chunks: AsyncIterable<Buffer>
}
