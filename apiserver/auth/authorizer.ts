/**
 * The one authorizer below the doors. A door turns what a request carries (a token, a verified client
 * certificate's CN) into an Identity with `identify`, then asks before it touches anything:
 *
 *   - checkRange(read|write) for every key or range a request reads or writes;
 *   - checkTxn for a transaction: READ on every compare's range, and every op of both branches, nested
 *     transactions too, whichever branch would run (as etcd: the outcome must not reveal what a user may
 *     not read);
 *   - checkAdmin for what needs role root (auth management, membership, compaction, defragment,
 *     snapshot, hash...).
 *
 * With auth disabled every check passes and tokens are not looked at. With auth enabled a request without
 * identity fails UNAUTHENTICATED, a user without a covering permission PERMISSION_DENIED; role root may do
 * everything. A JWT issued before the last change of the auth state is refused by key and admin checks
 * alike (AUTH_OLD_REVISION), so a password change ends every earlier token. Checks read the current
 * state, so a revoked permission applies to the next request; sessions that outlive one request (running
 * watches) are checked again with `recheck` after each change (onChange).
 */
import type { Compare, Op, TxnRequest } from '../../log/types.js'
import { authError } from './errors.js'
import { covers, mergeIntervals, toInterval, type Interval } from './ranges.js'
import { findRole, findUser, hasRootRole, ROOT, type AuthState, type User } from './state.js'
import type { AuthStore } from './store.js'

export type Access = 'read' | 'write'

export interface Identity {
  /** The user name, undefined for an anonymous request. */
  user: string | undefined
  /** Where the name came from; recorded with writes (who changed what). */
  via: 'anonymous' | 'token' | 'cert' | 'static-token'
  /**
   * The auth revision a JWT was issued at. Key and role-root checks refuse it once the auth state has
   * changed since (etcd's ErrAuthOldRevision; etcd's IsAdminPermitted skips this, kvlog does not).
   */
  authRevision?: number
  /**
   * For a token: the user's password hash when the token was checked. A session that outlives the
   * request (a running watch) ends when the password changes (recheck).
   */
  credential?: string
}

export const ANONYMOUS: Identity = { user: undefined, via: 'anonymous' }

export interface Credentials {
  /** A token from the request (gRPC `token` metadata, `Authorization: Bearer`). */
  token?: string
  /** The CN of a verified client certificate; used only with clientCertAuth. */
  certCn?: string
}

interface UserPerms {
  read: Interval[]
  write: Interval[]
}

const asBuffer = (b: Uint8Array | string): Buffer =>
  typeof b === 'string' ? Buffer.from(b) : Buffer.from(b.buffer, b.byteOffset, b.byteLength)

export class Authorizer {
  /** Merged permissions per user, for one state (a new state starts a new cache). */
  private cache = new WeakMap<AuthState, Map<string, UserPerms>>()

  /**
   * `staticTokens`: token → user, from tokenAuthFile (token-file.ts). `clientCertAuth`: a verified client
   * certificate's CN names the user of a request without a token.
   */
  constructor(
    readonly store: AuthStore,
    private readonly clientCertAuth: boolean,
    private readonly staticTokens: ReadonlyMap<string, string> = new Map(),
  ) {}

  get enabled(): boolean {
    return this.store.enabled
  }

  /** The identity a request's credentials prove. A token that is unknown or expired fails (with auth on). */
  identify(c: Credentials): Identity {
    if (!this.store.enabled) return ANONYMOUS
    if (c.token !== undefined && c.token !== '') {
      const info = this.store.tokens.use(c.token)
      if (info !== undefined) {
        const id: Identity = { user: info.user, via: 'token' }
        if (info.revision !== undefined) id.authRevision = info.revision
        const credential = findUser(this.store.state, info.user)?.password
        if (credential !== undefined) id.credential = credential
        return id
      }
      const fixed = this.staticTokens.get(c.token)
      if (fixed !== undefined) return { user: fixed, via: 'static-token' }
      throw authError('INVALID_TOKEN')
    }
    if (this.clientCertAuth && c.certCn !== undefined && c.certCn !== '') return { user: c.certCn, via: 'cert' }
    return ANONYMOUS
  }

  checkRange(id: Identity, key: Uint8Array | string, rangeEnd: Uint8Array | string | undefined, access: Access): void {
    const user = this.userFor(id)
    if (user === undefined || hasRootRole(user)) return
    const perms = this.permsOf(user)
    const query = toInterval(asBuffer(key), rangeEnd === undefined ? undefined : asBuffer(rangeEnd))
    if (!covers(access === 'read' ? perms.read : perms.write, query)) throw authError('PERMISSION_DENIED')
  }

  /**
   * `leaseKeys` lists the keys attached to a lease: a put that attaches a lease needs WRITE on them too,
   * as a plain put does (a foreign lease cannot be borrowed inside a transaction either).
   */
  checkTxn(id: Identity, txn: TxnRequest, leaseKeys?: (lease: bigint) => Buffer[]): void {
    if (!this.store.enabled) return
    this.checkCompares(id, txn.compare ?? [])
    this.checkOps(id, txn.success ?? [], leaseKeys)
    this.checkOps(id, txn.failure ?? [], leaseKeys)
  }

