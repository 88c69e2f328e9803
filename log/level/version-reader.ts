/**
 * Finds the stored version of a key at a revision, wherever its value lives (records.ts): in the log entry
 * of that revision (hist record IN_LOG; compaction keeps the entry of a surviving version below the floor
 * while the key has been written since), else in the key's kv record (IN_LOG, but compaction took the op
 * out of its entry because the version is still live), or in the hist record itself (MATERIALIZED).
 * Decoded log entries are cached for the reader's lifetime (one request).
 */
import { keyId } from '../keys.js'
import { histKey, kvKey, logKey } from './keyspace.js'
import { syncGetOptions, type Db, type Snapshot } from './latest-view.js'
import { decodeEntry, decodeKvRecord, HIST_IN_LOG, HIST_MATERIALIZED, kvRecordModRevision, type LoggedEntry } from './records.js'
import { opKeyValue, type LoggedOp } from '../ops.js'
import type { KeyValue } from '../types.js'

/** Above this many ops an entry gets a key index, so big delete-range entries are not scanned per key. */
const INDEX_OPS = 16

interface CachedEntry {
  entry: LoggedEntry
  byKey?: Map<string, LoggedOp>
}

export class VersionReader {
  private readonly entries = new Map<number, CachedEntry | null>()
  private readonly getOptions: ReturnType<typeof syncGetOptions>

  constructor(
    private readonly db: Db,
    snapshot: Snapshot,
  ) {
    this.getOptions = syncGetOptions(snapshot)
  }

  /** The decoded log entry at `rev`, or undefined if it is not in the log (compacted). */
  entry(rev: number): LoggedEntry | undefined {
    return this.cached(rev)?.entry
  }

  private cached(rev: number): CachedEntry | undefined {
    let c = this.entries.get(rev)
    if (c === undefined) {
      const bytes = this.db.getSync(logKey(rev), this.getOptions)
      c = bytes === undefined ? null : { entry: decodeEntry(bytes) }
      this.entries.set(rev, c)
    }
    return c ?? undefined
  }

  /** The kv a hist record describes, undefined for a tombstone or a dangling pointer. */
  resolve(key: Buffer, rev: number, record: Buffer, keysOnly = false): KeyValue | undefined {
    if (record[0] === HIST_MATERIALIZED) return decodeKvRecord(key, record, 1, keysOnly)
    if (record[0] !== HIST_IN_LOG) return undefined
    const op = this.opFor(key, rev)
    if (op === undefined) return this.liveVersion(key, rev, keysOnly)
    const kv = opKeyValue(op, rev)
    if (keysOnly) kv.value = Buffer.alloc(0)
    return kv
  }

  /** The version of `key` written at exactly `rev` (for prevKv), undefined if none survives. */
  versionAt(key: Buffer, rev: number): KeyValue | undefined {
    const record = this.db.getSync(histKey(key, rev), this.getOptions)
    return record === undefined ? undefined : this.resolve(key, rev, record)
  }

  /** The key's kv record, if it is the version written at `rev`. */
  private liveVersion(key: Buffer, rev: number, keysOnly: boolean): KeyValue | undefined {
    const record = this.db.getSync(kvKey(key), this.getOptions)
    if (record === undefined || kvRecordModRevision(record) !== rev) return undefined
    return decodeKvRecord(key, record, 0, keysOnly)
  }

  private opFor(key: Buffer, rev: number): LoggedOp | undefined {
    const c = this.cached(rev)
    if (c === undefined) return undefined
    const ops = c.entry.ops
    if (ops.length <= INDEX_OPS) return ops.find((op) => op.key.equals(key))
    if (c.byKey === undefined) {
      c.byKey = new Map()
      for (const op of ops) c.byKey.set(keyId(op.key), op)
    }
    return c.byKey.get(keyId(key))
  }
}
