/**
 * The latest state: the kv table, read through the LevelDB snapshot of the last committed batch, so every
 * read is labelled with exactly the revision it saw.
 */
import type { ClassicLevel } from './classic-level.js'
import { type Bounds } from '../keys.js'
import { kvBounds, kvKey, kvKeyUserKey } from './keyspace.js'
import { countRecords, eachRecord, type RecordVisit } from './read-step.js'
import { decodeKvRecord, sinkKvRecord } from './records.js'
import type { ScanOptions, StateView } from '../state-view.js'
import type { KeyValue, KvSink } from '../types.js'

export type Db = ClassicLevel<Buffer, Buffer>
export type Snapshot = ReturnType<Db['snapshot']>

/**
 * Most records one iterator step may return where the addon has no synchronous step (read-step.ts). Each
 * step is a round trip through LevelDB's thread pool, and a read waits for every one in turn: a page (limit
 * + 1 records, or a whole range without a limit) is read in as few steps as ITERATOR_STEP_BYTES allows. The
 * iterator's own limit stops a limited read early.
 */
const STEP = 4096

/**
 * How many bytes an iterator step may read in one native call (classic-level's highWaterMarkBytes). Its
 * default, 16 KiB, cuts a step of 256 kv records of 1 KiB into 16 round trips through the thread pool, and
 * the compactor's reads of a batch of log entries then took longer than the batch write they overlap.
 * 1 MiB lets a step be one call (docs/benchmarks.md has the measurements).
 */
export const ITERATOR_STEP_BYTES = 1 << 20

/**
 * getSync options naming the encodings explicitly: abstract-level clones the options object on every call
 * unless they match the database's formats, a noticeable share of a put's CPU time.
 */
export function syncGetOptions(snapshot: Snapshot): {
  readonly snapshot: Snapshot
  readonly keyEncoding: 'buffer'
  readonly valueEncoding: 'buffer'
} {
  return { snapshot, keyEncoding: 'buffer', valueEncoding: 'buffer' } as const
}

export class LatestView implements StateView {
  private readonly getOptions: ReturnType<typeof syncGetOptions>

  constructor(
    private readonly db: Db,
    private readonly snapshot: Snapshot,
  ) {
    this.getOptions = syncGetOptions(snapshot)
  }

  get(key: Buffer): KeyValue | undefined {
    const record = this.db.getSync(kvKey(key), this.getOptions)
    return record === undefined ? undefined : decodeKvRecord(key, record)
  }

  async scan(bounds: Bounds, options: ScanOptions = {}): Promise<KeyValue[]> {
    const out: KeyValue[] = []
    await this.each(bounds, options, (k, v) => out.push(decodeKvRecord(kvKeyUserKey(k), v, 0, options.keysOnly)))
    return out
  }

  scanInto(bounds: Bounds, options: ScanOptions, sink: KvSink): Promise<void> {
    const keysOnly = options.keysOnly === true
    return this.each(bounds, options, (k, v) => sinkKvRecord(kvKeyUserKey(k), v, keysOnly, sink))
  }

  /** Calls `visit` with each kv table entry (table key, record) of the range, in the scan's order. */
  private async each(bounds: Bounds, options: ScanOptions, visit: RecordVisit): Promise<void> {
    const { gte, lt } = kvBounds(bounds)
    const limit = options.limit ?? 0
    const it = this.db.iterator({
      gte,
      lt,
      reverse: options.reverse ?? false,
      limit: limit > 0 ? limit : -1,
      snapshot: this.snapshot,
      highWaterMarkBytes: ITERATOR_STEP_BYTES,
    })
    try {
      await eachRecord(it, STEP, visit)
    } finally {
      await it.close()
    }
  }

  async count(bounds: Bounds): Promise<number> {
    const { gte, lt } = kvBounds(bounds)
    const it = this.db.iterator({ gte, lt, values: false, snapshot: this.snapshot, highWaterMarkBytes: ITERATOR_STEP_BYTES })
    try {
      return await countRecords(it, 1024)
    } finally {
      await it.close()
    }
  }
}
