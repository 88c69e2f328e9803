/**
 * Simple tokens, as etcd's `simple` token provider makes them: an opaque random string plus a sequence
 * number, valid for `ttlMs` after its last use (each request that presents it restarts the clock, so an
 * active client keeps its token). They live in this process's memory only: after a restart, or on another
 * member, clients authenticate again (etcd clients do so on "invalid auth token" by themselves).
 * A user's tokens end when the user is deleted or its password changes, and all of them when auth is
 * disabled.
 */
import { randomBytes } from 'node:crypto'

/** What a valid token says: its user, and for a JWT the auth revision it was issued at. */
export interface TokenInfo {
  user: string
  /** Set by JWTs only; a simple token is always current (as etcd's, checked against the live revision). */
  revision?: number
}

/** Issues and checks tokens: simple (here) or JWT (jwt.ts), chosen by authToken. */
export interface TokenProvider {
  issue(user: string, revision: number): string
  /** The token's user, or undefined if it is unknown, expired or forged. */
  use(token: string): TokenInfo | undefined
  /** Ends the user's tokens (deleted, or password changed) where the provider can. */
  revokeUser(user: string): void
  /** Ends every token (auth disabled) where the provider can. */
  clear(): void
  close(): void
}

interface Entry {
  user: string
  expires: number
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'

export class SimpleTokens implements TokenProvider {
  private readonly tokens = new Map<string, Entry>()
  private seq = 0
  private readonly sweeper: NodeJS.Timeout

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(ttlMs, 60_000)))
    this.sweeper.unref()
  }

  issue(user: string): string {
    const bytes = randomBytes(16)
    let s = ''
    for (const b of bytes) s += LETTERS[b % LETTERS.length]
    const token = `${s}.${++this.seq}`
    this.tokens.set(token, { user, expires: this.now() + this.ttlMs })
    return token
  }

  /** The token's user, restarting its TTL; undefined if unknown or expired. */
  use(token: string): TokenInfo | undefined {
    const e = this.tokens.get(token)
    if (e === undefined) return undefined
    const now = this.now()
    if (e.expires <= now) {
      this.tokens.delete(token)
      return undefined
    }
    e.expires = now + this.ttlMs
    return { user: e.user }
  }

  revokeUser(user: string): void {
    for (const [t, e] of this.tokens) if (e.user === user) this.tokens.delete(t)
  }

  clear(): void {
    this.tokens.clear()
  }

  close(): void {
    clearInterval(this.sweeper)
  }

  private sweep(): void {
    const now = this.now()
    for (const [t, e] of this.tokens) if (e.expires <= now) this.tokens.delete(t)
  }
}
