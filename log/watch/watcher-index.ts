/**
 * The index of synced watchers: which watchers does an event on key K concern?
 *
 * Watchers are grouped by identical bounds, and inside a group by identical options (a "view": prevKv and
 * filters), so the hub builds each batch once per view and hands the same batch to every watcher in it.
 *
 *   keys      Map  keyId(key)    → group      exact-key watchers: one lookup per event
 *   prefixes  Map  keyId(prefix) → group      [p, prefixEnd(p)): one lookup per distinct prefix length
 *                                             in use, with K's first `length` bytes (lengths ≤ |K| only)
 *   ranges    Map  start/end id  → group      everything else ([a, b) that is not a prefix, [a, ∞), all
 *                                             keys): scanned; there are few in practice
 *
 * So an event costs one map lookup, plus one per distinct prefix length, plus one compare per odd range —
 * never a visit to a watcher it does not concern.
 */
import { inBounds, keyId, prefixEnd, type Bounds } from '../keys.js'

export type GroupKind = 'key' | 'prefix' | 'range'

/** Watchers with the same bounds and the same options. */
export class WatchView<T> {
  readonly members = new Set<T>()

  constructor(
    readonly group: WatchGroup<T>,
    readonly id: string,
    readonly prevKv: boolean,
    readonly noPut: boolean,
    readonly noDelete: boolean,
  ) {}
}

/** Watchers with the same bounds. */
export class WatchGroup<T> {
  readonly views = new Map<string, WatchView<T>>()
  size = 0

  constructor(
    readonly id: string,
    readonly kind: GroupKind,
    readonly bounds: Bounds,
  ) {}
}

export interface ViewOptions {
  prevKv: boolean
  noPut: boolean
  noDelete: boolean
}

export class WatcherIndex<T> {
  private readonly keys = new Map<string, WatchGroup<T>>()
  private readonly prefixes = new Map<string, WatchGroup<T>>()
  private readonly ranges = new Map<string, WatchGroup<T>>()
  /** Distinct lengths of the prefixes in use, ascending, with how many prefix groups have each. */
  private prefixLengths: number[] = []
  private readonly lengthCounts = new Map<number, number>()
  private count = 0

  /** Watchers in the index. */
  get size(): number {
    return this.count
  }

  /** Adds a member; returns its view (pass it to remove()). */
  add(member: T, bounds: Bounds, options: ViewOptions): WatchView<T> {
    const { kind, id } = classify(bounds)
    const table = this.table(kind)
    let group = table.get(id)
    if (group === undefined) {
      group = new WatchGroup<T>(id, kind, bounds)
      table.set(id, group)
      if (kind === 'prefix') this.countLength(bounds.start.length, +1)
    }
    const viewId = `${options.prevKv ? 1 : 0}${options.noPut ? 1 : 0}${options.noDelete ? 1 : 0}`
    let view = group.views.get(viewId)
    if (view === undefined) {
      view = new WatchView<T>(group, viewId, options.prevKv, options.noPut, options.noDelete)
      group.views.set(viewId, view)
    }
    if (!view.members.has(member)) {
      view.members.add(member)
      group.size++
      this.count++
    }
    return view
  }

  /** Removes a member from its view, dropping the view and the group when they empty. */
  remove(member: T, view: WatchView<T>): void {
    if (!view.members.delete(member)) return
    const group = view.group
    group.size--
    this.count--
    if (view.members.size === 0) group.views.delete(view.id)
    if (group.size === 0) {
      this.table(group.kind).delete(group.id)
      if (group.kind === 'prefix') this.countLength(group.bounds.start.length, -1)
    }
  }

  /** Appends to `out` every group whose bounds contain `key` (each at most once). */
  collect(key: Buffer, out: Array<WatchGroup<T>>): void {
    if (this.count === 0) return
    const id = keyId(key)
    const exact = this.keys.get(id)
    if (exact !== undefined) out.push(exact)
    for (const length of this.prefixLengths) {
      if (length > id.length) break
      const group = this.prefixes.get(length === id.length ? id : id.slice(0, length))
      if (group !== undefined) out.push(group)
    }
    for (const group of this.ranges.values()) {
      if (inBounds(group.bounds, key)) out.push(group)
    }
  }

  /** Every member, for shutdown. */
  *members(): IterableIterator<T> {
    for (const table of [this.keys, this.prefixes, this.ranges]) {
      for (const group of table.values()) {
        for (const view of group.views.values()) yield* view.members
      }
    }
  }

  get groups(): number {
    return this.keys.size + this.prefixes.size + this.ranges.size
  }

  private table(kind: GroupKind): Map<string, WatchGroup<T>> {
    return kind === 'key' ? this.keys : kind === 'prefix' ? this.prefixes : this.ranges
  }

  private countLength(length: number, delta: number): void {
    const n = (this.lengthCounts.get(length) ?? 0) + delta
    if (n > 0) {
      this.lengthCounts.set(length, n)
    } else {
      this.lengthCounts.delete(length)
    }
    if (n === 0 || (n === 1 && delta > 0)) this.prefixLengths = [...this.lengthCounts.keys()].sort((a, b) => a - b)
  }
}

/**
 * Which table bounds belong in, and their id there. keyId strings only hold chars 0x00–0xff, so
 * U+0100 / U+0101 cannot occur inside them and make the range ids unambiguous.
 */
export function classify(bounds: Bounds): { kind: GroupKind; id: string } {
  if (bounds.single) return { kind: 'key', id: keyId(bounds.start) }
  if (bounds.end === undefined) return { kind: 'range', id: `${keyId(bounds.start)}\u0101` }
  // A non-empty start whose prefixEnd is `end`: exactly the keys that begin with `start`.
  if (bounds.start.length > 0 && prefixEnd(bounds.start).equals(bounds.end)) {
    return { kind: 'prefix', id: keyId(bounds.start) }
  }
  return { kind: 'range', id: `${keyId(bounds.start)}\u0100${keyId(bounds.end)}` }
}
