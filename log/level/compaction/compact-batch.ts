/**
 * One batch of a compaction (compact-scan.ts runs a job's batches, compactor.ts has the job around them):
 * given the log entries of a span of revisions below the target R, what to write so that only what a read
 * at or above R needs stays.
 *
 * For each op of a scanned entry at revision r:
 *
 *   op.prevRevision = p > 0   the version at p is superseded: delete hist(key, p) and take the op out of
 *                             log entry p (p < r, so p was scanned by this batch or an earlier one)
 *   op is a delete            its tombstone is not needed below R: delete hist(key, r) and take the op out
 *                             of entry r itself
 *   op is a put that is still the key's live version (its kv record has modRevision r)
 *                             the kv record holds the same key and value: take the op out of entry r; its
 *                             hist record (IN_LOG) stays, and readers find the version in the kv record
 *
 * Taking an op out of an entry: the entry goes when no op is left, else it is written back without it.
 * What stays below R is, per key, its newest put below R (unless superseded at or above R): in the kv record
 * when the key has not been written since, else in the log entry it was written in; its hist record points
 * at it (IN_LOG) as before. Nothing is copied, and each version's value is stored once.
 *
 *   scanned:   [r5: put a]  [r6: put a, put b]  [r7: put a]  [r8: del b]  [r9: put c]     compact(10),
 *   after:     (r5 gone)    (r6 gone)           [r7: put a]  (r8 gone)    (r9 gone)       a written at 12
 *   prev a: 5→6→7→12, b: 6→8; hist a@5, a@6, b@6, b@8 gone; c@9 stays (IN_LOG) and its value is kv(c).
 *
 * When the key is written again after the floor was raised (the kv record about to be replaced is then
 * the only copy of a version below R), the writer copies that version into its hist record (MATERIALIZED)
 * in the same batch as the write (writer.ts). So a kv record read here that is replaced before this batch
 * is written loses nothing: the writer copied it first.
 *
 * Knowing whether a put is its key's live version without reading its kv record every time: a job reads
 * each key's kv record at most once (LiveRevisions). With many revisions over few keys that is one read
 * per key per job instead of one per key per batch.
 *
 * Knowing how many ops an entry holds without reading it: the caller remembers the size of every entry it
 * scanned that kept exactly one op (SingleOpEntries); those are deleted blind. Every other entry a batch
 * needs (multi-op, or below where this process started scanning) comes from the caller's EntrySource (as
 * batches planned but not yet written leave it, or as read ahead), or is read in one getMany per batch.
 * Tolerant of work found done: a missing hist key deletes to nothing, and an op already gone from its
 * entry, or an entry already gone (databases compacted by an older kvlog copied survivors into hist and
 * removed their entries), is skipped. So a batch planned again over the same rows writes the same result.
 */
import { keyId } from '../../keys.js'
import { histKey, kvKey, logKey, logKeyRevision } from '../keyspace.js'
import type { Db } from '../latest-view.js'
import { decodeEntry, decodeEntryRefs, encodeEntry, kvRecordModRevision, type OpRef } from '../records.js'
import { OP_DELETE, OP_PUT } from '../../ops.js'
import { RevisionTable } from './revision-table.js'
import type { BatchOp } from '../segments.js'

/** Entries at most this many: beyond it, entries are read instead of remembered (12-24 bytes each). */
const SINGLE_OP_ENTRIES_MAX = 1 << 18

/**
 * Encoded sizes of entries below the scan position that hold exactly one op, so that a batch can delete
 * them without reading them. Only the compactor changes entries below the floor, so this stays true for
 * the life of the process as long as it is updated with every durable batch (and not with a failed one).
 */
export class SingleOpEntries {
  /** Not a Map: this one lives as long as the process and changes with every batch (revision-table.ts). */
  private readonly sizes = new RevisionTable()

  constructor(private readonly max = SINGLE_OP_ENTRIES_MAX) {}

