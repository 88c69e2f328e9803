/**
 * A deduplicating work queue for controllers (client-go's rate-limiting workqueue):
 *
 * - an item added while it waits in the queue is queued once (dedupe: a controller reconciles the latest
 *   state, so ten changes to one object make one reconcile);
 * - an item is processed by one worker at a time: get() hands it out, done() releases it;
 * - an item added while it is being processed is not handed to another worker; done() queues it again,
 *   so the change that arrived meanwhile is processed after;
 * - addRateLimited() re-adds after the rate limiter's delay (exponential per item by default); forget()
 *   after a success resets the item's backoff;
 * - shutDown(): adds are ignored and delayed adds dropped; workers still get what is queued, then get()
 *   answers undefined. shutDownWithDrain() also waits for the items being processed.
 *
 *   for (let key; (key = await queue.get()) !== undefined; queue.done(key)) { ... }
 */
import { defaultRateLimiter, type RateLimiter } from './rate-limiter.js'

export class WorkQueue<K = string> {
  private readonly queue: K[] = []
  /** Items waiting to be processed (queued, or to be queued again when their processing ends). */
  private readonly dirty = new Set<K>()
  private readonly processing = new Set<K>()
  private readonly delayed = new Map<K, { at: number; timer: NodeJS.Timeout }>()
  private readonly waiters: Array<(item: K | undefined) => void> = []
  private readonly drained: Array<() => void> = []
  private shutting = false

  constructor(readonly rateLimiter: RateLimiter<K> = defaultRateLimiter<K>()) {}

  /** Items queued (not counting the ones being processed or waiting for a delay). */
  get length(): number {
    return this.queue.length
  }

  get shuttingDown(): boolean {
    return this.shutting
  }

  /** Items being processed now. */
  get inFlight(): number {
    return this.processing.size
  }

  add(item: K): void {
    if (this.shutting || this.dirty.has(item)) return
    this.dirty.add(item)
    if (!this.processing.has(item)) this.enqueue(item)
  }

  /** Adds after `ms`; of several delayed adds of one item, the earliest wins. */
  addAfter(item: K, ms: number): void {
    if (this.shutting) return
    if (ms <= 0) return this.add(item)
    const at = performance.now() + ms
    const pending = this.delayed.get(item)
    if (pending !== undefined) {
      if (pending.at <= at) return
      clearTimeout(pending.timer)
    }
    const timer = setTimeout(() => {
      this.delayed.delete(item)
      this.add(item)
    }, ms)
    this.delayed.set(item, { at, timer })
  }

  /** Adds after the rate limiter's delay for this item (one more failure counted). */
  addRateLimited(item: K): void {
    this.addAfter(item, this.rateLimiter.when(item))
  }

  /** The item succeeded: reset its backoff. */
  forget(item: K): void {
    this.rateLimiter.forget(item)
  }

  numRequeues(item: K): number {
    return this.rateLimiter.numRequeues(item)
  }

  /** The next item to process (the caller owns it until done()); undefined once shut down and empty. */
  get(): Promise<K | undefined> {
    if (this.queue.length > 0) {
      const item = this.queue.shift()!
      this.dirty.delete(item)
      this.processing.add(item)
      return Promise.resolve(item)
    }
    if (this.shutting) return Promise.resolve(undefined)
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /** Processing of `item` ended; if it was added meanwhile, it is queued again. */
  done(item: K): void {
    if (!this.processing.delete(item)) return
    // Queued again even while shutting down: what was added before shutDown() is still handed out.
    if (this.dirty.has(item)) this.enqueue(item)
    if (this.processing.size === 0) for (const resolve of this.drained.splice(0)) resolve()
  }

  /** Hands a dirty item to a waiting worker, or queues it. */
  private enqueue(item: K): void {
    const waiter = this.waiters.shift()
    if (waiter === undefined) {
      this.queue.push(item)
      return
    }
    this.dirty.delete(item)
    this.processing.add(item)
    waiter(item)
  }

  /** Stops accepting items; waiting get() calls answer undefined; queued items are still handed out. */
  shutDown(): void {
    this.shutting = true
    for (const { timer } of this.delayed.values()) clearTimeout(timer)
    this.delayed.clear()
    for (const resolve of this.waiters.splice(0)) resolve(undefined)
  }

  /** shutDown(), then resolves when no item is being processed. */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown()
    if (this.processing.size > 0) await new Promise<void>((resolve) => this.drained.push(resolve))
  }
}
