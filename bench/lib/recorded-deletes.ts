/**
 * A compaction's LevelDB deletions without the compaction (bench:compaction --during deletes): what the
 * writers pay for the deletion markers alone, with no scan, no reads and no compaction thread.
 *
 * Read once, before anything is timed: for every op in the log entries below `to` that superseded a
 * version, the two keys compacting it deletes, as compact-batch.ts plans them for single-op entries:
 * that version's hist record and its log entry. bench:compaction's load writes only single-op puts, so
 * these are the compaction's deletions but for the log entries of each key's live version below the target
 * (one per key: the kv record holds that version) and the job's progress record per batch. The keys are
 * packed in one buffer, not kept as a million Buffers in V8's old generation, where they would slow
 * every collection while the writers are timed.
 *
 * Replayed through the log's writer queue, so that they ride in the writers' groups as compaction
 * batches do, `revisionsPerBatch` versions at a time, paced to `revisionsPerSec`.
 */
import { histKey, logKey, logKeyRevision } from '../../log/level/keyspace.js'
import type { Db } from '../../log/level/latest-view.js'
import { decodeEntryRefs } from '../../log/level/records.js'
import type { BatchOp } from '../../log/level/segments.js'
import { grown } from './grown.js'

export interface RecordOptions {
  /** Called every 10,000 revisions read. */
  progress?(rev: number): void
  /** Bytes and keys room for at the start (it grows as needed). */
  capacity?: { bytes: number; keys: number }
}

export class RecordedDeletes {
  private bytes: Buffer
  /** Where each key ends in `bytes`: keys 2i and 2i+1 are version i's hist record and log entry. */
  private ends: Uint32Array
  private keys = 0

  private constructor(capacity: { bytes: number; keys: number }) {
    this.bytes = Buffer.allocUnsafe(capacity.bytes)
    this.ends = new Uint32Array(capacity.keys)
  }

  /** Versions recorded (two deleted keys each). */
  get versions(): number {
    return this.keys / 2
  }

  /** Records the deletions that compacting the log below `to` makes (read in one pass over the log). */
  static async read(
    db: Db,
    to: number,
    { progress, capacity = { bytes: 1 << 24, keys: 1 << 16 } }: RecordOptions = {},
  ): Promise<RecordedDeletes> {
    const recorded = new RecordedDeletes(capacity)
    for await (const [k, v] of db.iterator({ gte: logKey(1), lt: logKey(to) })) {
      for (const op of decodeEntryRefs(v).ops) {
        if (op.prevRevision === 0) continue
        recorded.add(histKey(op.key, op.prevRevision))
        recorded.add(logKey(op.prevRevision))
      }
      const rev = logKeyRevision(k)
      if (rev % 10_000 === 0) progress?.(rev)
    }
    return recorded
  }

  /** The deletions of versions [from, from + count) as batch ops (views into the packed keys). */
  ops(from: number, count: number): BatchOp[] {
    const out: BatchOp[] = []
    const end = Math.min(this.keys, 2 * (from + count))
    for (let i = 2 * from; i < end; i++) {
      out.push({ type: 'del', key: this.bytes.subarray(i === 0 ? 0 : this.ends[i - 1], this.ends[i]) })
    }
    return out
  }

  private add(key: Buffer): void {
    const start = this.keys === 0 ? 0 : this.ends[this.keys - 1]
    if (start + key.length > this.bytes.length) this.bytes = grown(this.bytes, start + key.length)
    if (this.keys === this.ends.length) this.ends = grown(this.ends)
    key.copy(this.bytes, start)
    this.ends[this.keys++] = start + key.length
  }
}

export interface ReplayPace {
  revisionsPerBatch: number
  revisionsPerSec: number
}

/**
 * Writes the recorded deletions through `submit` (the writer's queue: one batch at a time, as the
 * compactor sends them), each batch due at `revisionsPerBatch / revisionsPerSec` s after the one before;
 * a batch that lands late is followed at once. Resolves with the versions deleted.
 */
export async function replayDeletes(
  deletes: RecordedDeletes,
  submit: (build: () => BatchOp[]) => Promise<void>,
  pace: ReplayPace,
): Promise<number> {
  const started = performance.now()
  let done = 0
  while (done < deletes.versions) {
    const ops = deletes.ops(done, pace.revisionsPerBatch)
    await submit(() => ops)
    done = Math.min(deletes.versions, done + pace.revisionsPerBatch)
    const due = started + (done / pace.revisionsPerSec) * 1000 - performance.now()
    if (due > 0) await new Promise((resolve) => setTimeout(resolve, due))
  }
  return done
}
