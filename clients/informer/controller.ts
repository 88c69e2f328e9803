/**
 * Workers for a controller: take keys from a WorkQueue, reconcile each, retry failures with the queue's
 * rate limiter, give up on a key after maxRetries (it comes back with the next change or resync).
 *
 *   const workers = runWorkers({ queue, reconcile: async (key) => { ... }, workers: 2 })
 *   ...
 *   await workers.stop()           // shuts the queue down, waits for the reconciles in flight
 */
import type { WorkQueue } from './workqueue.js'

export interface WorkerOptions<K> {
  queue: WorkQueue<K>
  /** Makes the world match the desired state for `key`; throw to retry later. */
  reconcile(key: K): Promise<void>
  /** Concurrent workers (default 1); one key is never reconciled by two at once. */
  workers?: number
  /** Retries of a failing key before it is dropped (default 15). */
  maxRetries?: number
  /** Called on each failure; `dropped` when the key will not be retried. */
  onError?(key: K, err: unknown, dropped: boolean): void
}

export interface Workers {
  /** Reconciles that succeeded and failed so far. */
  readonly succeeded: number
  readonly failed: number
  /** Shuts the queue down (queued keys are still reconciled) and resolves when every worker is done. */
  stop(): Promise<void>
  /** Resolves when every worker has ended (after stop(), or the queue was shut down elsewhere). */
  readonly done: Promise<void>
}

export function runWorkers<K>(options: WorkerOptions<K>): Workers {
  const { queue, maxRetries = 15 } = options
  let succeeded = 0
  let failed = 0
  async function worker(): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      try {
        await options.reconcile(key)
        queue.forget(key)
        succeeded++
      } catch (err) {
        failed++
        const dropped = queue.numRequeues(key) >= maxRetries
        if (dropped) queue.forget(key)
        else queue.addRateLimited(key)
        options.onError?.(key, err, dropped)
      } finally {
        queue.done(key)
      }
    }
  }
  const done = Promise.all(Array.from({ length: options.workers ?? 1 }, worker)).then(() => undefined)
  return {
    get succeeded() {
      return succeeded
    },
    get failed() {
      return failed
    },
    done,
    stop: async () => {
      queue.shutDown()
      await done
    },
  }
}
