/**
 * The auth state (etcd's auth store): users, roles, their key-range permissions, whether auth is enabled,
 * and the auth revision, which every change raises by one. The functions here apply one change to a
 * draft copy with etcd's rules and errors; AuthStore (store.ts) makes the copy, persists it through the
 * log and swaps it in.
 *
 * etcd's rules kept here: user `root` must exist and hold role `root` before auth can be enabled; while
 * auth is enabled root cannot be deleted nor lose role root; role `root` may be granted without existing
 * as a role (it means every permission, and the maintenance calls); a role's permissions are kept sorted
 * by key and a grant on the same (key, rangeEnd) replaces the type; deleting a role takes it from every
 * user; names, roles of a user, and lists are in byte order.
 */
import { authError } from './errors.js'

export const ROOT = 'root'

export type PermissionType = 'READ' | 'WRITE' | 'READWRITE'

export interface Permission {
  type: PermissionType
  key: Buffer
  /** Empty = the one key; "\0" = every key >= key; else [key, rangeEnd). */
  rangeEnd: Buffer
}

export interface User {
  name: string
  /** The password hash (passwords.ts), or '' for a user created with noPassword (no password login). */
  password: string
  roles: string[]
}

export interface Role {
  name: string
  permissions: Permission[]
}

export interface AuthState {
  enabled: boolean
  revision: number
  users: User[]
  roles: Role[]
}

export function emptyState(): AuthState {
  return { enabled: false, revision: 1, users: [], roles: [] }
}

export function cloneState(s: AuthState): AuthState {
  return {
    enabled: s.enabled,
    revision: s.revision,
    users: s.users.map((u) => ({ ...u, roles: [...u.roles] })),
    roles: s.roles.map((r) => ({ name: r.name, permissions: r.permissions.map((p) => ({ ...p })) })),
  }
}

/** The state as read back from storage (msgpack gives Uint8Arrays where Buffers were written). */
export function reviveState(raw: unknown): AuthState {
  const s = raw as AuthState
  return {
    enabled: s.enabled === true,
    revision: s.revision,
    users: s.users.map((u) => ({ name: u.name, password: u.password, roles: [...u.roles] })),
    roles: s.roles.map((r) => ({
      name: r.name,
      permissions: r.permissions.map((p) => ({ type: p.type, key: Buffer.from(p.key), rangeEnd: Buffer.from(p.rangeEnd) })),
    })),
  }
}

const byName = (a: { name: string }, b: { name: string }) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name))

export function findUser(s: AuthState, name: string): User | undefined {
  return s.users.find((u) => u.name === name)
}

export function findRole(s: AuthState, name: string): Role | undefined {
  return s.roles.find((r) => r.name === name)
}

export function hasRootRole(u: User): boolean {
  return u.roles.includes(ROOT)
}

function mustUser(s: AuthState, name: string): User {
  const u = findUser(s, name)
  if (u === undefined) throw authError('USER_NOT_FOUND')
  return u
}

function mustRole(s: AuthState, name: string): Role {
  const r = findRole(s, name)
  if (r === undefined) throw authError('ROLE_NOT_FOUND')
  return r
}

export function enable(s: AuthState): void {
  if (s.enabled) return
  const root = findUser(s, ROOT)
  if (root === undefined) throw authError('ROOT_USER_NOT_EXIST')
  if (!hasRootRole(root)) throw authError('ROOT_ROLE_NOT_EXIST')
  s.enabled = true
}

export function disable(s: AuthState): void {
  s.enabled = false
}

/** `password` is already hashed. */
export function addUser(s: AuthState, name: string, password: string): void {
  if (name === '') throw authError('USER_EMPTY')
  if (findUser(s, name) !== undefined) throw authError('USER_EXISTS')
  s.users.push({ name, password, roles: [] })
  s.users.sort(byName)
}

export function deleteUser(s: AuthState, name: string): void {
  if (s.enabled && name === ROOT) throw authError('INVALID_AUTH_MGMT')
  mustUser(s, name)
  s.users = s.users.filter((u) => u.name !== name)
}

export function changePassword(s: AuthState, name: string, password: string): void {
  mustUser(s, name).password = password
}

export function grantRole(s: AuthState, name: string, role: string): void {
  const u = mustUser(s, name)
  if (role !== ROOT) mustRole(s, role)
  if (u.roles.includes(role)) return
  u.roles.push(role)
  u.roles.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
}

export function revokeRole(s: AuthState, name: string, role: string): void {
  if (s.enabled && name === ROOT && role === ROOT) throw authError('INVALID_AUTH_MGMT')
  const u = mustUser(s, name)
  if (!u.roles.includes(role)) throw authError('ROLE_NOT_GRANTED')
  u.roles = u.roles.filter((r) => r !== role)
}

export function addRole(s: AuthState, name: string): void {
  if (name === '') throw authError('ROLE_EMPTY')
  if (findRole(s, name) !== undefined) throw authError('ROLE_EXISTS')
  s.roles.push({ name, permissions: [] })
  s.roles.sort(byName)
}

export function deleteRole(s: AuthState, name: string): void {
  if (s.enabled && name === ROOT) throw authError('INVALID_AUTH_MGMT')
  mustRole(s, name)
  s.roles = s.roles.filter((r) => r.name !== name)
  for (const u of s.users) u.roles = u.roles.filter((r) => r !== name)
}

export function grantPermission(s: AuthState, role: string, perm: Permission): void {
  const r = mustRole(s, role)
  const same = r.permissions.find((p) => p.key.equals(perm.key) && p.rangeEnd.equals(perm.rangeEnd))
  if (same !== undefined) {
    same.type = perm.type
    return
  }
  r.permissions.push(perm)
  // Stable: permissions on the same key keep their grant order, as etcd's sort.Sort happens to leave them.
  r.permissions.sort((a, b) => Buffer.compare(a.key, b.key))
}

export function revokePermission(s: AuthState, role: string, key: Buffer, rangeEnd: Buffer): void {
  const r = mustRole(s, role)
  const i = r.permissions.findIndex((p) => p.key.equals(key) && p.rangeEnd.equals(rangeEnd))
  if (i < 0) throw authError('PERMISSION_NOT_GRANTED')
  r.permissions.splice(i, 1)
}
