/**
 * Password hashes: scrypt, stored as `scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>` so that a hash made
 * with an older cost still verifies after authPasswordHashCost changes.
 *
 * A flood of logins must not stall the server: hashing runs one at a time on a thread of its own
 * (hash-worker.ts), never on the event loop nor in libuv's pool (which stays free for LevelDB and the file
 * system), and at most `maxPending` checks wait; more are refused at once with UNAVAILABLE
 * (TOO_MANY_LOGINS) instead of queueing for minutes. Requests that carry a token never hash, so they are
 * served at their usual speed during such a flood.
 *
 * Two threads hash: one at the process's priority, one at a lower one (authHashThreadNice, 10). A check
 * runs on the first while its budget lasts (authHashNormalPerSecond checks a second, NormalBudget), else
 * on the second. So a flood takes at most that many checks' CPU a second from the requests being served
 * at their priority, and the rest of it about a tenth of a core that the server's threads want (the
 * kernel shares a core by weight: 110 at nice 10 against 1024 at nice 0). The low thread is not at nice
 * 19 (weight 15): when the budget is spent, by a flood or by a burst of logins, a login on a machine
 * whose cores are busy with other work would wait seconds there, past clients' dial timeouts (etcdctl's
 * is 2 s). The budget counts checks, not their time: on a busy machine a check takes longer without
 * using more CPU. A thread cannot raise its priority again once lowered without privileges, hence two
 * threads rather than one that changes.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import { authError } from './errors.js'
import type { HashAnswer, HashRequest } from './hash-worker.js'

const R = 8
const P = 1
const KEY_BYTES = 32
const SALT_BYTES = 16

/** The hashing thread, started on first use; one request at a time (PasswordHasher sees to that). */
class HashThread {
  private worker: Worker | undefined
  private seq = 0
  private readonly pending = new Map<number, { resolve(key: Buffer): void; reject(err: Error): void }>()

  constructor(private readonly nice: number) {}

  derive(password: string, salt: Buffer, log2n: number, r: number, p: number): Promise<Buffer> {
    const worker = this.start()
    const id = ++this.seq
    return new Promise<Buffer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.ref() // while a check runs, the process stays up for its answer
      worker.postMessage({ id, password, salt, n: 2 ** log2n, r, p, keyBytes: KEY_BYTES } satisfies HashRequest)
    })
  }

  close(): void {
    void this.worker?.terminate()
    this.worker = undefined
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker
    const worker = new Worker(new URL('./hash-worker.js', import.meta.url), { workerData: { nice: this.nice } })
    worker.on('message', (m: HashAnswer) => {
      const waiter = this.pending.get(m.id)
      this.pending.delete(m.id)
      if (this.pending.size === 0) worker.unref()
      if ('key' in m) waiter?.resolve(Buffer.from(m.key))
      else waiter?.reject(new Error(`password hashing failed: ${m.error}`))
    })
    worker.on('error', (err) => this.fail(err))
    worker.on('exit', () => this.fail(new Error('the password hashing thread stopped')))
    worker.unref()
    this.worker = worker
    return worker
  }

  private fail(err: Error): void {
    this.worker = undefined
    for (const w of this.pending.values()) w.reject(err)
    this.pending.clear()
  }
}

/**
 * The checks allowed at the process's priority: a bucket of `perSecond` checks, filled at `perSecond` a
 * second; a check takes one out.
 */
export class NormalBudget {
  private left: number
  private at = performance.now()

  constructor(private readonly perSecond: number) {
    this.left = perSecond
  }

  /** Whether a check may run at the process's priority now; if so, it is counted. */
  take(): boolean {
    const now = performance.now()
    this.left = Math.min(this.perSecond, this.left + ((now - this.at) * this.perSecond) / 1000)
    this.at = now
    if (this.left < 1) return false
    this.left -= 1
    return true
  }
}

export class PasswordHasher {
  private running = false
  private waiting: Array<() => void> = []
  private readonly normal: HashThread
  private readonly low: HashThread
  private readonly budget: NormalBudget
  /** Checks run so far at the process's priority and at the low one. */
  readonly checks = { normal: 0, low: 0 }

  /**
   * `nice`: the low thread's CPU priority (0: one thread, at the process's); `normalPerSecond`: the
   * checks a second that may run at the process's priority.
   */
  constructor(
    private readonly log2n: number,
    private readonly maxPending: number,
    nice = 10,
    normalPerSecond = 10,
  ) {
    this.normal = new HashThread(0)
    this.low = nice === 0 ? this.normal : new HashThread(nice)
    this.budget = new NormalBudget(nice === 0 ? Number.POSITIVE_INFINITY : normalPerSecond)
  }

  close(): void {
    this.normal.close()
    this.low.close()
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_BYTES)
    const key = await this.derive(password, salt, this.log2n, R, P)
    return ['scrypt', this.log2n, R, P, salt.toString('base64'), key.toString('base64')].join('$')
  }

  /** Whether `password` matches `stored`; an empty or malformed hash matches nothing. */
  async verify(password: string, stored: string): Promise<boolean> {
    const parts = stored.split('$')
    if (parts.length !== 6 || parts[0] !== 'scrypt') {
      // Spend the same time as a real check, so a probe cannot tell such users from others.
      await this.derive(password, Buffer.alloc(SALT_BYTES), this.log2n, R, P)
      return false
    }
    const [, n, r, p, salt, hash] = parts
    const want = Buffer.from(hash, 'base64')
    const got = await this.derive(password, Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p))
    return got.length === want.length && timingSafeEqual(got, want)
  }

  /** One check, on the thread at the process's priority while its budget lasts, else on the low one. */
  private derive(password: string, salt: Buffer, log2n: number, r: number, p: number): Promise<Buffer> {
    return this.oneAtATime(() => {
      const normal = this.budget.take()
      this.checks[normal ? 'normal' : 'low']++
      return (normal ? this.normal : this.low).derive(password, salt, log2n, r, p)
    })
  }

  private async oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    if (this.running) {
      if (this.waiting.length >= this.maxPending) throw authError('TOO_MANY_LOGINS')
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
    this.running = true
    try {
      return await work()
    } finally {
      const next = this.waiting.shift()
      if (next !== undefined) next()
      else this.running = false
    }
  }
}
