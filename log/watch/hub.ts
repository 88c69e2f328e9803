/**
 * The watch hub (docs/architecture.md, "How a watch flows"): turns the log's commits into per-watcher event streams.
 *
 * - Synced watchers sit in a WatcherIndex and get each commit's matching events synchronously, inside the
 *   log's commit listener, one events() call per commit batch (whole revisions, never split).
 * - A watcher starting at or below the current revision catches up first (catch-up.ts), then joins.
 * - Backpressure: a sink returning false is paused (out of the index, its next revision remembered) and
 *   catches up again on resume(). Nothing is dropped; a watcher that fell below the compact revision is
 *   canceled with COMPACTED instead.
 *
 * Two revisions are tracked. `revision` is the last commit seen (the ring ends there). `delivered` is the
 * last revision every synced watcher has been given; it trails `revision` only while a commit is being
 * dispatched, which matters if a sink calls back into the hub (progress must not claim a revision some
 * synced watcher has not received yet).
 *
 * Who may call what: the hub's and handles' methods from anywhere, including from inside sink callbacks.
 * The hub never lets an exception reach the log's commit path.
 *
 * The rest of log/watch/: catch-up.ts (a watcher from a past revision to the head: ring, else log.history),
 * watcher.ts (one watch: spec, state machine, handle), watcher-index.ts (synced watchers by exact key,
 * prefix and range), ring.ts (the most recent committed entries), types.ts (specs, sinks, handles, stats).
 */
import { compacted, KvlogError } from '../errors.js'
import type { Author, Event, LogEntry } from '../types.js'
import { CatchUp } from './catch-up.js'
import { Ring } from './ring.js'
import type { WatchBatch, WatchHandle, WatchHubOptions, WatchHubStats, WatchSink, WatchSource, WatchSpec } from './types.js'
import { normalizeSpec, Watcher, withoutPrevKv, type WatcherHost } from './watcher.js'
import { WatcherIndex, type WatchGroup, type WatchView } from './watcher-index.js'

/** A view's share of one commit batch: its events, and the revision of each. */
interface Pending {
  events: Event[]
  revisions: number[]
  times: number[]
  authors: Array<Author | undefined>
}

export class WatchHub implements WatcherHost {
  private readonly ring: Ring
  private readonly index = new WatcherIndex<Watcher>()
  private readonly watchers = new Map<number, Watcher>()
  private readonly paused = new Set<Watcher>()
  private readonly catchUp: CatchUp
  private readonly unsubscribe: () => void
  private current: number
  private delivered: number
  /** The compact revision when paused watchers were last checked against it. */
  private checkedFloor: number
  private nextId = 1
  private closed = false

  constructor(
    private readonly log: WatchSource,
    options: WatchHubOptions,
  ) {
    const { ringSize, catchUpBatch } = options
    if (!Number.isSafeInteger(ringSize) || ringSize < 0) throw new TypeError(`watch hub: ringSize must be an integer >= 0, got ${ringSize}`)
    if (!Number.isSafeInteger(catchUpBatch) || catchUpBatch < 1) {
      throw new TypeError(`watch hub: catchUpBatch must be an integer >= 1, got ${catchUpBatch}`)
    }
    // Synchronously: no commit can slip between reading the revision and subscribing.
    this.current = log.revision
    this.delivered = log.revision
    this.checkedFloor = log.compactRevision
    this.ring = new Ring(ringSize, this.current + 1)
    this.catchUp = new CatchUp(log, this.ring, catchUpBatch, {
      revision: () => this.current,
      join: (w) => this.join(w),
      deliver: (w, batch) => this.deliver(w, batch, w.next),
      end: (w, err) => this.end(w, err),
    })
    this.unsubscribe = log.subscribe((entries) => this.onCommit(entries))
  }

  /** The last committed revision the hub has seen. */
  get revision(): number {
    return this.current
  }

  get deliveredRevision(): number {
    return this.delivered
  }

  /**
   * Starts a watch. Throws INVALID_ARGUMENT / EMPTY_KEY for a bad spec, CLOSED after close(), TypeError for
   * a sink without events()/canceled(). Never calls the sink before returning: a watch that must catch up
   * (or be canceled as COMPACTED) does so from a microtask.
   */
  watch(spec: WatchSpec, sink: WatchSink): WatchHandle {
    if (this.closed) throw new KvlogError('CLOSED', 'the watch hub is closed')
    if (sink === null || typeof sink !== 'object' || typeof sink.events !== 'function' || typeof sink.canceled !== 'function') {
      throw new TypeError('watch: sink must have events() and canceled()')
    }
    const s = normalizeSpec(spec)
    const start = s.startRevision === 0 ? this.current + 1 : s.startRevision
    const w = new Watcher(this.nextId++, s, sink, this, start)
    this.watchers.set(w.id, w)
    // From now, or a future revision: nothing to catch up, the next commits are its events.
    if (start > this.current) this.join(w)
    else this.catchUp.start(w)
    return w
  }

