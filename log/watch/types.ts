/**
 * The watch hub's public types (docs/architecture.md, "How a watch flows"). The hub lives in log/; the WebSocket and NDJSON
 * streams of apiserver/watch sit on top of it, one WatchSink per watch.
 *
 * Delivery contract, for every watch:
 * - ordered and unique: revisions strictly increase across and within `events()` calls;
 * - atomic: all matching events of one revision arrive in one `events()` call (a call may hold several
 *   consecutive revisions);
 * - reliable: no gaps from the start revision on; the only way out is cancellation with a reason;
 * - bookmarkable: `progress(R)` means every matching event at or below R has been delivered.
 *
 * Batches and events are shared between watchers that watch the same range with the same options (and
 * with the log's own commit listeners): treat them as immutable. Their identity may be used to encode a
 * batch once per group of watchers (a WeakMap keyed by the batch).
 */
import type { Log } from '../backend.js'
import type { KvlogError } from '../errors.js'
import type { Author, BytesLike, Event } from '../types.js'

export interface WatchFilters {
  /** Leave out PUT events. */
  noPut?: boolean
  /** Leave out DELETE events. */
  noDelete?: boolean
}

export interface WatchSpec {
  /** The key, or the first key of the range. Must not be empty (use [0x00] with rangeEnd [0x00] for all keys). */
  key: BytesLike
  /** etcd's conventions: absent = just `key`; [0x00] = every key >= key; otherwise [key, rangeEnd). */
  rangeEnd?: BytesLike
  /**
   * The first revision to deliver (inclusive). Absent or 0: from now (the current revision + 1).
   * Below the compact revision: canceled with COMPACTED. Above the current revision: waits for it.
   */
  startRevision?: number
  /** Include each event's prevKv (default false: events carry no prevKv). */
  prevKv?: boolean
  filters?: WatchFilters
}

export interface WatchBatch {
  /** One or more whole revisions of matching events, in revision order, never empty. */
  events: readonly Event[]
  /** The revision of the last event in the batch. */
  revision: number
  /** Commit time of each event (ms since the epoch), parallel to `events`. */
  times: readonly number[]
  /** Who wrote each event's revision (LogEntry.author; undefined for the store's own writes), parallel to `events`. */
  authors: readonly (Author | undefined)[]
}

/**
 * Where a watch's output goes. The hub calls it synchronously, never from inside hub.watch(), and never
 * after canceled(). A method that throws cancels its watch (INTERNAL); it never reaches the log.
 */
export interface WatchSink {
  /**
   * Takes a batch; returns false when the consumer is backed up. The batch is delivered either way; the
   * watch then stops receiving pushes until handle.resume(), and catches up from the ring or the log.
   */
  events(batch: WatchBatch): boolean
  /**
   * The hub ended the watch: COMPACTED (details.compactRevision = the floor to relist from), CLOSED (the
   * hub was closed) or INTERNAL. Not called after handle.cancel().
   */
  canceled(err: KvlogError): void
  /** Every matching event at or below `revision` has been delivered. */
  progress?(revision: number): void
}

export interface WatchHandle {
  readonly id: number
  /** Stops the watch at once; no further sink calls. Idempotent. */
  cancel(): void
  /** The consumer drained after events() returned false: catch up and rejoin. A no-op otherwise. */
  resume(): void
  /** Sends progress(current revision) once the watch is synced (at once if it is). */
  requestProgress(): void
  /** The next revision the watch will deliver (the start revision until it has delivered something). */
  readonly nextRevision: number
  /** True while the watch gets events as they commit (also while it waits for a future start revision). */
  readonly synced: boolean
}

export interface WatchHubOptions {
  /** How many of the most recent committed entries to keep in memory for catch-up (0 = none). */
  ringSize: number
  /** Revisions per catch-up step: per history read, and per events() call when catching up. */
  catchUpBatch: number
}

export interface WatchHubStats {
  watchers: number
  /** At the head of the log (including those waiting for a future start revision). */
  synced: number
  /** Catching up, or paused by backpressure. */
  unsynced: number
  /** Of the unsynced: waiting for resume() after their sink reported backpressure. */
  paused: number
  /** Committed entries held in the ring. */
  ringEntries: number
  /** The last revision the hub has seen committed. */
  revision: number
}

/** What the hub needs of a log: its commits, its history, and where it stands. */
export type WatchSource = Pick<Log, 'subscribe' | 'history' | 'revision' | 'compactRevision'>
