/**
 * The replication contract: what a replicator may do to a local copy of the log, beyond the Log contract
 * (backend.ts). Two replicators use it: the cluster engine (log/jetstream/), whose members each apply the
 * cluster's stream to a copy, and the etcd follower (`kvlog serve --follow-etcd`), which applies a running
 * etcd's revisions to the store. Neither knows which engine holds the copy: LevelLog (log/level/)
 * implements Replica, and the wiring hands a replicator a ReplicaStorage to open its copy with.
 *
 * What a replicator may do, and nothing else:
 * - apply writes that were decided elsewhere, in the order decided, with the time and lease deadlines
 *   decided (applyReplicated), together with its own progress records, in one durable batch;
 * - read which leases are past a deadline it chooses (expiredLeases), since a replica expires no lease
 *   itself until told to (expireLeases);
 * - take a snapshot together with one of its own records as the snapshot holds it (snapshotWithMeta);
 * - validate requests with the copy's limits before it sends them to the others (limits);
 * - wait for the copy's compaction to be idle (compactionIdle).
 *
 * The protocol built on it: docs/cluster-protocol.md; where it sits in the house: docs/architecture.md.
 */
import type { Log } from './backend.js'
import type { LeaseGrant, SnapshotStream, TxnRequest, TxnResult } from './types.js'
import type { Limits } from './validate.js'

/** A write decided elsewhere (the cluster's leader, a mirrored etcd), applied with Replica.applyReplicated. */
export type ReplicatedWrite =
  /**
   * unlimited: a write another store already took (a mirrored etcd revision) or whose submitter already checked
   * it (a cluster member), not held to maxTxnOps, maxTxnTotalOps,
   * maxRequestBytes or maxTxnDepth.
   */
  | { type: 'txn'; request: TxnRequest; unlimited?: boolean }
  | { type: 'leaseGrant'; id: bigint; ttl: number }
  | { type: 'leaseKeepAlive'; id: bigint }
  | { type: 'leaseRevoke'; id: bigint }

export type ReplicatedResult = TxnResult | LeaseGrant

/**
 * A record of the replicator's own, written with the writes it describes (readMeta reads it back). Its
 * name is in the readMeta/writeMeta namespace: the engine's private records (leases, alarms, format,
 * segments) are out of a replicator's reach whatever the name.
 */
export interface ReplicaRecord {
  name: string
  value: unknown
}

/**
 * The records the cluster engine keeps in each member's copy (log/jetstream/records.ts writes them): the
 * last applied stream message, the roster, the members' incarnations (and this copy's own), and the kept tail's ring of slots (`tailSlot` + slot number).
 * The layers above the log (auth, compaction cursors, the follower) use other names.
 */
export const CLUSTER_RECORDS = {
  applied: 'jetstream.applied',
  roster: 'jetstream.roster',
  incarnations: 'jetstream.incarnations',
  incarnation: 'jetstream.incarnation',
  membership: 'jetstream.membership',
  tailSlot: 'jetstream.tail.',
} as const

export interface Replica extends Log {
  /** The request limits the copy validates with (a replicator checks requests before sending them). */
  readonly limits: Limits
  /**
   * Applies the writes of one replicated message as ONE durable batch whose entries carry `timestamp`,
   * together with the records `marker`: after a crash either all of it is there or none. Everything
   * non-deterministic comes from the arguments (timestamp, lease ids, deadlines = timestamp + TTL), so
   * every copy that applies the same writes in the same order gets the same revisions and results. Each
   * write settles on its own (a failed one, e.g. LEASE_NOT_FOUND, leaves no trace), in order. With `sync`
   * false the batch is not fsynced by itself (while catching up: the next synced batch makes it durable,
   * and a crash before that loses a suffix of batches, markers included).
   */
  applyReplicated(
    timestamp: number,
    writes: readonly ReplicatedWrite[],
    marker: ReplicaRecord | readonly ReplicaRecord[],
    sync?: boolean,
  ): Promise<Array<PromiseSettledResult<ReplicatedResult>>>
  /** Leases whose deadline is at or before `now` (the replicator expires them through its own log). */
  expiredLeases(now: number): bigint[]
  /**
   * Starts revoking expired leases every `interval` ms, as a store of its own does (a mirror of etcd at
   * cutover). Does nothing if it already does.
   */
  expireLeases(interval: number): void
  /** Resolves once no compaction is running (the floor's removal has finished or stopped). */
  compactionIdle(): Promise<void>
  /**
   * snapshot(), together with the readMeta record `name` exactly as the snapshot holds it: the replicator
   * learns which point of its own log the snapshot is at.
   */
  snapshotWithMeta(name: string | undefined, chunkBytes?: number): Promise<{ stream: SnapshotStream; meta: unknown }>
  onMeta(listener: (name: string, value: unknown) => void): () => void
}

/** Where a replicator keeps its copy, and the engine that holds it (given by the wiring). */
export interface ReplicaStorage {
  /** The copy's directory. */
  readonly dir: string
  /** Opens the copy in `dir` (created if missing). It expires no lease by itself: see Replica.expireLeases. */
  open(dir: string): Promise<Replica>
  /**
   * Writes a snapshot's bytes (Log.snapshot's stream) as a copy into `dir`, which must be missing or
   * empty; the stream's checksum is verified. `progress` gets the bytes read so far.
   */
  restore(chunks: AsyncIterable<Buffer>, dir: string, progress?: (bytes: number) => void): Promise<void>
}
