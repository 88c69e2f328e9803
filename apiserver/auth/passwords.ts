/**
 * Password hashes: scrypt (node:crypto's async form, which runs on libuv's thread pool, never on the event
 * loop), stored as `scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>` so that a hash made with an older cost
 * still verifies after authPasswordHashCost changes.
 *
 * A flood of logins must not stall the server: hashing runs one at a time (the thread pool's other threads
 * stay free for LevelDB and the file system), and at most `maxPending` checks wait; more are refused at
 * once with UNAVAILABLE (TOO_MANY_LOGINS) instead of queueing for minutes. Requests that carry a token
 * never hash, so they are served at their usual speed during such a flood.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { authError } from './errors.js'

const R = 8
const P = 1
const KEY_BYTES = 32
const SALT_BYTES = 16

function derive(password: string, salt: Buffer, log2n: number, r: number, p: number): Promise<Buffer> {
  const n = 2 ** log2n
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_BYTES, { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)))
  })
}

export class PasswordHasher {
  private running = false
  private waiting: Array<() => void> = []

  constructor(
    private readonly log2n: number,
    private readonly maxPending: number,
  ) {}

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_BYTES)
    const key = await this.oneAtATime(() => derive(password, salt, this.log2n, R, P))
    return ['scrypt', this.log2n, R, P, salt.toString('base64'), key.toString('base64')].join('$')
  }

  /** Whether `password` matches `stored`; an empty or malformed hash matches nothing. */
  async verify(password: string, stored: string): Promise<boolean> {
    const parts = stored.split('$')
    if (parts.length !== 6 || parts[0] !== 'scrypt') {
      // Spend the same time as a real check, so a probe cannot tell such users from others.
      await this.oneAtATime(() => derive(password, Buffer.alloc(SALT_BYTES), this.log2n, R, P))
      return false
    }
    const [, n, r, p, salt, hash] = parts
    const want = Buffer.from(hash, 'base64')
    const got = await this.oneAtATime(() => derive(password, Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p)))
    return got.length === want.length && timingSafeEqual(got, want)
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