  /** progress(revision) to every synced watcher: each has been given every matching event up to it. */
  progressAll(): void {
    if (this.closed) return
    for (const w of [...this.index.members()]) {
      if (w.state === 'synced') this.sendProgress(w)
    }
  }

  stats(): WatchHubStats {
    const watchers = this.watchers.size
    return {
      watchers,
      synced: this.index.size,
      unsynced: watchers - this.index.size,
      paused: this.paused.size,
      ringEntries: this.ring.size,
      revision: this.current,
    }
  }

  /** Unsubscribes from the log and cancels every watch with CLOSED. Idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.unsubscribe()
    const err = new KvlogError('CLOSED', 'the watch hub is closed')
    for (const w of [...this.watchers.values()]) this.end(w, err)
    this.ring.reset(this.current + 1)
  }

  // -------------------------------------------------------------------------------------------------------
  // Handle callbacks (WatcherHost)

  cancelWatcher(w: Watcher): void {
    this.end(w, undefined)
  }

  resumeWatcher(w: Watcher): void {
    if (w.state !== 'paused' || this.closed) return
    this.paused.delete(w)
    // Catching up checks the compact revision first: a watcher that fell below it is canceled there.
    this.catchUp.start(w)
  }

  requestProgress(w: Watcher): void {
    if (w.state === 'canceled') return
    if (w.state === 'synced') this.sendProgress(w)
    else w.progressRequested = true
  }

  // -------------------------------------------------------------------------------------------------------
  // Commits

  private onCommit(entries: readonly LogEntry[]): void {
    if (this.closed) return
    try {
      this.commit(entries)
    } catch (err) {
      // Only a bug in the hub gets here (sink errors are caught per watcher). Keep the writer going.
      process.emitWarning(`kvlog: watch hub failed to dispatch a commit: ${String(err)}`)
    }
  }

  private commit(entries: readonly LogEntry[]): void {
    let i = 0
    while (i < entries.length && entries[i].revision <= this.current) i++ // already seen
    if (i === entries.length) return
    const fresh = i === 0 ? entries : entries.slice(i)
    if (!contiguous(fresh, this.current + 1)) return this.recoverGap(fresh)
    for (const entry of fresh) this.ring.push(entry)
    this.current = fresh[fresh.length - 1].revision
    this.dispatch(fresh)
    this.delivered = this.current
    this.checkPausedFloor()
  }

  /** Gives each synced watcher the events of a commit batch it wants, one call per watcher. */
  private dispatch(entries: readonly LogEntry[]): void {
    if (this.index.size === 0) return
    // Collect per view: each view's batch is built once and shared by its watchers.
    const pending = new Map<WatchView<Watcher>, Pending>()
    const groups: Array<WatchGroup<Watcher>> = []
    for (const entry of entries) {
      for (const event of entry.events) {
        groups.length = 0
        this.index.collect(event.kv.key, groups)
        let bare: Event | undefined
        for (const group of groups) {
          for (const view of group.views.values()) {
            if (event.type === 'PUT' ? view.noPut : view.noDelete) continue
            let p = pending.get(view)
            if (p === undefined) pending.set(view, (p = { events: [], revisions: [], times: [], authors: [] }))
            p.events.push(view.prevKv ? event : (bare ??= withoutPrevKv(event)))
            p.revisions.push(entry.revision)
            p.times.push(entry.timestamp)
            p.authors.push(entry.author)
          }
        }
      }
    }
    const after = entries[entries.length - 1].revision + 1
    for (const [view, p] of pending) {
      const shared: WatchBatch = { events: p.events, revision: p.revisions[p.revisions.length - 1], times: p.times, authors: p.authors }
      // Live iteration: a watcher removed by a sink call is skipped; one added (by a re-entrant watch())
      // starts after this batch and the revision check below gives it nothing.
      for (const w of view.members) {
        if (w.state !== 'synced' || w.view !== view) continue
        const batch = w.next <= p.revisions[0] ? shared : tail(p, w.next)
        if (batch === undefined) continue
        // Before the call: a progress request from inside events() may then claim the whole commit batch.
        w.next = after
        this.deliver(w, batch, after)
      }
    }
  }

