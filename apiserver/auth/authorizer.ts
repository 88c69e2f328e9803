/**
 * The one authorizer below the doors. A door turns what a request carries (a token, a verified client
 * certificate's CN) into an Identity with `identify`, then asks before it touches anything:
 *
 *   - checkRange(read|write) for every key or range a request reads or writes;
 *   - checkTxn for a transaction: READ on every compare's range, and every op of both branches, nested
 *     transactions too, whichever branch would run (as etcd: the outcome must not reveal what a user may
 *     not read);
 *   - checkAdmin for what needs role root (auth management, compaction, defragment, snapshot, hash...).
 *
 * With auth disabled every check passes and tokens are not looked at. With auth enabled a request without
 * identity fails UNAUTHENTICATED, a user without a covering permission PERMISSION_DENIED; role root may do
 * everything. Checks read the current state, so a revoked permission applies to the next request.
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
   * The auth revision a JWT was issued at. Key checks refuse it once the auth state has changed since
   * (etcd's ErrAuthOldRevision; role-root checks do not, as etcd's IsAdminPermitted).
   */
  authRevision?: number
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
      if (info !== undefined)
        return info.revision === undefined
          ? { user: info.user, via: 'token' }
          : { user: info.user, via: 'token', authRevision: info.revision }
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

  checkTxn(id: Identity, txn: TxnRequest): void {
    if (!this.store.enabled) return
    this.checkCompares(id, txn.compare ?? [])
    this.checkOps(id, txn.success ?? [])
    this.checkOps(id, txn.failure ?? [])
  }

  /** Role root needed (when auth is enabled). */
  checkAdmin(id: Identity): void {
    const s = this.store.state
    if (!s.enabled) return
    if (id.user === undefined) throw authError('NO_IDENTITY')
    const user = findUser(s, id.user)
    if (user === undefined) throw authError('USER_NOT_FOUND')
    if (!hasRootRole(user)) throw authError('PERMISSION_DENIED')
  }

  /** Role root, or the user itself (etcd lets users read their own entry). */
  checkAdminOrSelf(id: Identity, name: string): void {
    if (this.store.enabled && id.user !== undefined && id.user === name) return
    this.checkAdmin(id)
  }

  /** Role root, or a user that holds the role. */
  checkAdminOrHolder(id: Identity, role: string): void {
    const s = this.store.state
    if (s.enabled && id.user !== undefined && findUser(s, id.user)?.roles.includes(role) === true) return
    this.checkAdmin(id)
  }

  private checkCompares(id: Identity, compares: Compare[]): void {
    for (const c of compares) this.checkRange(id, c.key, c.rangeEnd, 'read')
  }

  private checkOps(id: Identity, ops: Op[]): void {
    for (const op of ops) {
      switch (op.type) {
        case 'range':
          this.checkRange(id, op.key, op.rangeEnd, 'read')
          break
        case 'put':
          this.checkRange(id, op.key, undefined, 'write')
          if (op.prevKv === true) this.checkRange(id, op.key, undefined, 'read')
          break
        case 'delete':
          this.checkRange(id, op.key, op.rangeEnd, 'write')
          if (op.prevKv === true) this.checkRange(id, op.key, op.rangeEnd, 'read')
          break
        case 'txn':
          this.checkCompares(id, op.compare ?? [])
          this.checkOps(id, op.success ?? [])
          this.checkOps(id, op.failure ?? [])
          break
      }
    }
  }

  /** The user to check permissions for; undefined when auth is off (everything passes). */
  private userFor(id: Identity): User | undefined {
    const s = this.store.state
    if (!s.enabled) return undefined
    if (id.user === undefined) throw authError('NO_IDENTITY')
    if (id.authRevision !== undefined && id.authRevision < s.revision) throw authError('AUTH_OLD_REVISION')
    const user = findUser(s, id.user)
    if (user === undefined) throw authError('PERMISSION_DENIED')
    return user
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
