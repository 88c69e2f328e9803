/**
 * An informer for the resource API (client-go's SharedIndexInformer, for one process): it lists, watches
 * from the list's resourceVersion, keeps a local indexed cache (store.ts) and calls handlers on changes.
 *
 *   const informer = new Informer(configmaps, { namespace: 'default', labelSelector: 'app=web', resyncPeriodMs: 60_000 })
 *   informer.addEventHandler({ onAdd: (o) => queue.add(objectKey(o)), onUpdate: ..., onDelete: ... })
 *   informer.start()
 *   await informer.synced()                 // the first list is in the cache
 *   ...
 *   await informer.stop()
 *
 * The loop:
 *
 *     ┌─▶ list (all pages, one snapshot) ─▶ replace the cache, emit the diff ─▶ watch from list RV ─┐
 *     │                                                                                            │
 *     └──── 410 Expired (an ERROR event, or an HTTP 410): the history to resume from is gone ◀─────┤
 *                                          stream ended (timeoutSeconds): watch again from last RV ◀┤
 *                           connection failed / silent: back off, watch again from last RV ◀────────┘
 *
 * - Every event moves `resourceVersion` (bookmarks too), so a rewatch resumes exactly after the last
 *   event seen: no gap, no duplicate.
 * - A relist does not replay everything: it diffs the list against the cache (diff.ts) and emits only what
 *   was missed; objects that vanished become deletes with a DeletedFinalStateUnknown tombstone.
 * - Resync (resyncPeriodMs) replays the cache as onUpdate(o, o), not the server: it lets a controller
 *   re-check every object periodically.
 * - Handlers run synchronously in order; one that throws does not stop the informer (emitted as
 *   'handlerError'). Keep them short: put keys on a WorkQueue and reconcile in workers.
 *
 * Events (EventEmitter): 'synced', 'relist' (ListDiff counts), 'watch' (resourceVersion), 'expired',
 * 'retry' (error, delay ms), 'handlerError' (error).
 */
import { EventEmitter } from 'node:events'
import { KvlogClientError, StatusError, UnreachableError } from '../errors.js'
import type { ResourceClient, Selection } from '../resources/http.js'
import { objectKey, type KubeObject, type ResourceWatchEvent, type Status } from '../resources/types.js'
import type { ResourceWatch } from '../resources/watch.js'
import { DeletedFinalStateUnknown, type ListDiff } from './diff.js'
import type { IndexFunc } from './indexer.js'
import { Store } from './store.js'

export interface EventHandler<T extends KubeObject> {
  /** `initialList`: the object came with the first list (not from a change). */
  onAdd?(object: T, initialList: boolean): void
  /** Also called with old === object on resync. */
  onUpdate?(old: T, object: T): void
  /** A tombstone when the delete was inferred from a relist (the final state is unknown). */
  onDelete?(object: T | DeletedFinalStateUnknown<T>): void
}

export interface InformerOptions<T extends KubeObject> extends Selection {
  /** Replay the cache to the handlers as updates every this many ms; 0 or absent: never. */
  resyncPeriodMs?: number
  /** Custom indexes, besides 'namespace' and 'labels'. */
  indexers?: Record<string, IndexFunc<T>>
  /** Page size of the list (default 500). */
  pageSize?: number
  /** The server ends each watch after this long; the informer watches again. Default: 300–600 s, random. */
  watchTimeoutSeconds?: number
  /**
   * Abort a watch that received nothing (bookmarks included) for this long, ms, and watch again from the
   * last resourceVersion. Default: never. kvlog sends a BOOKMARK every watchProgressInterval (10 s by
   * default) to watches with bookmarks, so a value above that only fires on a dead or silent connection.
   */
  stallTimeoutMs?: number
  /** Ask for bookmarks (default true): they advance the resume point without object changes. */
  allowWatchBookmarks?: boolean
  /** Retry backoff after failures, ms (default 100 .. 30 000, doubling, with jitter). */
  minBackoffMs?: number
  maxBackoffMs?: number
}

type WatchOutcome = 'ended' | 'expired'

