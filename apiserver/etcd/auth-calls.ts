/**
 * etcd's Auth API as transport-neutral calls: each takes the caller's identity and a decoded request (the
 * shapes of proto.ts) and returns the response object, so the gRPC service (auth-service.ts) and the JSON
 * gateway share one implementation.
 *
 * Who may call what is decided by auth/admin.ts (as etcd); Authenticate needs no identity. Errors carry
 * etcd's reasons (apiserver/auth/errors.ts), which errors.ts turns into etcd's messages.
 */
import { AuthAdmin, PERMISSION_TYPES } from '../auth/admin.js'
import type { Authorizer, Identity } from '../auth/authorizer.js'
import type { PermissionType } from '../auth/state.js'
import type { Headers } from './identity.js'
import type { Message } from './proto.js'

const EMPTY = Buffer.alloc(0)

/** `source`: the client's address (Authenticate's login throttle). */
export type AuthCall = (who: Identity, request: Message, source?: string) => Promise<Message>

function str(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

function bytes(v: unknown): Buffer {
  return Buffer.isBuffer(v) ? v : v instanceof Uint8Array ? Buffer.from(v) : EMPTY
}

export function authCalls(auth: Authorizer, headers: Headers): Record<string, AuthCall> {
  const admin = new AuthAdmin(auth)
  const done =
    (fn: (who: Identity, r: Message) => Promise<unknown>): AuthCall =>
    async (who, r) => {
      await fn(who, r)
      return { header: headers.header() }
    }
  return {
    AuthEnable: done((who) => admin.enable(who)),
    AuthDisable: done((who) => admin.disable(who)),
    AuthStatus: async () => ({ header: headers.header(), ...admin.status() }),
    Authenticate: async (_who, r, source) => ({
      header: headers.header(),
      token: await auth.store.authenticate(str(r.name), str(r.password), source),
    }),

    UserAdd: done((who, r) => admin.addUser(who, str(r.name), str(r.password), ((r.options ?? {}) as Message).no_password === true)),
    UserGet: async (who, r) => ({ header: headers.header(), roles: admin.getUser(who, str(r.name)).roles }),
    UserList: async (who) => ({ header: headers.header(), users: admin.listUsers(who) }),
    UserDelete: done((who, r) => admin.deleteUser(who, str(r.name))),
    UserChangePassword: done((who, r) => admin.changePassword(who, str(r.name), str(r.password))),
    UserGrantRole: done((who, r) => admin.grantRole(who, str(r.user), str(r.role))),
    UserRevokeRole: done((who, r) => admin.revokeRole(who, str(r.name), str(r.role))),

    RoleAdd: done((who, r) => admin.addRole(who, str(r.name))),
    RoleGet: async (who, r) => ({
      header: headers.header(),
      perm: admin
        .getRole(who, str(r.role))
        .permissions.map((p) => ({ permType: PERMISSION_TYPES.indexOf(p.type), key: p.key, range_end: p.rangeEnd })),
    }),
    RoleList: async (who) => ({ header: headers.header(), roles: admin.listRoles(who) }),
    RoleDelete: done((who, r) => admin.deleteRole(who, str(r.role))),
    RoleGrantPermission: done((who, r) => {
      const perm = (r.perm ?? {}) as Message
      const type = PERMISSION_TYPES.includes(perm.permType as PermissionType) ? (perm.permType as PermissionType) : 'READ'
      return admin.grantPermission(who, str(r.name), { type, key: bytes(perm.key), rangeEnd: bytes(perm.range_end) })
    }),
    RoleRevokePermission: done((who, r) => admin.revokePermission(who, str(r.role), bytes(r.key), bytes(r.range_end))),
  }
}
