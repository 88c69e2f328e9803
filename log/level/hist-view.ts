/**
 * The key space as of a past revision R, read from the hist index: for each key, its newest version at or
 * below R (absent if that is a tombstone). See keyspace.ts for why one forward seek finds it.
 */
import { type Bounds } from '../keys.js'
import { histBounds, histKeyAfter, histKeyFromPrefix, histKeyPrefix, histPrefixUserKey, parseHistKey } from './keyspace.js'
import type { Db, Snapshot } from './latest-view.js'
import { HIST_TOMBSTONE } from './records.js'
import type { ScanOptions, StateView } from '../state-view.js'
import type { KeyValue } from '../types.js'
import { VersionReader } from './version-reader.js'

type Visit = (key: Buffer, rev: number, record: Buffer) => boolean

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

  /** Calls visit(key, rev, record) for each key live at the revision, in key order, until it returns true. */
  private async visitLive(bounds: Bounds, visit: Visit): Promise<void> {
    const { gte, lt } = histBounds(bounds)
    const R = this.revision
    const it = this.db.iterator({ gte, lt, snapshot: this.snapshot })
    try {
      let entry = await it.next()
      while (entry !== undefined) {
        let { prefix, rev } = parseHistKey(entry[0])
        if (rev > R) {
          // Newest first: jump to the newest version at or below R, if the key has one.
          it.seek(histKeyFromPrefix(prefix, R))
          entry = await it.next()
          if (entry === undefined) break
          const landed = parseHistKey(entry[0])
          if (!landed.prefix.equals(prefix)) continue
          rev = landed.rev
          prefix = landed.prefix
        }
        if (entry[1][0] !== HIST_TOMBSTONE && visit(histPrefixUserKey(prefix), rev, entry[1])) break
        it.seek(histKeyAfter(prefix))
        entry = await it.next()
      }
    } finally {
      await it.close()
    }
  }
}