/** A watch that ends sooner than this without any event counts as a failure (backoff before the next). */
const SHORT_WATCH_MS = 500

export class Informer<T extends KubeObject = KubeObject> extends EventEmitter {
  readonly store: Store<T>
  /** Where the next watch resumes: the last resourceVersion seen (list or event). */
  resourceVersion: string | undefined
  /** Lists done (the first one included) and watch requests made. */
  lists = 0
  watches = 0
  private readonly handlers: EventHandler<T>[] = []
  private hasSynced = false
  private syncWaiters: Array<() => void> = []
  private running: Promise<void> | undefined
  private stopped = false
  private watch: ResourceWatch<T> | undefined
  private resyncTimer: NodeJS.Timeout | undefined
  private sleepTimer: NodeJS.Timeout | undefined
  private wakeSleep: (() => void) | undefined
  /** Failures since the last progress (a list, or a watch event); they grow the backoff. */
  private failures = 0
  /** Aborted by stop(): cancels a list in flight. */
  private readonly abort = new AbortController()
  /** Expired answers with no watch event in between: a relist that expires again at once backs off. */
  private expiredStreak = 0

  constructor(
    readonly client: ResourceClient<T>,
    readonly options: InformerOptions<T> = {},
  ) {
    super()
    this.store = new Store<T>(options.indexers)
  }

  /** True once the first list is in the cache. */
  get isSynced(): boolean {
    return this.hasSynced
  }

  /** Resolves when the first list is in the cache. */
  synced(): Promise<void> {
    return this.hasSynced ? Promise.resolve() : new Promise((resolve) => this.syncWaiters.push(resolve))
  }