  get(rev: number): number | undefined {
    return this.sizes.get(rev)
  }

  /** Forgets everything (after a batch planned on top of these sizes failed to land). */
  clear(): void {
    this.sizes.clear()
  }

  apply(updates: ReadonlyMap<number, number>): void {
    for (const [rev, bytes] of updates) {
      if (bytes < 0) this.sizes.delete(rev)
      else if (this.sizes.size < this.max || this.sizes.has(rev)) this.sizes.set(rev, bytes)
    }
  }
}

/** Keys at most this many in LiveRevisions: beyond it, a key's kv record is read every time it is needed. */
const LIVE_REVISIONS_MAX = 1 << 18

/** What LiveRevisions holds for a key that had no live version when its kv record was read. */
const NO_LIVE_VERSION = -1

/**
 * What one compaction job has read of its keys' kv records: the modRevision of each key's live version
 * (NO_LIVE_VERSION if it had none), so that a scanned put at r is known to be live iff that is r, without
 * reading the kv record again. An answer stays safe to act on for the rest of the job, however stale:
 *  - a modRevision only grows, so a put below it stays superseded, and a key with no live version can only
 *    get one above the job's target (every revision the job scans was committed before it started);
 *  - a live version replaced after the read was copied into hist by the writer first (the floor is the
 *    job's target for the whole job; see the header), so taking its op out of its entry loses nothing.
 * Not across jobs: a version at or above one job's target that is replaced before the next job raises the
 * floor is not copied, so an answer from the earlier job would make the next one drop it. One per job.
 */
export class LiveRevisions {
  private readonly revs = new Map<string, number>()

  constructor(private readonly max = LIVE_REVISIONS_MAX) {}

  /** The scanned put of `id` at `rev` is live: true / false, or undefined when the kv record is not read yet. */
  isLive(id: string, rev: number): boolean | undefined {
    const known = this.revs.get(id)
    return known === undefined ? undefined : known === rev
  }

  /** Remembers a key's kv record as read (undefined: the key had none); says whether the put at `rev` is live. */
  learn(id: string, record: Buffer | undefined, rev: number): boolean {
    const modRevision = record === undefined ? NO_LIVE_VERSION : kvRecordModRevision(record)
    if (this.revs.size < this.max || this.revs.has(id)) this.revs.set(id, modRevision)
    return modRevision === rev
  }
}

/** A log entry a batch touches: scanned by it, or holding a version it supersedes. */
interface Touched {
  rev: number
  timestamp: number
  /** The ops still in the entry; undefined when not read (known to hold exactly one op). */
  ops: OpRef[] | undefined
  /** The entry as read, decoded in full only if it is rewritten. */
  raw: Buffer | undefined
  count: number
  /** Encoded size before this batch. */
  bytes: number
  scanned: boolean
  changed: boolean
}

export interface ScannedEntry {
  rev: number
  bytes: number
  timestamp: number
}

export interface BatchPlan {
  /** The log and hist writes. */
  ops: BatchOp[]
  /** The scanned entries as the segment table counted them (they leave it). */
  scanned: ScannedEntry[]
  /** Change in the entries left below the scan position and their encoded bytes. */
  kept: { entries: number; bytes: number }
  removedVersions: number
  /** For SingleOpEntries.apply once the batch is durable: rev → size, or -1 when no longer single-op. */
  singles: Map<number, number>
  /** The entries it changes, as it leaves them: rev → the rewritten entry, or null when deleted. */
  entries: Map<number, Buffer | null>
}

/** A span of log entries, decoded, with the read of which of its puts are live under way. */
export interface ScannedRows {
  entries: Array<{ rev: number; timestamp: number; ops: OpRef[]; raw: Buffer }>
  /** The scanned puts that are still their key's live version (see liveVersions). */
  live: Promise<Array<{ rev: number; key: Buffer }>>
}

