/**
 * A StateView is the key space as of one revision: what range reads, compares and txn ops evaluate on.
 *
 * Implementations:
 * - LatestView (latest-view.ts): the kv table through a LevelDB snapshot.
 * - HistView (hist-view.ts): a past revision through the hist index (+ the log).
 * - OverlayView (here): uncommitted writes of the group being evaluated by the writer, layered over a base.
 */
import { inBounds, keyId, type Bounds } from './keys.js'
import type { KeyValue, KvSink } from './types.js'

export interface ScanOptions {
  /** At most this many kvs, 0 = all. */
  limit?: number
  /** Descending key order. */
  reverse?: boolean
  /** Leave values empty (metadata is still read). */
  keysOnly?: boolean
}

export interface StateView {
  get(key: Buffer): KeyValue | undefined | Promise<KeyValue | undefined>
  /** The live kvs of a (non-single) range, in key order. */
  scan(bounds: Bounds, options?: ScanOptions): Promise<KeyValue[]>
  /** The number of live keys in a range. */
  count(bounds: Bounds): Promise<number>
  /** scan, handing each kv to `sink` as it is read (a view that has no cheaper way leaves this out). */
  scanInto?(bounds: Bounds, options: ScanOptions, sink: KvSink): Promise<void>
}

/** All live kvs addressed by bounds (a single key or a range), in key order. */
export async function readBounds(view: StateView, bounds: Bounds): Promise<KeyValue[]> {
  if (!bounds.single) return view.scan(bounds)
  const kv = await view.get(bounds.start)
  return kv === undefined ? [] : [kv]
}

/**
 * Writes not yet committed, over a base view. The writer stacks one per transaction on one per group, so a
 * failed transaction is dropped without touching the group, and a later transaction sees earlier ones.
 * A null entry is a delete.
 */
export class OverlayView implements StateView {
  private readonly changes = new Map<string, KeyValue | null>()

  constructor(
    private readonly base: StateView,
    private readonly parent?: OverlayView,
  ) {}

  /** A layer over this one (same base), for one transaction of a group. */
  child(): OverlayView {
    return new OverlayView(this.base, this)
  }

  get size(): number {
    return this.changes.size
  }

  set(key: Buffer, kv: KeyValue | null): void {
    this.changes.set(keyId(key), kv)
  }

  get(key: Buffer): KeyValue | undefined | Promise<KeyValue | undefined> {
    const own = this.changes.get(keyId(key))
    if (own !== undefined) return own ?? undefined
    return this.parent !== undefined ? this.parent.get(key) : this.base.get(key)
  }

  /**
   * This overlay's own changes over another base, without its parent: how the writer layers a group that
   * is still being written over the newest committed snapshot (chains never grow past one layer).
   */
  withBase(base: StateView): OverlayView {
    const layer = new OverlayView(base)
    for (const [id, kv] of this.changes) layer.changes.set(id, kv)
    return layer
  }

  /** Moves this overlay's changes into its parent (the transaction committed into the group). */
  mergeIntoParent(): void {
    if (this.parent === undefined) throw new TypeError('OverlayView.mergeIntoParent: no parent')
    for (const [id, kv] of this.changes) this.parent.changes.set(id, kv)
    this.changes.clear()
  }

  /** Changes in bounds along the chain, the nearest overlay winning. */
  private changesIn(bounds: Bounds): Map<string, { key: Buffer; kv: KeyValue | null }> {
    const out = this.parent !== undefined ? this.parent.changesIn(bounds) : new Map()
    for (const [id, kv] of this.changes) {
      const key = Buffer.from(id, 'latin1')
      if (inBounds(bounds, key)) out.set(id, { key, kv })
    }
    return out
  }

  async scan(bounds: Bounds, options: ScanOptions = {}): Promise<KeyValue[]> {
    const changes = this.changesIn(bounds)
    if (changes.size === 0) return this.base.scan(bounds, options)
    // Deletes in the overlay can hide at most `changes.size` base kvs: read that many more.
    const limit = options.limit ? options.limit + changes.size : 0
    const merged = new Map<string, KeyValue>()
    for (const kv of await this.base.scan(bounds, { ...options, limit })) merged.set(keyId(kv.key), kv)
    for (const [id, { kv }] of changes) {
      if (kv === null) merged.delete(id)
      else merged.set(id, options.keysOnly ? { ...kv, value: Buffer.alloc(0) } : kv)
    }
    const sorted = [...merged.values()].sort((a, b) => Buffer.compare(a.key, b.key))
    if (options.reverse) sorted.reverse()
    return options.limit ? sorted.slice(0, options.limit) : sorted
  }

  async count(bounds: Bounds): Promise<number> {
    let n = await this.base.count(bounds)
    for (const { key, kv } of this.changesIn(bounds).values()) {
      const existed = (await this.base.get(key)) !== undefined
      if (existed && kv === null) n--
      else if (!existed && kv !== null) n++
    }
    return n
  }
}
