/**
 * The counts a paged list asks for again. A Range with a limit reports `count`, the keys in the whole range
 * (as etcd does), and kube-apiserver lists in pages: each page is the range from the key after the last
 * page's last key, at the first page's revision. Counting that rest anew on every page costs the rest of
 * the prefix per page (a list of n keys in pages of p: n²/2p keys counted); but at one revision the state
 * does not change, so the rest after a page is the page's count less the keys it returned. Each page leaves
 * that count here for the page that follows it, and a list costs one count and its pages.
 *
 * Only for reads of committed state at their revision (the engine's Range), never for a transaction's view
 * of writes not yet committed. At most `capacity` counts are kept, the least recently used dropped first.
 */
import type { Bounds } from './keys.js'

export class PageCounts {
  private readonly counts = new Map<string, number>()

  constructor(private readonly capacity: number) {}

  /** The count of `bounds` at `revision`, if the page before it left one. */
  get(revision: number, bounds: Bounds): number | undefined {
    const key = countKey(revision, bounds.start, bounds.end)
    const count = this.counts.get(key)
    if (count !== undefined) {
      this.counts.delete(key)
      this.counts.set(key, count)
    }
    return count
  }

  /**
   * After an ascending page of `bounds` at `revision` returned `returned` keys, the last `lastKey`, out of
   * `count`: the count of the range from the key after `lastKey`, where the next page starts.
   */
  afterPage(revision: number, bounds: Bounds, lastKey: Buffer, count: number, returned: number): void {
    if (this.capacity === 0) return
    const next = Buffer.concat([lastKey, ZERO])
    const key = countKey(revision, next, bounds.end)
    this.counts.delete(key)
    this.counts.set(key, count - returned)
    if (this.counts.size > this.capacity) this.counts.delete(this.counts.keys().next().value!)
  }
}

const ZERO = Buffer.from([0])

function countKey(revision: number, start: Buffer, end: Buffer | undefined): string {
  // The start's length first: no two (start, end) pairs make the same string.
  return `${revision}:${start.length}:${start.toString('latin1')}${end === undefined ? '' : `:${end.toString('latin1')}`}`
}
