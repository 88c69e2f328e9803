/**
 * Auth management on the native door (docs/api.md, /v1/auth): etcd's Auth API with kvlog's JSON shapes.
 * With auth enabled, the client's credentials must be role root's for everything but status, reading
 * one's own user and reading a role one holds.
 */
import { bytesField, bytesParam, readBytes, type Bytes, type KeyRange } from './codec.js'
import { exchange, type HttpOptions } from './http.js'

export type PermissionType = 'READ' | 'WRITE' | 'READWRITE'

export interface Permission {
  type: PermissionType
  key: Buffer
  /** Absent: the one key; "\0": every key from key on; else [key, rangeEnd). */
  rangeEnd?: Buffer
}

export interface AuthStatus {
  enabled: boolean
  authRevision: number
}

const seg = (s: string) => encodeURIComponent(s)

export class AuthApi {
  constructor(private readonly http: HttpOptions) {}

  private call<T>(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown, query?: URLSearchParams): Promise<T> {
    return exchange<T>(this.http, { method, path, body, query, idempotent: method !== 'POST' })
  }

  async status(): Promise<AuthStatus> {
    const r = await this.call<AuthStatus>('GET', '/v1/auth/status')
    return { enabled: r.enabled, authRevision: r.authRevision }
  }

  async enable(): Promise<void> {
    await this.call('POST', '/v1/auth/enable')
  }

  async disable(): Promise<void> {
    await this.call('POST', '/v1/auth/disable')
  }

  async users(): Promise<string[]> {
    return (await this.call<{ users: string[] }>('GET', '/v1/auth/users')).users
  }

  /** `password` undefined: a user without a password (it authenticates by client certificate only). */
  async addUser(name: string, password: string | undefined): Promise<void> {
    await this.call('POST', '/v1/auth/users', password === undefined ? { name, noPassword: true } : { name, password })
  }

  async getUser(name: string): Promise<{ name: string; roles: string[] }> {
    return (await this.call<{ user: { name: string; roles: string[] } }>('GET', `/v1/auth/users/${seg(name)}`)).user
  }

  async deleteUser(name: string): Promise<void> {
    await this.call('DELETE', `/v1/auth/users/${seg(name)}`)
  }

  async changePassword(name: string, password: string): Promise<void> {
    await this.call('PUT', `/v1/auth/users/${seg(name)}/password`, { password })
  }

  async grantRole(user: string, role: string): Promise<void> {
    await this.call('PUT', `/v1/auth/users/${seg(user)}/roles/${seg(role)}`)
  }

  async revokeRole(user: string, role: string): Promise<void> {
    await this.call('DELETE', `/v1/auth/users/${seg(user)}/roles/${seg(role)}`)
  }

  async roles(): Promise<string[]> {
    return (await this.call<{ roles: string[] }>('GET', '/v1/auth/roles')).roles
  }

  async addRole(name: string): Promise<void> {
    await this.call('POST', '/v1/auth/roles', { name })
  }

  async getRole(name: string): Promise<{ name: string; permissions: Permission[] }> {
    const r = await this.call<{ role: { name: string; permissions: Array<Record<string, unknown>> } }>('GET', `/v1/auth/roles/${seg(name)}`)
    return {
      name: r.role.name,
      permissions: r.role.permissions.map((p) => {
        const rangeEnd = readBytes(p, 'rangeEnd')
        return { type: p.type as PermissionType, key: readBytes(p, 'key'), ...(rangeEnd.length > 0 ? { rangeEnd } : {}) }
      }),
    }
  }

  async deleteRole(name: string): Promise<void> {
    await this.call('DELETE', `/v1/auth/roles/${seg(name)}`)
  }

  async grantPermission(role: string, type: PermissionType, key: Bytes, range: KeyRange = {}): Promise<void> {
    const body: Record<string, unknown> = { type }
    bytesField(body, 'key', key)
    if (range.prefix === true) body.prefix = true
    if (range.fromKey === true) body.fromKey = true
    if (range.rangeEnd !== undefined) bytesField(body, 'rangeEnd', range.rangeEnd)
    await this.call('POST', `/v1/auth/roles/${seg(role)}/permissions`, body)
  }

  async revokePermission(role: string, key: Bytes, range: KeyRange = {}): Promise<void> {
    const q = new URLSearchParams()
    bytesParam(q, 'key', key)
    if (range.prefix === true) q.set('prefix', 'true')
    if (range.fromKey === true) q.set('fromKey', 'true')
    if (range.rangeEnd !== undefined) bytesParam(q, 'rangeEnd', range.rangeEnd)
    await this.call('DELETE', `/v1/auth/roles/${seg(role)}/permissions`, undefined, q)
  }
}