  /**
   * Should never happen with a correct log: a commit batch that does not follow the last one seen. The ring
   * cannot bridge the hole, so it restarts after the batch, and every synced watcher catches up from the
   * log (the source of truth) instead of silently missing the hole.
   */
  private recoverGap(fresh: readonly LogEntry[]): void {
    process.emitWarning(`kvlog: watch hub expected revision ${this.current + 1}, got ${fresh[0].revision}; re-reading from the log`)
    const synced = [...this.index.members()]
    for (const w of synced) this.unjoin(w, this.delivered + 1)
    this.current = Math.max(this.current, fresh[fresh.length - 1].revision)
    this.delivered = this.current
    this.ring.reset(this.current + 1)
    for (const w of synced) this.catchUp.start(w)
  }

  /** When the compact revision moved, cancels paused watchers left below it (we notice on the next commit). */
  private checkPausedFloor(): void {
    const floor = this.log.compactRevision
    if (floor === this.checkedFloor) return
    this.checkedFloor = floor
    for (const w of [...this.paused]) {
      if (w.next < floor) this.end(w, compacted(w.next, floor, this.current))
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Watcher transitions

  /** UNSYNCED → SYNCED (or a new watch from now / a future revision). */
  private join(w: Watcher): void {
    w.state = 'synced'
    w.view = this.index.add(w, w.spec.bounds, w.spec)
    if (w.progressRequested) {
      w.progressRequested = false
      this.sendProgress(w)
    }
  }

  /** SYNCED → out of the index, with its next revision pinned to `next` (or later). */
  private unjoin(w: Watcher, next: number): void {
    if (w.view !== undefined) this.index.remove(w, w.view)
    w.view = undefined
    w.next = Math.max(w.next, next)
  }

  /**
   * Hands a batch to the sink. `next` is the watcher's next revision once the batch is in. Returns true
   * to go on; false if the watcher was paused (sink backed up) or canceled (sink threw, or canceled itself).
   */
  private deliver(w: Watcher, batch: WatchBatch, next: number): boolean {
    const resumes = w.resumes
    let accepted: boolean
    try {
      accepted = w.sink.events(batch) !== false
    } catch (err) {
      this.sinkFailed(w, err)
      return false
    }
    if (w.state === 'canceled') return false
    // A resume() from inside events() means the consumer drained already: keep going.
    if (accepted || w.resumes !== resumes) return true
    if (w.state === 'synced') this.unjoin(w, next)
    else w.next = Math.max(w.next, next)
    w.state = 'paused'
    this.paused.add(w)
    return false
  }

  /**
   * progress(R) to a synced watcher. R is what it has been given everything up to: `delivered`, or more if
   * this commit batch already reached it (w.next - 1). Never lower than a revision it already got, never a
   * revision it has yet to get; none at all while it waits for a future start revision.
   */
  private sendProgress(w: Watcher): void {
    // A watch from a future revision has made no progress to report yet (etcd-io/etcd#20229).
    if (w.sink.progress === undefined || w.next > this.current + 1) return
    try {
      w.sink.progress(Math.max(this.delivered, Math.min(w.next - 1, this.current)))
    } catch (err) {
      this.sinkFailed(w, err)
    }
  }

  private sinkFailed(w: Watcher, err: unknown): void {
    this.end(w, new KvlogError('INTERNAL', `watch ${w.id}: the consumer failed: ${String(err)}`))
  }

  /** Any state → CANCELED; tells the sink why, unless the watch was canceled by its owner (err undefined). */
  private end(w: Watcher, err: KvlogError | undefined): void {
    if (w.state === 'canceled') return
    if (w.state === 'synced') this.unjoin(w, 0)
    this.paused.delete(w)
    w.state = 'canceled'
    this.watchers.delete(w.id)
    if (err === undefined) return
    try {
      w.sink.canceled(err)
    } catch (e) {
      process.emitWarning(`kvlog: watch ${w.id}: canceled() threw: ${String(e)}`)
    }
  }
}

function contiguous(entries: readonly LogEntry[], first: number): boolean {
  for (let i = 0; i < entries.length; i++) if (entries[i].revision !== first + i) return false
  return true
}

/** The part of a view's pending batch at or after `from` (a watcher with a future start), if any. */
function tail(p: Pending, from: number): WatchBatch | undefined {
  let i = 0
  while (i < p.revisions.length && p.revisions[i] < from) i++
  if (i === p.revisions.length) return undefined
  return {
    events: p.events.slice(i),
    revision: p.revisions[p.revisions.length - 1],
    times: p.times.slice(i),
    authors: p.authors.slice(i),
  }
}