/**
 * Decodes `rows` (log entries in revision order, all below the target) and starts reading which of their
 * puts are live. Safe to start before the previous batch is written (the compactor does, to overlap the
 * read with that write): batches never change kv records, and a kv record replaced after this read was
 * copied by the writer first (see above), so an answer that was true when read stays safe to act on.
 */
export function scanRows(db: Db, rows: ReadonlyArray<[Buffer, Buffer]>, known: LiveRevisions): ScannedRows {
  const entries = rows.map(([k, v]) => {
    const { timestamp, ops } = decodeEntryRefs(v)
    return { rev: logKeyRevision(k), timestamp, ops, raw: v }
  })
  const live = liveVersions(db, entries, known)
  live.catch(() => undefined) // awaited by planBatch; not an unhandled rejection meanwhile
  return { entries, live }
}

/**
 * Log entries whose content a batch can have without reading the database: as batches planned but not
 * yet durable leave them (null: deleted), or as read ahead. undefined: read it.
 */
export interface EntrySource {
  entry(rev: number): Buffer | null | undefined
}

/**
 * Plans the batch for scanned rows. The entries outside the rows that hold superseded versions come from
 * `known`, from `source` or are read here. When batches before this one are planned but not yet durable
 * (the scan plans ahead of the writes), `known` must include their plans' `singles` and `source` every
 * entry they change: an entry is then read from the database only if none of them changes it.
 */
export async function planBatch(db: Db, scanned: ScannedRows, known: SingleOpEntries, source?: EntrySource): Promise<BatchPlan> {
  const touched = new Map<number, Touched>()
  const scannedOps = scanned.entries
  for (const { rev, timestamp, ops, raw } of scannedOps) {
    touched.set(rev, { rev, timestamp, ops: [...ops], raw, count: ops.length, bytes: raw.length, scanned: true, changed: false })
  }
  const [live] = await Promise.all([scanned.live, loadSuperseded(db, scannedOps, touched, known, source)])

  const plan: BatchPlan = {
    ops: [],
    scanned: [],
    kept: { entries: 0, bytes: 0 },
    removedVersions: 0,
    singles: new Map(),
    entries: new Map(),
  }
  for (const { rev, ops } of scannedOps) {
    for (const op of ops) {
      if (op.prevRevision > 0) {
        plan.ops.push({ type: 'del', key: histKey(op.key, op.prevRevision) })
        plan.removedVersions++
        takeOut(touched.get(op.prevRevision), op.key)
      }
      if (op.kind === OP_DELETE) {
        plan.ops.push({ type: 'del', key: histKey(op.key, rev) })
        plan.removedVersions++
        takeOut(touched.get(rev), op.key)
      }
    }
  }
  // The key's live version: its value is in the kv record too (readers find it there).
  for (const { rev, key } of live) takeOut(touched.get(rev), key)
  for (const t of touched.values()) settle(t, plan)
  return plan
}

/**
 * The scanned puts that are their key's live version: only the last put of a key in the batch can be,
 * and it is if the kv record's modRevision is its revision. The kv records the job has not read yet are
 * read in one getMany for the batch.
 */
async function liveVersions(
  db: Db,
  scanned: ReadonlyArray<{ rev: number; ops: OpRef[] }>,
  known: LiveRevisions,
): Promise<Array<{ rev: number; key: Buffer }>> {
  const last = new Map<string, { rev: number; key: Buffer }>()
  for (const { rev, ops } of scanned) {
    for (const op of ops) {
      const id = keyId(op.key)
      if (op.kind === OP_PUT) last.set(id, { rev, key: op.key })
      else last.delete(id)
    }
  }
  const live: Array<{ rev: number; key: Buffer }> = []
  const unread: Array<{ id: string; rev: number; key: Buffer }> = []
  for (const [id, c] of last) {
    const isLive = known.isLive(id, c.rev)
    if (isLive === undefined) unread.push({ id, ...c })
    else if (isLive) live.push(c)
  }
  if (unread.length === 0) return live
  const records = await db.getMany(unread.map((c) => kvKey(c.key)))
  for (let i = 0; i < unread.length; i++) {
    const { id, rev, key } = unread[i]
    if (known.learn(id, records[i], rev)) live.push({ rev, key })
  }
  return live
}

