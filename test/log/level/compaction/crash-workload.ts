/**
 * The write workload of the compaction crash test, shared by the parent (test/log/level/compaction/crash.test.ts,
 * which writes the initial history in-process) and the child (crash-child.ts, which writes while it
 * compacts until it is killed).
 *
 * Each writer owns its keys (`w<id>/k<n>`), so it knows which of them exist and an in-flight write of one
 * writer never touches another writer's keys: every revision's ops identify the write that made it.
 * Ops: a put, a delete of a key that exists (so it always writes), or a txn of two puts.
 */
import type { Log } from '../../../../log/backend.js'
import type { Op } from '../../../../log/types.js'

/** One write as [key, value] pairs; value null = delete. */
export type WireOps = Array<[string, string | null]>

export const KEYS_PER_WRITER = 6
export const WRITERS = 3
/** Writes the crash child has acknowledged (all writers together) before it starts compacting. */
export const HEAD_START_ACKS = 9
/** How the parent and the child open the log. */
export const CRASH_LOG_OPTIONS = { fsync: 'always', compactionBatchRevisions: 50, segmentMaxEntries: 100 } as const

export function writerPrefix(writer: number): string {
  return `w${writer}/`
}

export class KeyWriter {
  private n = 0

  constructor(
    readonly id: number,
    /** The writer's keys that exist now. */
    readonly exists: Set<string>,
    private readonly random: () => number,
    private readonly tag: string,
  ) {}

  /** Reads which of the writer's keys exist (after a restart). */
  static async resume(log: Log, id: number, random: () => number, tag: string): Promise<KeyWriter> {
    const prefix = writerPrefix(id)
    const end = Buffer.from(prefix)
    end[end.length - 1]++
    const r = await log.range(prefix, { rangeEnd: end, keysOnly: true })
    return new KeyWriter(id, new Set(r.kvs.map((kv) => kv.key.toString())), random, tag)
  }

  /** The next write: its ops, and which sequence number it has (for intents and acks). */
  next(): { seq: number; ops: WireOps } {
    const seq = this.n++
    const key = (): string => `${writerPrefix(this.id)}k${Math.floor(this.random() * KEYS_PER_WRITER)}`
    const value = `${this.tag}.${this.id}.${seq}`
    const roll = this.random()
    if (roll < 0.2 && this.exists.size > 0) {
      const existing = [...this.exists]
      return { seq, ops: [[existing[Math.floor(this.random() * existing.length)], null]] }
    }
    if (roll < 0.4) {
      const a = key()
      let b = key()
      while (b === a) b = key()
      return {
        seq,
        ops: [
          [a, `${value}.a`],
          [b, `${value}.b`],
        ],
      }
    }
    return { seq, ops: [[key(), value]] }
  }

  /** Writes the ops as one transaction; returns its revision. */
  async write(log: Log, ops: WireOps): Promise<number> {
    const success: Op[] = ops.map(([key, value]): Op => (value === null ? { type: 'delete', key } : { type: 'put', key, value }))
    const r = await log.txn({ success })
    if (!r.wrote) throw new Error(`write of ${JSON.stringify(ops)} wrote nothing`)
    for (const [key, value] of ops) {
      if (value === null) this.exists.delete(key)
      else this.exists.add(key)
    }
    return r.revision
  }
}
