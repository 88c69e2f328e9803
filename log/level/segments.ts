/**
 * The segment table: the log cut into spans of revisions (docs/architecture.md, "Segments"), rolled over after
 * segmentMaxEntries entries or segmentMaxBytes encoded bytes, like Kafka's segment files. Time and size
 * retention (compaction/) work segment by segment.
 *
 * Each segment is one meta record, written in the same LevelDB batch as the entries it counts, so the
 * table is always consistent with the log, also after a crash.
 */
import { Packr } from 'msgpackr'
import { metaKey } from './keyspace.js'
import type { Db } from './latest-view.js'
import type { Segment } from '../types.js'

export type BatchOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer }

/**
 * Writes ops as one atomic LevelDB batch. classic-level's chained batch is much faster than its array
 * form for the same records (it builds the batch natively instead of converting an array of objects).
 */
export function writeBatch(db: Db, ops: readonly BatchOp[], sync: boolean): Promise<void> {
  const batch = db.batch()
  for (const op of ops) {
    if (op.type === 'put') batch.put(op.key, op.value)
    else batch.del(op.key)
  }
  return batch.write({ sync })
}

const SEGMENT_PREFIX = 'seg/'
const packr = new Packr({ useRecords: false })

function segmentKey(id: number): Buffer {
  return metaKey(SEGMENT_PREFIX + id.toString().padStart(12, '0'))
}

export class SegmentTable {
  private readonly segments: Segment[] = []

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  static async load(db: Db, maxEntries: number, maxBytes: number): Promise<SegmentTable> {
    const table = new SegmentTable(maxEntries, maxBytes)
    const gte = metaKey(SEGMENT_PREFIX)
    const lt = metaKey(SEGMENT_PREFIX.slice(0, -1) + String.fromCharCode(SEGMENT_PREFIX.charCodeAt(3) + 1))
    for await (const [, value] of db.iterator({ gte, lt })) table.segments.push(packr.unpack(value) as Segment)
    return table
  }

  list(): Segment[] {
    return this.segments.map((s) => ({ ...s }))
  }

  /** Counts one committed entry, returning the meta writes for the batch (call once per entry, in order). */
  append(revision: number, timestamp: number, bytes: number, out: Map<number, Segment>): void {
    let last = this.segments[this.segments.length - 1]
    if (last === undefined || last.entries >= this.maxEntries || last.bytes >= this.maxBytes) {
      last = {
        id: last === undefined ? 1 : last.id + 1,
        firstRevision: revision,
        lastRevision: revision,
        firstTimestamp: timestamp,
        lastTimestamp: timestamp,
        entries: 0,
        bytes: 0,
      }
      this.segments.push(last)
    }
    last.lastRevision = revision
    last.lastTimestamp = timestamp
    last.entries++
    last.bytes += bytes
    out.set(last.id, last)
  }

  /**
   * Removes entries below `upTo` from the table: whole segments are dropped, the first remaining one is
   * trimmed. `removed` says how many entries and bytes left each segment and the last removed timestamp.
   */
  trim(upTo: number, removed: Map<number, { entries: number; bytes: number; lastTimestamp: number }>, out: BatchOp[]): void {
    while (this.segments.length > 0) {
      const first = this.segments[0]
      const gone = removed.get(first.id)
      if (first.lastRevision < upTo) {
        this.segments.shift()
        out.push({ type: 'del', key: segmentKey(first.id) })
        continue
      }
      if (gone !== undefined || first.firstRevision < upTo) {
        first.firstRevision = Math.max(first.firstRevision, upTo)
        if (gone !== undefined) {
          first.entries = Math.max(0, first.entries - gone.entries)
          first.bytes = Math.max(0, first.bytes - gone.bytes)
          // The next entry is at least as new as the last removed one: a lower bound for the first timestamp.
          first.firstTimestamp = Math.max(first.firstTimestamp, gone.lastTimestamp)
        }
        out.push(SegmentTable.write(first))
      }
      break
    }
  }

  /** Which segment holds `revision` (for accounting removed entries), undefined if none. */
  segmentOf(revision: number): Segment | undefined {
    for (const s of this.segments) if (revision >= s.firstRevision && revision <= s.lastRevision) return s
    return undefined
  }

  static write(segment: Segment): BatchOp {
    return { type: 'put', key: segmentKey(segment.id), value: packr.pack(segment) }
  }
}