  /** WRITE on every key already attached to the lease a put attaches (0 = none). */
  checkLease(id: Identity, lease: bigint | number | undefined, leaseKeys: ((lease: bigint) => Buffer[]) | undefined): void {
    if (leaseKeys === undefined || lease === undefined || BigInt(lease) === 0n) return
    for (const k of leaseKeys(BigInt(lease))) this.checkRange(id, k, undefined, 'write')
  }

  /** Role root needed (when auth is enabled). */
  checkAdmin(id: Identity): void {
    const s = this.store.state
    if (!s.enabled) return
    const user = this.knownUser(id, s)
    if (user === undefined) throw authError('USER_NOT_FOUND')
    if (!hasRootRole(user)) throw authError('PERMISSION_DENIED')
  }

  /** Role root, or the user itself (etcd lets users read their own entry). */
  checkAdminOrSelf(id: Identity, name: string): void {
    const s = this.store.state
    if (s.enabled && id.user === name && this.knownUser(id, s) !== undefined) return
    this.checkAdmin(id)
  }

  /** Role root, or a user that holds the role. */
  checkAdminOrHolder(id: Identity, role: string): void {
    const s = this.store.state
    if (s.enabled && id.user !== undefined && this.knownUser(id, s)?.roles.includes(role) === true) return
    this.checkAdmin(id)
  }

  /**
   * For a session that outlives its request (a running watch), after a change of the auth state: its
   * user still exists with the same password and may still read the range; else PERMISSION_DENIED.
   * A JWT's auth revision is not held against it here: an unrelated change does not end every watch.
   */
  recheck(id: Identity, key: Uint8Array | string, rangeEnd: Uint8Array | string | undefined): void {
    const s = this.store.state
    if (!s.enabled) return
    if (id.user === undefined) throw authError('PERMISSION_DENIED', 'the session has no identity')
    const user = findUser(s, id.user)
    if (user === undefined) throw authError('PERMISSION_DENIED', `user ${id.user} no longer exists`)
    if (id.credential !== undefined && user.password !== id.credential)
      throw authError('PERMISSION_DENIED', `the password of ${id.user} has changed`)
    this.checkRange({ user: id.user, via: id.via }, key, rangeEnd, 'read')
  }

  /** Calls `fn` after every change of users, roles, permissions or auth enablement. */
  onChange(fn: () => void): () => void {
    return this.store.onChange(fn)
  }

  private checkCompares(id: Identity, compares: Compare[]): void {
    for (const c of compares) this.checkRange(id, c.key, c.rangeEnd, 'read')
  }

  private checkOps(id: Identity, ops: Op[], leaseKeys: ((lease: bigint) => Buffer[]) | undefined): void {
    for (const op of ops) {
      switch (op.type) {
        case 'range':
          this.checkRange(id, op.key, op.rangeEnd, 'read')
          break
        case 'put':
          this.checkRange(id, op.key, undefined, 'write')
          if (op.prevKv === true) this.checkRange(id, op.key, undefined, 'read')
          this.checkLease(id, op.lease, leaseKeys)
          break
        case 'delete':
          this.checkRange(id, op.key, op.rangeEnd, 'write')
          if (op.prevKv === true) this.checkRange(id, op.key, op.rangeEnd, 'read')
          break
        case 'txn':
          this.checkCompares(id, op.compare ?? [])
          this.checkOps(id, op.success ?? [], leaseKeys)
          this.checkOps(id, op.failure ?? [], leaseKeys)
          break
      }
    }
  }

  /** The user to check permissions for; undefined when auth is off (everything passes). */
  private userFor(id: Identity): User | undefined {
    const s = this.store.state
    if (!s.enabled) return undefined
    const user = this.knownUser(id, s)
    if (user === undefined) throw authError('PERMISSION_DENIED')
    return user
  }

  /** The caller's user with auth enabled: an identity is needed, and a JWT must be current. */
  private knownUser(id: Identity, s: AuthState): User | undefined {
    if (id.user === undefined) throw authError('NO_IDENTITY')
    if (id.authRevision !== undefined && id.authRevision < s.revision) throw authError('AUTH_OLD_REVISION')
    return findUser(s, id.user)
  }

  private permsOf(user: User): UserPerms {
    const s = this.store.state
    let byUser = this.cache.get(s)
    if (byUser === undefined) {
      byUser = new Map()
      this.cache.set(s, byUser)
    }
    let perms = byUser.get(user.name)
    if (perms === undefined) {
      const read: Interval[] = []
      const write: Interval[] = []
      for (const name of user.roles) {
        if (name === ROOT) continue
        for (const p of findRole(s, name)?.permissions ?? []) {
          const i = toInterval(p.key, p.rangeEnd)
          if (p.type !== 'WRITE') read.push(i)
          if (p.type !== 'READ') write.push({ ...i })
        }
      }
      perms = { read: mergeIntervals(read), write: mergeIntervals(write) }
      byUser.set(user.name, perms)
    }
    return perms
  }
}
