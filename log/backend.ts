/**
 * The contract every log backend satisfies: LevelLog (log/level/, one machine on LevelDB) and JetStreamLog
 * (log/jetstream/, a cluster whose log is a NATS JetStream stream). test/log/conformance/ holds the suite
 * both pass. A replicator's extra powers over a local copy are the replication contract (replica.ts); the
 * layers and how a write flows through them: docs/architecture.md.
 *
 * Who may call what: front doors and compaction/ call these methods; nobody reaches around them to the
 * storage underneath. All methods may be called concurrently; writes are serialized by the backend.
 */
import type { MetaCondition } from './meta-condition.js'
import type {
  Author,
  BytesLike,
  CommitListener,
  CompactResult,
  HistoryOptions,
  HistoryResult,
  KeyValue,
  KvSink,
  LeaseGrant,
  LeaseTimeToLive,
  LogStatus,
  RangeOptions,
  RangeResult,
  RangeSummary,
  SnapshotStream,
  TxnRequest,
  TxnResult,
} from './types.js'

export interface PutOptions {
  /** Recorded with the entry (who changed what). */
  author?: Author
  lease?: bigint | number
  prevKv?: boolean
  ignoreValue?: boolean
  ignoreLease?: boolean
}

export interface DeleteOptions {
  /** Recorded with the entry, if anything is deleted. */
  author?: Author
  rangeEnd?: BytesLike
  prevKv?: boolean
}

export interface WriteResult {
  /** The revision of the write, or the store's revision if nothing was written (delete of nothing). */
  revision: number
  wrote: boolean
}

export interface PutResponse extends WriteResult {
  prevKv?: KeyValue
}

export interface DeleteResponse extends WriteResult {
  deleted: number
  prevKvs?: KeyValue[]
}

export type AlarmKind = 'NOSPACE'

/** A member whose copy's hash differs from the majority's at `revision` (a cluster's corruption check). */
export interface CorruptReport {
  clusterName: string
  member: string
  revision: number
  hash: number
  majorityHash: number
}

export interface Log {
  /** The latest committed (durable, acknowledged) revision. */
  readonly revision: number
  /** Reads and history below this revision fail with COMPACTED. */
  readonly compactRevision: number

  /** etcd's Txn: if every compare holds, run `success`, else `failure`; one revision if anything is written. */
  txn(request: TxnRequest): Promise<TxnResult>
  put(key: BytesLike, value: BytesLike, options?: PutOptions): Promise<PutResponse>
  /** Deletes one key, or [key, rangeEnd) (see KeyRange for the rangeEnd conventions). */
  delete(key: BytesLike, options?: DeleteOptions): Promise<DeleteResponse>
  /** One key at the latest or a given revision; undefined if it does not exist there. */
  get(key: BytesLike, options?: { revision?: number }): Promise<KeyValue | undefined>
  range(key: BytesLike, options?: RangeOptions): Promise<RangeResult>
  /**
   * range, with each kv handed to `sink` as it is read instead of collected into KeyValue objects: for a
   * door that encodes a list straight into its response. The same kvs, order, more, count and errors.
   */
  rangeInto(key: BytesLike, options: RangeOptions | undefined, sink: KvSink): Promise<RangeSummary>
  /** The events for a key or range between two revisions, grouped by revision, in order. */
  history(key: BytesLike, options?: HistoryOptions): Promise<HistoryResult>
  /**
   * Raises the compact revision to `revision` and removes what no read at or above it needs. Never lowers
   * it. Resolves when the removal is done and durable; with physical: false as soon as the new floor is
   * durable (the removal goes on in the background and resumes after a crash).
   */
  compact(revision: number, options?: { physical?: boolean }): Promise<CompactResult>
  status(): Promise<LogStatus>
  /** The first revision committed at or after `timestamp` (ms since the epoch); revision + 1 if none. */
  revisionAt(timestamp: number): Promise<number>
  /**
   * A consistent copy of the whole store at the current revision, as a checksummed byte stream
   * (log/level/snapshot.ts); restoreSnapshot() turns it back into a data directory. The snapshot holds its
   * revision's state until the stream is consumed or abandoned (end the iteration to release it).
   */
  snapshot(chunkBytes?: number): Promise<SnapshotStream>
  /** Asks the storage engine to give the space of removed data back to the file system. */
  reclaimSpace(): Promise<void>
  /** Durable records for layers above the log (e.g. compaction/'s cursors); undefined removes one. */
  readMeta(name: string): Promise<unknown>
  /**
   * With a `condition`, the record is written only if the stored one still has the given `revision`
   * field, else CONFLICT (meta-condition.ts): checked where the write is applied, in log order.
   */
  writeMeta(name: string, value: unknown, condition?: MetaCondition): Promise<void>
  /**
   * Calls `listener` after each meta record change this copy applies, whoever made it: in a cluster, a
   * change made through another member arrives here once this member has applied it. Returns the
   * unsubscribe function. Engines whose records change only through their own writeMeta may omit it.
   */
  onMeta?(listener: (name: string, value: unknown) => void): () => void
  /**
   * Cluster engines: calls `listener` when this member, leading, finds a member's copy whose hash differs
   * from the majority's at the same revision (etcd's corruption check). Returns the unsubscribe function.
   */
  onCorrupt?(listener: (report: CorruptReport) => void): () => void
  /** Active alarms. With NOSPACE, writes that add data (any put) fail with NO_SPACE; reads and deletes work. */
  alarms(): AlarmKind[]
  /**
   * `automatic`: the space check's own verdict (compaction/auto-compactor.ts), not an operator's. A cluster
   * member that does not lead ignores it: only the leader raises and clears NOSPACE, so the members'
   * different measures of their copies never make the alarm flap.
   */
  setAlarm(kind: AlarmKind, active: boolean, options?: { automatic?: boolean }): Promise<void>
  /**
   * Leases (etcd's). grant: `id` 0 = the store picks one; TTL in seconds, raised to the minimum TTL;
   * LEASE_EXISTS, LEASE_TTL_TOO_LARGE, NO_SPACE under the alarm. revoke: deletes the attached keys in one
   * revision (none if it has no keys) and resolves with the store's revision after; LEASE_NOT_FOUND.
   * keepAlive: restarts the deadline (durably); LEASE_NOT_FOUND. timeToLive: undefined if it does not exist.
   * Expired leases are revoked by the store itself.
   */
  leaseGrant(ttl: number, id?: bigint): Promise<LeaseGrant>
  leaseRevoke(id: bigint): Promise<{ revision: number }>
  leaseKeepAlive(id: bigint): Promise<LeaseGrant>
  leaseTimeToLive(id: bigint, options?: { keys?: boolean }): LeaseTimeToLive | undefined
  leases(): bigint[]
  /** Commit hook for the watch hub: listeners run synchronously, in revision order, after each durable batch. */
  subscribe(listener: CommitListener): () => void
  /** Waits for queued writes, then closes. Later calls fail with CLOSED. */
  close(): Promise<void>
}
