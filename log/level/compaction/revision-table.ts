/**
 * A map from revisions to small non-negative integers, in two typed arrays (open addressing, linear
 * probing, deletion by backward shift: no tombstones, so no rehash however many entries come and go).
 *
 * Why not a Map: the compactor keeps one for the life of the process and sets and deletes hundreds of
 * entries per batch. A long-lived Map sits in V8's old generation, and V8 allocates the table of an
 * old-generation Map there too each time it rehashes, which churn makes it do every few batches: under
 * bench:compaction's load that was half of what reached the old generation during a compaction (a sampling
 * heap profile of what minor GCs left), and the mark-compacts it caused sat in the writers' worst stalls. These
 * arrays are allocated only when the table grows.
 */
const EMPTY = 0
const MIN_CAPACITY = 1024

export class RevisionTable {
  /** Revision per slot; EMPTY (revision 0 is never written) marks a free slot. */
  private keys = new Float64Array(MIN_CAPACITY)
  private values = new Int32Array(MIN_CAPACITY)
  private mask = MIN_CAPACITY - 1
  /** 32 - log2(capacity): home() keeps the top bits of the hash. */
  private shift = 32 - Math.log2(MIN_CAPACITY)
  private count = 0

  get size(): number {
    return this.count
  }

  get(rev: number): number | undefined {
    const i = this.find(rev)
    return i < 0 ? undefined : this.values[i]
  }

  has(rev: number): boolean {
    return this.find(rev) >= 0
  }

  /** `value`: 0 to 2^31 - 1. */
  set(rev: number, value: number): void {
    if (!(rev > 0)) throw new RangeError(`RevisionTable: revision must be > 0, got ${rev}`)
    let i = this.home(rev)
    while (this.keys[i] !== EMPTY) {
      if (this.keys[i] === rev) {
        this.values[i] = value
        return
      }
      i = (i + 1) & this.mask
    }
    this.keys[i] = rev
    this.values[i] = value
    this.count++
    if (this.count * 2 > this.keys.length) this.grow()
  }

  delete(rev: number): boolean {
    let i = this.find(rev)
    if (i < 0) return false
    this.count--
    // Backward shift: move each following entry of the probe run into the hole unless its home slot lies
    // cyclically after the hole (then it is still reachable from its home without crossing the hole).
    for (let j = (i + 1) & this.mask; this.keys[j] !== EMPTY; j = (j + 1) & this.mask) {
      const home = this.home(this.keys[j])
      const staysPut = i <= j ? home > i && home <= j : home > i || home <= j
      if (staysPut) continue
      this.keys[i] = this.keys[j]
      this.values[i] = this.values[j]
      i = j
    }
    this.keys[i] = EMPTY
    return true
  }

  clear(): void {
    this.keys = new Float64Array(MIN_CAPACITY)
    this.values = new Int32Array(MIN_CAPACITY)
    this.mask = MIN_CAPACITY - 1
    this.shift = 32 - Math.log2(MIN_CAPACITY)
    this.count = 0
  }

  private find(rev: number): number {
    for (let i = this.home(rev); this.keys[i] !== EMPTY; i = (i + 1) & this.mask) if (this.keys[i] === rev) return i
    return -1
  }

  /** Fibonacci hashing (the top bits of the product), with the high word mixed in. */
  private home(rev: number): number {
    const mixed = (rev >>> 0) ^ Math.imul((rev / 4294967296) >>> 0, 0x85ebca6b)
    return Math.imul(mixed, 0x9e3779b1) >>> this.shift
  }

  private grow(): void {
    const { keys, values } = this
    this.keys = new Float64Array(keys.length * 2)
    this.values = new Int32Array(keys.length * 2)
    this.mask = this.keys.length - 1
    this.shift--
    this.count = 0
    for (let i = 0; i < keys.length; i++) if (keys[i] !== EMPTY) this.set(keys[i], values[i])
  }
}
