/**
 * How long a failed work item waits before it is retried (client-go's workqueue rate limiters).
 *
 * - ExponentialBackoffRateLimiter: per item, base · 2^failures, capped; forget() on success resets it.
 * - TokenBucketRateLimiter: overall, `qps` retries per second with bursts of `burst` (so a storm of failing
 *   items cannot hammer the server), whatever the item.
 * - MaxOfRateLimiter: the longest delay of several; defaultRateLimiter() combines the two above as
 *   client-go's DefaultControllerRateLimiter does (5 ms .. 1000 s per item, 10 qps / burst 100 overall).
 */

export interface RateLimiter<K> {
  /** The delay before `item` may be retried, ms; counts one more failure of it. */
  when(item: K): number
  /** The item succeeded: start its backoff over. */
  forget(item: K): void
  /** Failures counted since the last forget. */
  numRequeues(item: K): number
}

export class ExponentialBackoffRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>()

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {
    if (!(baseMs > 0) || !(maxMs >= baseMs)) throw new TypeError('need 0 < baseMs <= maxMs')
  }

  when(item: K): number {
    const n = this.failures.get(item) ?? 0
    this.failures.set(item, n + 1)
    // 2^n overflows to Infinity for large n; the cap keeps the result finite.
    return Math.min(this.maxMs, this.baseMs * 2 ** n)
  }

  forget(item: K): void {
    this.failures.delete(item)
  }

  numRequeues(item: K): number {
    return this.failures.get(item) ?? 0
  }
}

export class TokenBucketRateLimiter<K> implements RateLimiter<K> {
  private tokens: number
  private last: number

  /** `now` is injectable for tests (ms). */
  constructor(
    readonly qps = 10,
    readonly burst = 100,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(qps > 0) || !(burst >= 1)) throw new TypeError('need qps > 0 and burst >= 1')
    this.tokens = burst
    this.last = now()
  }

  /** Reserves the next token: 0 while the bucket has tokens, else the wait until the reserved one. */
  when(_item: K): number {
    const t = this.now()
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.qps) / 1000)
    this.last = t
    this.tokens -= 1
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps
  }

  forget(_item: K): void {}

  numRequeues(_item: K): number {
    return 0
  }
}

export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: RateLimiter<K>[]

  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new TypeError('MaxOfRateLimiter needs at least one limiter')
    this.limiters = limiters
  }

  when(item: K): number {
    // Every limiter must count the failure, so no short-circuit.
    return Math.max(...this.limiters.map((l) => l.when(item)))
  }

  forget(item: K): void {
    for (const l of this.limiters) l.forget(item)
  }

  numRequeues(item: K): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(item)))
  }
}

export function defaultRateLimiter<K>(): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(new ExponentialBackoffRateLimiter<K>(5, 1_000_000), new TokenBucketRateLimiter<K>(10, 100))
}