/** Adds to `touched` the entries outside `rows` that hold a superseded version: remembered, given or read. */
async function loadSuperseded(
  db: Db,
  scanned: ReadonlyArray<{ ops: OpRef[] }>,
  touched: Map<number, Touched>,
  known: SingleOpEntries,
  source: EntrySource | undefined,
): Promise<void> {
  const unknown: number[] = []
  const load = (rev: number, v: Buffer | null | undefined) => {
    // Gone already (deleted by a batch before, or a database compacted before entries were kept, which
    // copied survivors into hist).
    if (v == null) return void touched.delete(rev)
    const { timestamp, ops } = decodeEntryRefs(v)
    touched.set(rev, { rev, timestamp, ops, raw: v, count: ops.length, bytes: v.length, scanned: false, changed: false })
  }
  for (const { ops } of scanned) {
    for (const op of ops) {
      const p = op.prevRevision
      if (p === 0 || touched.has(p)) continue
      const bytes = known.get(p)
      const given = bytes === undefined ? source?.entry(p) : undefined
      if (bytes !== undefined) {
        touched.set(p, { rev: p, timestamp: 0, ops: undefined, raw: undefined, count: 1, bytes, scanned: false, changed: false })
      } else if (given !== undefined) {
        load(p, given)
      } else {
        // Marked so that a second op naming p is not read twice; filled in (or dropped) below.
        touched.set(p, { rev: p, timestamp: 0, ops: [], raw: undefined, count: 0, bytes: 0, scanned: false, changed: false })
        unknown.push(p)
      }
    }
  }
  if (unknown.length === 0) return
  const values = await db.getMany(unknown.map(logKey))
  for (let i = 0; i < unknown.length; i++) load(unknown[i], values[i])
}

/** Takes the op on `key` out of the entry; nothing if the entry or the op is gone already. */
function takeOut(t: Touched | undefined, key: Buffer): void {
  if (t === undefined || t.count === 0) return
  if (t.ops === undefined) {
    t.count = 0
  } else {
    const i = t.ops.findIndex((op) => op.key.equals(key))
    if (i < 0) return
    t.ops.splice(i, 1)
    t.count--
  }
  t.changed = true
}

/** The entry's write (delete or rewrite), and its share of the accounting. */
function settle(t: Touched, plan: BatchPlan): void {
  let bytes = t.bytes
  if (t.changed && t.count === 0) {
    plan.ops.push({ type: 'del', key: logKey(t.rev) })
    plan.entries.set(t.rev, null)
    bytes = 0
  } else if (t.changed) {
    // Only an entry that was read can lose an op and keep others (one known single-op has none left).
    const left = new Set((t.ops ?? []).map((op) => keyId(op.key)))
    const old = t.raw === undefined ? undefined : decodeEntry(t.raw)
    const ops = old === undefined ? [] : old.ops.filter((op) => left.has(keyId(op.key)))
    const value = encodeEntry(
      old?.author === undefined ? { timestamp: t.timestamp, ops } : { timestamp: t.timestamp, ops, author: old.author },
    )
    plan.ops.push({ type: 'put', key: logKey(t.rev), value })
    plan.entries.set(t.rev, value)
    bytes = value.length
  }
  if (t.scanned) {
    plan.scanned.push({ rev: t.rev, bytes: t.bytes, timestamp: t.timestamp })
    if (t.count > 0) plan.kept.entries++
    plan.kept.bytes += bytes
  } else {
    if (t.count === 0) plan.kept.entries--
    plan.kept.bytes += bytes - t.bytes
  }
  plan.singles.set(t.rev, t.count === 1 ? bytes : -1)
}
