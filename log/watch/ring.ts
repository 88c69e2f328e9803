/**
 * The ring: the most recent committed log entries, in memory, for watchers that start a little in the
 * past or fall a little behind (the common case after a reconnect) — they catch up without reading the log.
 *
 * Invariant: the ring holds a contiguous run of revisions [first, last], ending at the last revision the
 * hub has seen. Revisions are gapless, so entry `rev` sits at a fixed offset from the oldest one.
 *
 *   capacity 4, after revisions 5..10:   slots [9][10][7][8]   head → 7 (oldest), first = 7, last = 10
 */
import type { LogEntry } from '../types.js'

export class Ring {
  private readonly slots: Array<LogEntry | undefined>
  /** Slot of the oldest entry. */
  private head = 0
  private count = 0
  /** Revision of the oldest entry; when empty, the revision the next pushed entry must have. */
  private firstRevision: number

  /** `nextRevision`: the revision of the first entry that will be pushed (the current revision + 1). */
  constructor(
    readonly capacity: number,
    nextRevision: number,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 0) throw new TypeError(`ring capacity must be an integer >= 0, got ${capacity}`)
    this.slots = new Array<LogEntry | undefined>(capacity)
    this.firstRevision = nextRevision
  }

  get size(): number {
    return this.count
  }

  /** The oldest revision held (meaningful when size > 0). */
  get first(): number {
    return this.firstRevision
  }

  /** The newest revision held, or first - 1 when empty. */
  get last(): number {
    return this.firstRevision + this.count - 1
  }

  /** Whether the entry at `revision` is held. */
  covers(revision: number): boolean {
    return this.count > 0 && revision >= this.firstRevision && revision <= this.last
  }

  /** Appends the next revision, evicting the oldest when full. Throws on a revision out of sequence. */
  push(entry: LogEntry): void {
    if (entry.revision !== this.last + 1) {
      throw new TypeError(`ring: expected revision ${this.last + 1}, got ${entry.revision}`)
    }
    if (this.capacity === 0) {
      this.firstRevision = entry.revision + 1
      return
    }
    if (this.count < this.capacity) {
      this.slots[(this.head + this.count) % this.capacity] = entry
      this.count++
      return
    }
    this.slots[this.head] = entry
    this.head = (this.head + 1) % this.capacity
    this.firstRevision++
  }

  /** The entry at `revision`; the caller checks covers() first. */
  get(revision: number): LogEntry {
    if (!this.covers(revision)) throw new TypeError(`ring: revision ${revision} is not held (${this.firstRevision}..${this.last})`)
    return this.slots[(this.head + (revision - this.firstRevision)) % this.capacity] as LogEntry
  }

  /** Forgets everything; the next entry pushed must have `nextRevision`. */
  reset(nextRevision: number): void {
    this.slots.fill(undefined)
    this.head = 0
    this.count = 0
    this.firstRevision = nextRevision
  }
}
