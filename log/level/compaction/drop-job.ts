/**
 * Compaction by dropping the log's table files (compactionMethod "drop"; compactor.ts has the job around
 * it). Kafka removes history by deleting whole segment files; etcd walks its key index and deletes
 * revision by revision. This does the first for the log, where the values are, and the second for the
 * small hist index:
 *
 *   1. walk the hist index (key order, each key's versions newest first). Per key, versions at or above
 *      the target R stay; the newest below R is the survivor and every older one is deleted. A survivor
 *      that is a tombstone is deleted too; one still in the log (IN_LOG) stays as it is when it is the
 *      key's live version (no version at or above R came before it: its kv record holds it), else it is
 *      copied into its hist record (MATERIALIZED) from its log entry. A version written after the walk
 *      read the key does not change this: the writer copies a live version below the floor into hist
 *      when it replaces it (writer.ts). Afterwards no read at or above R needs a log entry below R.
 *   2. wait until no reader holds a LevelDB snapshot from before the walk's last write (read-views.ts):
 *      a dropped file is gone for every snapshot, and such a reader may still follow a survivor's IN_LOG
 *      record into its entry, or export the whole database.
 *   3. drop every table file whose keys are all log entries below R (dropFilesInRange: one edit of
 *      LevelDB's version, nothing read or rewritten), then delete what is left of that range: entries
 *      in the memtables and in the files that straddle the range's ends.
 *
 *   compact(6)
 *   hist  a@9   a@7   a@5   a@2  │ b@5(del)  b@3  │ d@4  ...
 *         stay  stay  copy  drop │ drop 2nd  drop │ stay (d's live version: its kv record holds it)
 *         (b's surviving tombstone goes after b@3, so that no read sees b@3 come back)
 *         (a@5 is a's survivor and a was written since: its value is copied into its hist record)
 *   log   [1 2 3 4 5 | 6 7 8 ...]   table files wholly below 6 are dropped, the rest of 1..5 deleted
 *
 * The walk's cost follows the number of versions, in records of a few dozen bytes, not the log's bytes;
 * the log's bulk goes without being read and without a deletion marker per entry. The walk runs in the
 * compaction thread (compact-thread.ts) unless compactionThread is off: its reads and their garbage stay
 * off the writers' event loop, which only writes each batch it is sent.
 *
 * Crash safety: each walk batch writes its hist changes together with the walk's position (the last hist
 * key it looked at); the walk resumes after it. A key's survivor is decided once its first version below
 * R has been looked at, so the position alone says whether the next versions of that key are older ones
 * (it is below R) or not yet. A survivor that is a tombstone is deleted after the key's older versions
 * (before, a read would find the older put): when the walk stops within such a key, the tombstone stays
 * until the next compaction, harmless (the key reads as deleted either way). Dropping and deleting below
 * R are repeated from the start if interrupted. A write that replaces a survivor that is its key's live
 * version copies it into hist first (writer.ts), as with the scan: the floor is R for the whole job.
 */
import { HIST_END, HIST_START, histKeyRevision, histPrefixUserKey, LOG_START, logKey, sameHistKey } from '../keyspace.js'
import { dutyPause } from './compact-scan.js'
import { dropFilesInRange, type DroppedFiles } from '../io/drop-files.js'
import { ITERATOR_STEP_BYTES, type Db } from '../latest-view.js'
import { decodeEntry, encodeMaterialized, HIST_IN_LOG, HIST_TOMBSTONE } from '../records.js'
import { opKeyValue, OP_PUT } from '../../ops.js'
import type { BatchOp } from '../segments.js'

/** Hist records read per iterator step. */
const READ_STEP = 256
/** Log keys left after the drop, deleted per batch. */
const LEFTOVER_KEYS = 4096

export interface DropJobDeps {
  db: Db
  /** Hist records changed per batch (compactor.ts: compactionBatchSize). */
  batchRecords(): number
  /** Pause after each batch so that the job runs at most its duty of the time (compact-scan.ts). */
  pauseFactor: number
  /** Checked after each batch: true ends the walk there (the job stays scheduled). */
  stopping(): boolean
  /** Makes a batch durable together with the walk's position (the last hist key looked at). */
  write(ops: BatchOp[], position: Buffer | undefined): Promise<void>
  /** Makes deletions of log keys durable (after the drop). */
  deleteKeys(keys: Buffer[]): Promise<void>
  /** Resolves once no reader holds a view older than the last write, or the compactor stops. */
  readersDone(): Promise<void>
}

/** What the hist walk needs (it runs in the compaction thread too, where nothing else is). */
export type WalkDeps = Pick<DropJobDeps, 'db' | 'batchRecords' | 'pauseFactor' | 'stopping' | 'write'>

