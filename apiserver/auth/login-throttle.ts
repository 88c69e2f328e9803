/**
 * Throttles password guessing without letting a flood lock out anyone else (Authenticate on gRPC and the
 * gateway, POST /v1/auth/authenticate). Failed logins are counted per client address (the source) and per
 * user name, each in a window of loginFailureWindow:
 *
 * - a source with loginMaxFailuresPerSource failures is refused (TOO_MANY_ATTEMPTS) until its window ends,
 *   without a password check: its guesses cost nothing more;
 * - a user with loginMaxFailuresPerUser failures may log in only from sources with no failure in their
 *   window: many sources guessing one password get at most one failure each, and the user, from a
 *   machine that has not failed, still gets in;
 * - a source has at most loginMaxPendingPerSource checks under way, and sources that have failed share
 *   one check at a time; further logins wait their turn (and are refused unchecked if their source or
 *   user reached its limit meanwhile): a flood cannot fill the hasher's queue (authMaxPendingLogins)
 *   ahead of a login from elsewhere, which would then be refused with UNAVAILABLE, and clients behind one
 *   address (every local client on loopback) are queued, never refused, for logging in at once.
 *
 * A success from a source that has not failed is never refused. A success resets nothing: counts only
 * expire, so a flooder that knows one password cannot clear its count with it. Both tables are bounded:
 * past MAX_ENTRIES, expired entries go, then the oldest.
 */
import { isKvlogError, KvlogError } from '../../log/errors.js'

export interface LoginThrottleOptions {
  maxFailuresPerSource: number
  maxFailuresPerUser: number
  maxPendingPerSource: number
  windowMs: number
}

interface Count {
  failures: number
  /** When the window that started with the first failure ends. */
  until: number
}

/** Entries kept per table (sources, users) before the oldest are dropped. */
const MAX_ENTRIES = 100_000
/** The source of a login whose client address is not known. */
const UNKNOWN = '?'

function tooMany(why: string, retryAfterMs: number): KvlogError {
  return new KvlogError('TOO_MANY_ATTEMPTS', `too many failed logins ${why}; retry later`, { retryAfterMs: Math.max(0, retryAfterMs) })
}

class Counts {
  private readonly map = new Map<string, Count>()

  constructor(private readonly now: () => number) {}

  get(key: string): Count | undefined {
    const c = this.map.get(key)
    if (c !== undefined && c.until <= this.now()) {
      this.map.delete(key)
      return undefined
    }
    return c
  }

  fail(key: string, windowMs: number): void {
    const c = this.get(key)
    if (c !== undefined) c.failures++
    else {
      this.map.set(key, { failures: 1, until: this.now() + windowMs })
      if (this.map.size > MAX_ENTRIES) this.trim()
    }
  }

  private trim(): void {
    const now = this.now()
    for (const [k, c] of this.map) if (c.until <= now) this.map.delete(k)
    // Insertion order is window order: the first entries are the oldest.
    for (const k of this.map.keys()) {
      if (this.map.size <= MAX_ENTRIES) break
      this.map.delete(k)
    }
  }
}

/** A first-come first-served limit on checks running at once; waiting costs a callback. */
class Turns {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly size: number) {}

  async take(): Promise<void> {
    if (this.running < this.size) {
      this.running++
      return
    }
    // The turn is handed over by give(): `running` stays counted for it.
    await new Promise<void>((resolve) => this.waiting.push(resolve))
  }

  give(): void {
    const next = this.waiting.shift()
    if (next !== undefined) next()
    else this.running--
  }

  get idle(): boolean {
    return this.running === 0
  }
}

export class LoginThrottle {
  private readonly sources: Counts
  private readonly users: Counts
  private readonly turns = new Map<string, Turns>()
  private readonly suspects = new Turns(1)

  constructor(
    private readonly o: LoginThrottleOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.sources = new Counts(now)
    this.users = new Counts(now)
  }

  /**
   * Runs `check` (the password check; it throws AUTH_FAILED on a wrong name or password) unless the
   * source or the user is throttled; counts its failure.
   */
  async attempt<T>(source: string | undefined, user: string, check: () => Promise<T>): Promise<T> {
    const from = source ?? UNKNOWN
    this.refuseThrottled(from, user)
    let turns = this.turns.get(from)
    if (turns === undefined) this.turns.set(from, (turns = new Turns(this.o.maxPendingPerSource)))
    await turns.take()
    const suspect = this.sources.get(from) !== undefined
    try {
      if (suspect) await this.suspects.take()
      try {
        // Failures counted while this login waited count for it too.
        this.refuseThrottled(from, user)
        return await check()
      } catch (err) {
        if (isKvlogError(err) && err.details.reason === 'AUTH_FAILED') {
          this.sources.fail(from, this.o.windowMs)
          this.users.fail(user, this.o.windowMs)
        }
        throw err
      } finally {
        if (suspect) this.suspects.give()
      }
    } finally {
      turns.give()
      if (turns.idle) this.turns.delete(from)
    }
  }

  /** Refuses a login whose source, or whose user from a source that failed, reached its limit. */
  private refuseThrottled(from: string, user: string): void {
    const failed = this.sources.get(from)
    if (failed !== undefined && failed.failures >= this.o.maxFailuresPerSource)
      throw tooMany('from this address', failed.until - this.now())
    const asUser = this.users.get(user)
    if (failed !== undefined && asUser !== undefined && asUser.failures >= this.o.maxFailuresPerUser) {
      throw tooMany('as this user', asUser.until - this.now())
    }
  }
}
