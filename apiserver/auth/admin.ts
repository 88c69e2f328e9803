/**
 * Auth management (etcd's Auth API) as plain calls, for every door: the etcd door's gRPC service and
 * gateway (etcd/auth-calls.ts) and the native door's /v1/auth routes (http/routes/auth-*.ts) both call
 * these, so who may do what is decided once.
 *
 * Who may call what, as etcd: with auth enabled, every change and every list needs role root; a user may
 * read its own entry and a role it holds; status needs nothing. Errors carry etcd's reasons (errors.ts).
 */
import type { Authorizer, Identity } from './authorizer.js'
import { authError } from './errors.js'
import * as S from './state.js'

export const PERMISSION_TYPES: readonly S.PermissionType[] = ['READ', 'WRITE', 'READWRITE']

export class AuthAdmin {
  constructor(private readonly auth: Authorizer) {}

  private get store() {
    return this.auth.store
  }

  status(): { enabled: boolean; authRevision: number } {
    return { enabled: this.store.state.enabled, authRevision: this.store.state.revision }
  }

  async enable(who: Identity): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.change(S.enable)
  }

  async disable(who: Identity): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.disable()
  }

  async addUser(who: Identity, name: string, password: string, noPassword: boolean): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.addUser(name, password, noPassword)
  }

  getUser(who: Identity, name: string): S.User {
    this.auth.checkAdminOrSelf(who, name)
    const user = S.findUser(this.store.state, name)
    if (user === undefined) throw authError('USER_NOT_FOUND')
    return user
  }

  listUsers(who: Identity): string[] {
    this.auth.checkAdmin(who)
    return this.store.state.users.map((u) => u.name)
  }

  async deleteUser(who: Identity, name: string): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.deleteUser(name)
  }

  async changePassword(who: Identity, name: string, password: string): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.changePassword(name, password)
  }

  async grantRole(who: Identity, user: string, role: string): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.change((s) => S.grantRole(s, user, role))
  }

  async revokeRole(who: Identity, user: string, role: string): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.change((s) => S.revokeRole(s, user, role))
  }

  async addRole(who: Identity, name: string): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.change((s) => S.addRole(s, name))
  }

  getRole(who: Identity, name: string): S.Role {
    this.auth.checkAdminOrHolder(who, name)
    const role = S.findRole(this.store.state, name)
    if (role === undefined) throw authError('ROLE_NOT_FOUND')
    return role
  }

  listRoles(who: Identity): string[] {
    this.auth.checkAdmin(who)
    return this.store.state.roles.map((r) => r.name)
  }

  async deleteRole(who: Identity, name: string): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.change((s) => S.deleteRole(s, name))
  }

  async grantPermission(who: Identity, role: string, perm: S.Permission): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.change((s) => S.grantPermission(s, role, perm))
  }

  async revokePermission(who: Identity, role: string, key: Buffer, rangeEnd: Buffer): Promise<void> {
    this.auth.checkAdmin(who)
    await this.store.change((s) => S.revokePermission(s, role, key, rangeEnd))
  }
}
