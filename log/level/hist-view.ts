/**
 * The key space as of a past revision R, read from the hist index: for each key, its newest version at or
 * below R (absent if that is a tombstone). See keyspace.ts for why one forward seek finds it.
 */
import { type Bounds } from '../keys.js'
import {
  histBounds,
  histKeyAfter,
  histKeyFromPrefix,
  histKeyPrefix,
  histKeyRevision,
  histPrefixUserKey,
  parseHistKey,
  sameHistKey,
} from './keyspace.js'
import { ITERATOR_STEP_BYTES, type Db, type Snapshot } from './latest-view.js'
import { HIST_TOMBSTONE } from './records.js'
import type { ScanOptions, StateView } from '../state-view.js'
import type { KeyValue } from '../types.js'
import { VersionReader } from './version-reader.js'

type Visit = (key: Buffer, rev: number, record: Buffer) => boolean

/**
 * Hist entries per iterator step of a range read (ITERATOR_STEP_BYTES bounds a step's bytes too). A step
 * after a seek is small and the steps grow while no seek cuts them short, so a range of keys with long
 * histories does not read far ahead of each seek for nothing.
 */
const MAX_STEP = 1024
const STEP_AFTER_SEEK = 8

/**
 * Versions of one key a range read steps over before it seeks past the rest instead: a seek is a round
 * trip through LevelDB's thread pool of its own, stepping over a version costs a few comparisons.
 */
const SKIP_BEFORE_SEEK = 4

export class HistView implements StateView {
  private readonly versions: VersionReader

  constructor(
    private readonly db: Db,
    private readonly snapshot: Snapshot,
    readonly revision: number,
  ) {
    this.versions = new VersionReader(db, snapshot)
  }

  async get(key: Buffer): Promise<KeyValue | undefined> {
    const prefix = histKeyPrefix(key)
    const found = await this.db
      .iterator({
        gte: histKeyFromPrefix(prefix, this.revision),
        lt: histKeyAfter(prefix),
        limit: 1,
        snapshot: this.snapshot,
      })
      .all()
    if (found.length === 0) return undefined
    const [k, record] = found[0]
    return this.versions.resolve(key, parseHistKey(k).rev, record)
  }

  async scan(bounds: Bounds, options: ScanOptions = {}): Promise<KeyValue[]> {
    const out: KeyValue[] = []
    // Key order comes from the index; a descending read collects everything and turns it around.
    const stopAt = options.reverse ? 0 : (options.limit ?? 0)
    await this.visitLive(bounds, (key, rev, record) => {
      const kv = this.versions.resolve(key, rev, record, options.keysOnly)
      if (kv !== undefined) out.push(kv)
      return stopAt > 0 && out.length >= stopAt
    })
    if (options.reverse) {
      out.reverse()
      if (options.limit) out.length = Math.min(out.length, options.limit)
    }
    return out
  }

  async count(bounds: Bounds): Promise<number> {
    let n = 0
    await this.visitLive(bounds, () => {
      n++
      return false
    })
    return n
  }

  /**
   * Calls visit(key, rev, record) for each key live at the revision, in key order, until it returns true.
   * The hist index holds each key's versions newest first: the read steps through them in batches, takes
   * the first version at or below the revision, and seeks only past a key with many versions to skip.
   */
  private async visitLive(bounds: Bounds, visit: Visit): Promise<void> {
    const { gte, lt } = histBounds(bounds)
    const R = this.revision
    const it = this.db.iterator({ gte, lt, snapshot: this.snapshot, highWaterMarkBytes: ITERATOR_STEP_BYTES })
    /** A hist key of the key being read; whether its version at R was found (or it has none); versions skipped. */
    let current: Buffer | undefined
    let decided = false
    let skipped = 0
    let size = MAX_STEP
    try {
      read: while (true) {
        const step = await it.nextv(size)
        size = Math.min(MAX_STEP, size * 4)
        if (step.length === 0) break
        for (const [k, record] of step) {
          if (current === undefined || !sameHistKey(current, k)) {
            current = k
            decided = false
            skipped = 0
          }
          const rev = histKeyRevision(k)
          if (decided || rev > R) {
            if (++skipped < SKIP_BEFORE_SEEK) continue
            const { prefix } = parseHistKey(k)
            it.seek(decided ? histKeyAfter(prefix) : histKeyFromPrefix(prefix, R))
            skipped = 0
            size = STEP_AFTER_SEEK
            continue read
          }
          decided = true
          if (record[0] !== HIST_TOMBSTONE && visit(histPrefixUserKey(parseHistKey(k).prefix), rev, record)) break read
        }
      }
    } finally {
      await it.close()
    }
  }
}
