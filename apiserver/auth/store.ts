/**
 * AuthStore: the auth state (state.ts), kept in the log and in memory.
 *
 * Where it lives: one record, `auth`, in the log's durable metadata (Log.writeMeta). That is the Log
 * contract's write path: the record is written by the engine's writer in order with the data, is durable
 * when the change is acknowledged, and is copied by snapshots and restores. It is outside the user
 * keyspace, so no range, count, watch or history of user keys sees it, and compaction (which removes
 * history of user keys only) never touches it. Enabling auth on a store with data changes nothing but this
 * record. Auth changes do not take a user revision (as in etcd, where they raise only the auth revision).
 *
 * Changes are serialized: each is applied to a copy of the current state, written, and only then made the
 * current state, so a failed write leaves the state as it was. Password hashing (slow on purpose) happens
 * before a change queues, never while others wait behind it.
 */
import type { Log } from '../../log/backend.js'
import { KvlogError } from '../../log/errors.js'
import { authError } from './errors.js'
import { LoginThrottle, type LoginThrottleOptions } from './login-throttle.js'
import { PasswordHasher } from './passwords.js'
import * as S from './state.js'
import { SimpleTokens, type TokenProvider } from './tokens.js'

const META = 'auth'
/**
 * Attempts at one change while changes made at the same moment through other members come first. Each
 * attempt after the first waits for one of those to be applied here, so this bounds how many changes made
 * through other members meanwhile one change may lose to (a member adding a dozen roles at once makes a
 * dozen).
 */
const MAX_CHANGE_ATTEMPTS = 100
/**
 * How long a change refused with CONFLICT waits for this member's copy to apply the change that came
 * first, when the refusal arrives before it (the leader checks the condition against what it has
 * evaluated, which this member may not have applied yet).
 */
const CONFLICT_APPLY_WAIT_MS = 5000

export interface AuthOptions {
  /** How long a simple token lives after its last use. */
  tokenTtlMs: number
  /** scrypt cost as log2 of N. */
  passwordHashCost: number
  /** Password checks that may wait for the hasher before more are refused. */
  maxPendingLogins: number
  /** The hashing thread's nice value. */
  hashThreadNice: number
  hashNormalPerSecond: number
  /** The token provider (JWT, jwt.ts); simple tokens with tokenTtlMs when absent. */
  tokens?: TokenProvider
  /** Failed-login throttling (login-throttle.ts); none when absent. */
  loginThrottle?: LoginThrottleOptions
}

export class AuthStore {
  private current: S.AuthState
  private chain: Promise<unknown> = Promise.resolve()
  /** Whether the log holds an auth record yet (the first change writes it on condition that none does). */
  private recorded = false
  readonly tokens: TokenProvider
  private readonly hasher: PasswordHasher
  private readonly throttle: LoginThrottle | undefined
  private unsubscribe: (() => void) | undefined
  /** Called when the copy applies a record (changes waiting for the one that beat them). */
  private readonly onApplied = new Set<() => void>()
  /** Told after each change becomes current here (sessions re-check their identities: authorizer.ts). */
  private readonly changeListeners = new Set<() => void>()

  private constructor(
    private readonly log: Log,
    state: S.AuthState,
    o: AuthOptions,
  ) {
    this.current = state
    this.tokens = o.tokens ?? new SimpleTokens(o.tokenTtlMs)
    this.hasher = new PasswordHasher(o.passwordHashCost, o.maxPendingLogins, o.hashThreadNice, o.hashNormalPerSecond)
    this.throttle = o.loginThrottle && new LoginThrottle(o.loginThrottle)
  }

  static async open(log: Log, o: AuthOptions): Promise<AuthStore> {
    const store = new AuthStore(log, S.emptyState(), o)
    // Subscribed before the read, so that no change applied in between is missed.
    store.unsubscribe = log.onMeta?.((name, value) => {
      if (name === META) store.applied(value)
    })
    const raw = await log.readMeta(META)
    if (raw !== undefined) store.applied(raw)
    return store
  }

  /**
   * A record this member's copy applied: its own change, or (in a cluster) one made through another
   * member. The newer auth revision wins; disabling auth ends the tokens issued here.
   */
  private applied(raw: unknown): void {
    const next = S.reviveState(raw)
    this.recorded = true
    if (next.revision < this.current.revision) return
    const before = this.current
    this.current = next
    for (const fn of [...this.onApplied]) fn()
    if (before.enabled && !next.enabled) this.tokens.clear()
    // A user deleted, or given a new password, through any member: the tokens this member issued to
    // them end here too (etcd ends a user's tokens on both).
    else
      for (const u of before.users) {
        if (S.findUser(next, u.name)?.password !== u.password) this.tokens.revokeUser(u.name)
      }
    this.changed()
  }