  /**
   * Adds handlers; returns a function that removes them. Added after the first list, they first get
   * onAdd for every cached object (so late handlers see the same world as early ones).
   */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.handlers.push(handler)
    if (this.hasSynced) for (const o of this.store.list()) this.call(handler, (h) => h.onAdd?.(o, true))
    return () => {
      const i = this.handlers.indexOf(handler)
      if (i >= 0) this.handlers.splice(i, 1)
    }
  }

  start(): this {
    if (this.running !== undefined) throw new TypeError('the informer is already started')
    this.running = this.loop()
    const period = this.options.resyncPeriodMs ?? 0
    if (period > 0) this.resyncTimer = setInterval(() => this.resync(), period)
    return this
  }

  /** Stops watching; resolves when the loop has ended. The cache stays readable. */
  async stop(): Promise<void> {
    this.stopped = true
    this.abort.abort(new Error('the informer was stopped'))
    clearInterval(this.resyncTimer)
    clearTimeout(this.sleepTimer)
    this.wakeSleep?.()
    this.watch?.close()
    await this.running
  }

  /** Replays the cache to the handlers as onUpdate(o, o). */
  resync(): void {
    if (!this.hasSynced) return
    for (const o of this.store.list()) this.dispatch((h) => h.onUpdate?.(o, o))
  }

  // ------------------------------------------------------------------------------------------------------

  private async loop(): Promise<void> {
    let needList = true
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist()
          needList = false
        }
        const outcome = await this.watchOnce()
        if (outcome === 'expired') {
          needList = true
          await this.onExpired()
        }
      } catch (err) {
        if (this.stopped) break
        // A connection failure: resume the watch where it was. Anything else (a refused request, a bad
        // stream): start over from a list.
        if (!(err instanceof UnreachableError) || this.resourceVersion === undefined) needList = true
        if (isExpired(err)) await this.onExpired()
        else await this.backoff(err, this.failures++)
      }
    }
  }

  private async relist(): Promise<void> {
    const o = this.options
    const list = await this.client.listAll({
      namespace: o.namespace,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      pageSize: o.pageSize,
      signal: this.abort.signal,
    })
    if (this.stopped) return
    this.lists++
    const initial = !this.hasSynced
    const diff = this.store.replace(list.items)
    this.resourceVersion = list.metadata.resourceVersion
    this.failures = 0
    this.emitDiff(diff, initial)
    this.emit('relist', { added: diff.added.length, updated: diff.updated.length, deleted: diff.deleted.length, unchanged: diff.unchanged })
    if (initial) {
      this.hasSynced = true
      for (const resolve of this.syncWaiters.splice(0)) resolve()
      this.emit('synced')
    }
  }

  private emitDiff(diff: ListDiff<T>, initial: boolean): void {
    for (const o of diff.added) this.dispatch((h) => h.onAdd?.(o, initial))
    for (const u of diff.updated) this.dispatch((h) => h.onUpdate?.(u.old, u.object))
    for (const d of diff.deleted) this.dispatch((h) => h.onDelete?.(d))
  }

  private async watchOnce(): Promise<WatchOutcome> {
    // stop() closes the watch it finds; one started after it would run until its timeout.
    if (this.stopped) return 'ended'
    const o = this.options
    const w = this.client.watch({
      namespace: o.namespace,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: o.allowWatchBookmarks ?? true,
      timeoutSeconds: o.watchTimeoutSeconds ?? Math.floor(300 * (1 + Math.random())),
      stallTimeoutMs: o.stallTimeoutMs,
    })
    this.watch = w
    this.watches++
    this.emit('watch', this.resourceVersion)
    const started = performance.now()
    try {
      for await (const event of w) {
        if (this.stopped) break
        if (this.apply(event) === 'expired') return 'expired'
        this.failures = 0
        this.expiredStreak = 0
      }
      // A server (or proxy) that ends every watch at once would make the informer spin: back off instead.
      if (!this.stopped && w.received === 0 && performance.now() - started < SHORT_WATCH_MS) {
        throw new UnreachableError(`the watch ended after ${Math.round(performance.now() - started)} ms without an event`)
      }
      return 'ended'
    } finally {
      w.close()
      this.watch = undefined
    }
  }

  /** Applies one watch event to the cache and the handlers. */
  private apply(event: ResourceWatchEvent<T>): 'expired' | undefined {
    if (event.type === 'ERROR') {
      if (isExpiredStatus(event.object)) return 'expired'
      throw new StatusError(event.object, event.object.code ?? 500)
    }
    const object = event.object
    const rv = object.metadata.resourceVersion
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const old = this.store.upsert(object)
        if (old === undefined) this.dispatch((h) => h.onAdd?.(object, false))
        else this.dispatch((h) => h.onUpdate?.(old, object))
        break
      }
      case 'DELETED': {
        this.store.remove(objectKey(object))
        this.dispatch((h) => h.onDelete?.(object))
        break
      }
      case 'BOOKMARK':
        break
    }
    if (rv !== undefined) this.resourceVersion = rv
    return undefined
  }

  private dispatch(f: (h: EventHandler<T>) => void): void {
    for (const h of this.handlers) this.call(h, f)
  }

  private call(h: EventHandler<T>, f: (h: EventHandler<T>) => void): void {
    try {
      f(h)
    } catch (err) {
      if (this.listenerCount('handlerError') > 0) this.emit('handlerError', err)
    }
  }

  private async onExpired(): Promise<void> {
    this.emit('expired', this.resourceVersion)
    if (this.expiredStreak++ > 0)
      await this.backoff(new StatusError({ kind: 'Status', reason: 'Expired', code: 410 }, 410), this.expiredStreak - 2)
  }

  private async backoff(err: unknown, attempt: number): Promise<void> {
    const min = this.options.minBackoffMs ?? 100
    const max = this.options.maxBackoffMs ?? 30_000
    const delay = Math.min(max, min * 2 ** attempt) * (0.5 + Math.random() / 2)
    this.emit('retry', err, delay)
    await new Promise<void>((resolve) => {
      this.wakeSleep = resolve
      this.sleepTimer = setTimeout(resolve, delay)
    })
    this.wakeSleep = undefined
  }
}

function isExpiredStatus(s: Status): boolean {
  return s.code === 410 || s.reason === 'Expired' || s.reason === 'Gone'
}

function isExpired(err: unknown): boolean {
  return err instanceof KvlogClientError && (err.status === 410 || err.code === 'Expired' || err.code === 'Gone')
}