export interface WalkResult {
  removedVersions: number
  finished: boolean
}

interface PendingSurvivor {
  histKey: Buffer
  key: Buffer
  rev: number
}

/** Step 1: the hist walk below `to`, from after `position` (a hist key) or from the start. */
export async function walkHist(deps: WalkDeps, to: number, position: Buffer | undefined): Promise<WalkResult> {
  const { db } = deps
  const result: WalkResult = { removedVersions: 0, finished: false }
  let ops: BatchOp[] = []
  let pending: PendingSurvivor[] = []
  // A hist key of the user key being walked, and whether its survivor has been looked at.
  let current: Buffer | undefined
  let decided = false
  // The current key's survivor when it is a tombstone: deleted after the key's older versions, so that no
  // reader sees an older put come back in between.
  let tombstone: Buffer | undefined
  const dropTombstone = () => {
    if (tombstone === undefined) return
    ops.push({ type: 'del', key: tombstone })
    result.removedVersions++
    tombstone = undefined
  }
  // Whether a version of the current key at or above R was seen: then its survivor is not its live version.
  let newer = false
  if (position !== undefined) {
    current = position
    decided = histKeyRevision(position) < to
    newer = !decided
  }
  let last = position
  // The position the last batch made durable: the walk's end writes one only if it moved since.
  let written = position

  const flush = async () => {
    await materialize(db, pending, ops)
    pending = []
    const t0 = performance.now()
    await deps.write(ops, last)
    written = last
    ops = []
    await dutyPause(t0, deps.pauseFactor)
  }

  // One iterator per batch, read a step at a time (each step is a turn of the event loop, so writers are
  // not held up by a batch's worth of rows at once), closed before the batch is written and the pause.
  let end = false
  while (!end) {
    const it = db.iterator({
      ...(last === undefined ? { gte: HIST_START } : { gt: last }),
      lt: HIST_END,
      highWaterMarkBytes: ITERATOR_STEP_BYTES,
    })
    try {
      while (ops.length + pending.length < deps.batchRecords()) {
        const rows = await it.nextv(READ_STEP)
        if (rows.length === 0) {
          end = true
          break
        }
        for (const [k, v] of rows) {
          last = k
          const rev = histKeyRevision(k)
          if (current === undefined || !sameHistKey(k, current)) {
            dropTombstone()
            current = k
            decided = false
            newer = false
          }
          if (rev >= to) {
            newer = true
            continue
          }
          if (decided) {
            ops.push({ type: 'del', key: k })
            result.removedVersions++
          } else {
            decided = true
            if (v[0] === HIST_TOMBSTONE) {
              tombstone = k
            } else if (v[0] === HIST_IN_LOG && newer) {
              pending.push({ histKey: k, key: histPrefixUserKey(k.subarray(0, k.length - 8)), rev })
            }
          }
        }
      }
    } finally {
      await it.close()
    }
    if (end) break
    await flush()
    if (deps.stopping()) return result
  }
  dropTombstone()
  if (ops.length > 0 || pending.length > 0 || last !== written) await flush()
  result.finished = true
  return result
}

/**
 * Adds to `ops` the copies of survivors that are no longer their key's live version (the walk saw a newer
 * one) into their hist records, from their log entries.
 */
async function materialize(db: Db, replaced: PendingSurvivor[], ops: BatchOp[]): Promise<void> {
  if (replaced.length === 0) return
  const entries = await db.getMany(replaced.map((s) => logKey(s.rev)))
  for (let i = 0; i < replaced.length; i++) {
    const bytes = entries[i]
    // Not in the log: copied into hist already, or by a kvlog before this method. Nothing to do.
    if (bytes === undefined) continue
    const s = replaced[i]
    const op = decodeEntry(bytes).ops.find((o) => o.key.equals(s.key))
    if (op === undefined || op.kind !== OP_PUT) continue
    ops.push({ type: 'put', key: s.histKey, value: encodeMaterialized(opKeyValue(op, s.rev)) })
  }
}

/** Steps 2 and 3: removes every log entry below `to`, dropping whole table files where it can. */
export async function dropLogBelow(deps: DropJobDeps, to: number): Promise<DroppedFiles> {
  const { db } = deps
  await deps.readersDone()
  if (deps.stopping()) return { files: 0, bytes: 0 }
  const end = logKey(to)
  const dropped = await dropFilesInRange(db, LOG_START, end)
  while (!deps.stopping()) {
    const keys = await db.keys({ gte: LOG_START, lt: end, limit: Math.min(LEFTOVER_KEYS, Math.max(1, deps.batchRecords())) }).all()
    if (keys.length === 0) break
    const t0 = performance.now()
    await deps.deleteKeys(keys)
    await dutyPause(t0, deps.pauseFactor)
  }
  return dropped
}