  /** Calls `fn` after every change of the auth state, until the returned function is called. */
  onChange(fn: () => void): () => void {
    this.changeListeners.add(fn)
    return () => this.changeListeners.delete(fn)
  }

  private changed(): void {
    for (const fn of [...this.changeListeners]) fn()
  }

  /**
   * True once the copy has applied a record newer than `base` (at once if it already has); false if none
   * comes within CONFLICT_APPLY_WAIT_MS, or the store applies only its own changes (no onMeta).
   */
  private appliedSince(base: S.AuthState): Promise<boolean> {
    if (this.current !== base) return Promise.resolve(true)
    if (this.unsubscribe === undefined) return Promise.resolve(false)
    return new Promise((resolve) => {
      const done = (applied: boolean) => {
        clearTimeout(timer)
        this.onApplied.delete(check)
        resolve(applied)
      }
      const check = () => {
        if (this.current !== base) done(true)
      }
      const timer = setTimeout(() => done(false), CONFLICT_APPLY_WAIT_MS)
      this.onApplied.add(check)
    })
  }

  /** The current state: treat as read-only (it is replaced, never changed in place). */
  get state(): S.AuthState {
    return this.current
  }

  get enabled(): boolean {
    return this.current.enabled
  }

  /**
   * Applies `change` to a copy, persists it with the auth revision raised, and makes it current. The
   * write is conditional on the auth revision it started from: in a cluster, when another member's change
   * was applied first (CONFLICT), `change` waits until this copy has applied that one (it may learn of the
   * refusal first) and is applied again to the record as it now is (its checks too: a user added
   * meanwhile exists).
   */
  change(change: (draft: S.AuthState) => void): Promise<S.AuthState> {
    const run = this.chain.then(async () => {
      for (let attempt = 1; ; attempt++) {
        const base = this.current
        // Before the first change there is no record (meta-condition.ts counts that as revision 0).
        const ifRevision = this.recorded ? base.revision : 0
        const draft = S.cloneState(base)
        change(draft)
        draft.revision = base.revision + 1
        try {
          await this.log.writeMeta(META, draft, { ifRevision })
        } catch (err) {
          const conflict = err instanceof KvlogError && err.code === 'CONFLICT'
          if (conflict && attempt < MAX_CHANGE_ATTEMPTS && (await this.appliedSince(base))) continue
          throw err
        }
        // With onMeta the record the copy applied last is already current (in a cluster it may be another
        // member's change, applied after this one: all members end with the same record).
        this.recorded = true
        if (this.unsubscribe === undefined) {
          this.current = draft
          this.changed()
        }
        return draft
      }
    })
    this.chain = run.catch(() => undefined)
    return run
  }

  async addUser(name: string, password: string, noPassword: boolean): Promise<void> {
    if (name === '') throw authError('USER_EMPTY')
    if (S.findUser(this.current, name) !== undefined) throw authError('USER_EXISTS')
    const hash = noPassword ? '' : await this.hasher.hash(password)
    await this.change((s) => S.addUser(s, name, hash))
  }

  async changePassword(name: string, password: string): Promise<void> {
    if (S.findUser(this.current, name) === undefined) throw authError('USER_NOT_FOUND')
    const hash = await this.hasher.hash(password)
    await this.change((s) => S.changePassword(s, name, hash))
    this.tokens.revokeUser(name)
  }

  async deleteUser(name: string): Promise<void> {
    await this.change((s) => S.deleteUser(s, name))
    this.tokens.revokeUser(name)
  }

  async disable(): Promise<void> {
    await this.change(S.disable)
    this.tokens.clear()
  }

  /**
   * etcd's Authenticate: a new token for a user whose password matches, at the current auth revision.
   * `source`: the client's address, for the login throttle.
   */
  async authenticate(name: string, password: string, source?: string): Promise<string> {
    if (!this.current.enabled) throw authError('AUTH_NOT_ENABLED')
    if (this.throttle !== undefined) return this.throttle.attempt(source, name, () => this.checkPassword(name, password))
    return this.checkPassword(name, password)
  }

  private async checkPassword(name: string, password: string): Promise<string> {
    const user = S.findUser(this.current, name)
    // An unknown user costs a hash too: the answer's timing does not tell which names exist.
    const ok = await this.hasher.verify(password, user?.password ?? '')
    if (!ok || user === undefined || S.findUser(this.current, name) === undefined) throw authError('AUTH_FAILED')
    return this.tokens.issue(name, this.current.revision)
  }

  close(): void {
    this.unsubscribe?.()
    this.tokens.close()
    this.hasher.close()
  }
}
