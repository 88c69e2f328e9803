/**
 * One watch: its normalized spec, its place in the hub's state machine, and the handle given to callers.
 *
 *                 watch(start ≤ current)                    watch(start > current, or from now)
 *                          │                                               │
 *                          ▼          caught up to current (sync step)     ▼
 *   resume() ──────▶  UNSYNCED  ──────────────────────────────────▶     SYNCED ──┐ events pushed on commit
 *      ▲              catch-up loop: ring, else log.history               │  ▲───┘
 *      │                           │ events() returned false              │ events() returned false
 *      └───────────  PAUSED  ◀─────┴──────────────────────────────────────┘
 *
 *   any state ──cancel(), close(), COMPACTED, sink threw──▶ CANCELED (terminal; no further sink calls)
 *
 * `next` is the next revision to deliver. While SYNCED the hub moves it only when it gives the watcher
 * events (touching every synced watcher on every commit would cost work per watcher per commit), so the
 * effective value is max(next, revision delivered to all synced watchers + 1).
 */
import { invalid } from '../errors.js'
import { inBounds, toBytes, type Bounds } from '../keys.js'
import { checkRevision, normalizeBounds } from '../validate.js'
import type { Author, Event, LogEntry } from '../types.js'
import type { WatchBatch, WatchHandle, WatchSink, WatchSpec } from './types.js'
import { classify, type WatchView } from './watcher-index.js'

export type WatcherState = 'unsynced' | 'synced' | 'paused' | 'canceled'

/** What a handle asks of its hub. */
export interface WatcherHost {
  cancelWatcher(w: Watcher): void
  resumeWatcher(w: Watcher): void
  requestProgress(w: Watcher): void
  /** The last revision every synced watcher has been given. */
  readonly deliveredRevision: number
}

export interface NormalizedSpec {
  /** As given (as bytes): what log.history is asked for during catch-up. */
  key: Buffer
  rangeEnd: Buffer | undefined
  bounds: Bounds
  /** 0 = from now. */
  startRevision: number
  prevKv: boolean
  noPut: boolean
  noDelete: boolean
}

/** Checks a client's spec: bad input is INVALID_ARGUMENT / EMPTY_KEY, like every other request. */
export function normalizeSpec(spec: WatchSpec): NormalizedSpec {
  if (spec === null || typeof spec !== 'object') throw invalid('watch', 'expected an object')
  const bounds = normalizeBounds(spec.key, spec.rangeEnd, 'watch')
  const filters: unknown = spec.filters ?? {}
  if (filters === null || typeof filters !== 'object') throw invalid('watch.filters', 'expected an object')
  const { noPut, noDelete } = filters as { noPut?: unknown; noDelete?: unknown }
  return {
    key: toBytes(spec.key, 'watch.key'),
    rangeEnd: spec.rangeEnd === undefined || spec.rangeEnd === null ? undefined : toBytes(spec.rangeEnd, 'watch.rangeEnd'),
    bounds,
    startRevision: checkRevision(spec.startRevision, 'watch.startRevision'),
    prevKv: flag(spec.prevKv, 'watch.prevKv'),
    noPut: flag(noPut, 'watch.filters.noPut'),
    noDelete: flag(noDelete, 'watch.filters.noDelete'),
  }
}

function flag(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean') throw invalid(field, `expected a boolean, got ${typeof value}`)
  return value
}

/**
 * The event without its prevKv. One copy per event, shared by every watcher and batch that takes it (the
 * ring's events are delivered to many watchers, and front doors cache their encoding per event object).
 */
export function withoutPrevKv(event: Event): Event {
  if (event.prevKv === undefined) return event
  let bare = bareEvents.get(event)
  if (bare === undefined) bareEvents.set(event, (bare = { type: event.type, kv: event.kv }))
  return bare
}

const bareEvents = new WeakMap<Event, Event>()

export class Watcher implements WatchHandle {
  state: WatcherState = 'unsynced'
  /** The next revision to deliver (see the note at the top for SYNCED watchers). */
  next: number
  /** Set while SYNCED: where the watcher sits in the index. */
  view: WatchView<Watcher> | undefined
  /** A catch-up loop is running for this watcher (at most one at a time). */
  catchingUp = false
  /** requestProgress() was called while not synced: send progress on joining. */
  progressRequested = false
  /**
   * Counts resume() calls. A sink may call resume() from inside events() and then return false; comparing
   * the count around the call tells "backed up, resumed already" from "backed up".
   */
  resumes = 0

  constructor(
    readonly id: number,
    readonly spec: NormalizedSpec,
    readonly sink: WatchSink,
    private readonly host: WatcherHost,
    start: number,
  ) {
    this.next = start
  }

  private selectionKeyCache: string | undefined

  /** Equal for watchers whose select() gives the same events from the same entries (same range, filters, prevKv). */
  get selectionKey(): string {
    if (this.selectionKeyCache === undefined) {
      const { kind, id } = classify(this.spec.bounds)
      const { prevKv, noPut, noDelete } = this.spec
      this.selectionKeyCache = `${kind}:${id}:${prevKv ? 1 : 0}${noPut ? 1 : 0}${noDelete ? 1 : 0}`
    }
    return this.selectionKeyCache
  }

  get nextRevision(): number {
    return this.state === 'synced' ? Math.max(this.next, this.host.deliveredRevision + 1) : this.next
  }

  get synced(): boolean {
    return this.state === 'synced'
  }

  cancel(): void {
    this.host.cancelWatcher(this)
  }

  resume(): void {
    this.resumes++
    this.host.resumeWatcher(this)
  }

  requestProgress(): void {
    this.host.requestProgress(this)
  }

  /** Whether the watcher wants this event (bounds and filters; not the revision). */
  wants(event: Event): boolean {
    if (event.type === 'PUT' ? this.spec.noPut : this.spec.noDelete) return false
    return inBounds(this.spec.bounds, event.kv.key)
  }

  /**
   * The events of `entries` with revision >= `from` that the watcher wants, shaped by its prevKv option,
   * and the revision of the last of them (0 when there are none).
   */
  select(entries: Iterable<LogEntry>, from: number): WatchBatch {
    const events: Event[] = []
    const times: number[] = []
    const authors: Array<Author | undefined> = []
    let revision = 0
    for (const entry of entries) {
      if (entry.revision < from) continue
      for (const event of entry.events) {
        if (!this.wants(event)) continue
        events.push(this.spec.prevKv ? event : withoutPrevKv(event))
        times.push(entry.timestamp)
        authors.push(entry.author)
        revision = entry.revision
      }
    }
    return { events, revision, times, authors }
  }
}
