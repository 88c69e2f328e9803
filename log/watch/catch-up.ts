/**
 * Catch-up: brings an UNSYNCED watcher from its next revision to the head of the log, then hands it back to
 * the hub to join the synced set — with no gap and no duplicate at the seam.
 *
 * One loop per watcher, each step:
 *
 *   next < compact revision           → canceled COMPACTED (floor = compact revision)
 *   next > hub revision               → join (synchronously: nothing can commit in between)
 *   ring covers next                  → deliver ring entries next..hub revision, synchronously, in steps of
 *                                       catchUpBatch revisions; then (same tick) join
 *   otherwise                         → await log.history(next .. min(next + catchUpBatch - 1, hub revision))
 *                                       deliver it, next = end of the read + 1, and loop
 *
 * The seam (the classic bug): commits keep landing while a history read is in flight, and the watcher is
 * not in the synced set, so it does not get them pushed. They are not lost: after the read, the loop
 * starts over from the revision after the read, and takes them from the ring (or, if more than ringSize
 * landed meanwhile, from another read). The watcher joins only in the same synchronous step that took
 * everything up to the hub's revision, so no commit falls between the last catch-up batch and the first push.
 */
import { compacted, isKvlogError, KvlogError } from '../errors.js'
import type { LogEntry } from '../types.js'
import type { Ring } from './ring.js'
import type { WatchBatch, WatchSource } from './types.js'
import type { Watcher } from './watcher.js'

/** What catch-up needs from the hub. */
export interface CatchUpHost {
  /** The last committed revision the hub has seen (the ring ends there). */
  revision(): number
  /** The watcher is at the head: make it SYNCED. */
  join(w: Watcher): void
  /** Hands a batch to the sink (w.next already set past it); false when the watcher paused or was canceled. */
  deliver(w: Watcher, batch: WatchBatch): boolean
  end(w: Watcher, err: KvlogError): void
}

/** Ring selections kept for other watchers catching up over the same revisions (cleared when full). */
const SHARED_SELECTIONS = 256

export class CatchUp {
  /**
   * Selections from the ring by watcher selection key and revision span. Watchers that resume together
   * from the same revision with the same spec (an apiserver's reconnect storm, or a benchmark's) walk the
   * ring in the same steps: the first builds each batch, the others share it, and so do the front doors'
   * encodings of it (they cache per batch object). Ring entries never change, so an entry never goes stale.
   */
  private readonly shared = new Map<string, WatchBatch>()

  constructor(
    private readonly log: WatchSource,
    private readonly ring: Ring,
    private readonly batchRevisions: number,
    private readonly host: CatchUpHost,
  ) {}

  /**
   * Makes the watcher UNSYNCED and starts its loop on a microtask (so a caller such as hub.watch() returns
   * before the sink hears anything). A loop already running for it just carries on.
   */
  start(w: Watcher): void {
    w.state = 'unsynced'
    if (w.catchingUp) return
    w.catchingUp = true
    queueMicrotask(() => void this.run(w))
  }

  private async run(w: Watcher): Promise<void> {
    try {
      while (w.state === 'unsynced') {
        const floor = this.log.compactRevision
        const head = this.host.revision()
        if (w.next < floor) return this.host.end(w, compacted(w.next, floor, head))
        if (w.next > head) return this.host.join(w)
        if (this.ring.covers(w.next)) {
          this.fromRing(w)
          continue
        }
        await this.fromLog(w, Math.min(head, w.next + this.batchRevisions - 1))
      }
    } catch (err) {
      // A bug, not a sink error (those are caught in deliver): end the watch loudly rather than stall it.
      if (w.state !== 'canceled') this.host.end(w, internal(w, err))
    } finally {
      w.catchingUp = false
    }
  }

  /** Synchronously delivers ring entries from w.next to the hub's revision (stops early if the sink backs up). */
  private fromRing(w: Watcher): void {
    const head = this.host.revision()
    while (w.state === 'unsynced' && w.next <= head) {
      const to = Math.min(head, w.next + this.batchRevisions - 1)
      const key = `${w.selectionKey}|${w.next}|${to}`
      let batch = this.shared.get(key)
      if (batch === undefined) {
        const entries: LogEntry[] = []
        for (let rev = w.next; rev <= to; rev++) entries.push(this.ring.get(rev))
        batch = w.select(entries, w.next)
        if (this.shared.size >= SHARED_SELECTIONS) this.shared.clear()
        this.shared.set(key, batch)
      }
      if (!this.deliverBatch(w, batch, to)) return
    }
  }

  /** Reads next..to from the log and delivers it. */
  private async fromLog(w: Watcher, to: number): Promise<void> {
    const from = w.next
    let entries: LogEntry[]
    try {
      const result = await this.log.history(w.spec.key, { rangeEnd: w.spec.rangeEnd, fromRevision: from, toRevision: to, prevKv: true })
      entries = result.entries
    } catch (err) {
      if (w.state !== 'unsynced') return // canceled (or the hub closed) while reading
      if (isKvlogError(err, 'COMPACTED')) {
        // Compaction overtook the read: report the floor as it is now (at least what the log said).
        const floor = Math.max(this.log.compactRevision, Number(err.details.compactRevision ?? 0))
        return this.host.end(w, compacted(from, floor, this.host.revision()))
      }
      return this.host.end(w, isKvlogError(err) ? err : internal(w, err))
    }
    if (w.state !== 'unsynced' || w.next !== from) return
    this.send(w, entries, to)
  }

  /** Delivers the watcher's share of entries up to `to` (if any) and moves it past `to`. */
  private send(w: Watcher, entries: readonly LogEntry[], to: number): boolean {
    return this.deliverBatch(w, w.select(entries, w.next), to)
  }

  private deliverBatch(w: Watcher, batch: WatchBatch, to: number): boolean {
    w.next = to + 1
    if (batch.events.length === 0) return true
    return this.host.deliver(w, batch)
  }
}

function internal(w: Watcher, err: unknown): KvlogError {
  return new KvlogError('INTERNAL', `watch ${w.id}: catch-up failed: ${String(err)}`)
}
