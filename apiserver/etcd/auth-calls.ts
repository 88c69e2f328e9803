/**
 * etcd's Auth API as transport-neutral calls: each takes the caller's identity and a decoded request (the
 * shapes of proto.ts) and returns the response object, so the gRPC service (auth-service.ts) and the JSON
 * gateway share one implementation.
 *
 * Who may call what, as etcd: with auth enabled, every management call needs role root, except UserGet
 * of oneself, RoleGet of a role one holds, AuthStatus (anyone) and Authenticate (no identity needed).
 * Errors carry etcd's reasons (apiserver/auth/errors.ts), which errors.ts turns into etcd's messages.
 */
import type { Authorizer, Identity } from '../auth/authorizer.js'
import { authError } from '../auth/errors.js'
import * as S from '../auth/state.js'
import type { Headers } from './identity.js'
import type { Message } from './proto.js'

const PERM_TYPES: readonly S.PermissionType[] = ['READ', 'WRITE', 'READWRITE']
const EMPTY = Buffer.alloc(0)

export type AuthCall = (who: Identity, request: Message) => Promise<Message>

function str(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

function bytes(v: unknown): Buffer {
  return Buffer.isBuffer(v) ? v : v instanceof Uint8Array ? Buffer.from(v) : EMPTY
}

export function authCalls(auth: Authorizer, headers: Headers): Record<string, AuthCall> {
  const store = auth.store
  const done = (): Message => ({ header: headers.header() })
  const admin =
    (fn: (who: Identity, r: Message) => Promise<unknown>): AuthCall =>
    async (who, r) => {
      auth.checkAdmin(who)
      await fn(who, r)
      return done()
    }
  return {
    AuthEnable: admin(() => store.change(S.enable)),
    AuthDisable: admin(() => store.disable()),
    AuthStatus: async () => ({ header: headers.header(), enabled: store.state.enabled, authRevision: store.state.revision }),
    Authenticate: async (_who, r) => ({ header: headers.header(), token: await store.authenticate(str(r.name), str(r.password)) }),

    UserAdd: admin((_who, r) => {
      const options = (r.options ?? {}) as Message
      return store.addUser(str(r.name), str(r.password), options.no_password === true)
    }),
    UserGet: async (who, r) => {
      const name = str(r.name)
      auth.checkAdminOrSelf(who, name)
      const user = S.findUser(store.state, name)
      if (user === undefined) throw authError('USER_NOT_FOUND')
      return { header: headers.header(), roles: user.roles }
    },
    UserList: async (who) => {
      auth.checkAdmin(who)
      return { header: headers.header(), users: store.state.users.map((u) => u.name) }
    },
    UserDelete: admin((_who, r) => store.deleteUser(str(r.name))),
    UserChangePassword: admin((_who, r) => store.changePassword(str(r.name), str(r.password))),
    UserGrantRole: admin((_who, r) => store.change((s) => S.grantRole(s, str(r.user), str(r.role)))),
    UserRevokeRole: admin((_who, r) => store.change((s) => S.revokeRole(s, str(r.name), str(r.role)))),

    RoleAdd: admin((_who, r) => store.change((s) => S.addRole(s, str(r.name)))),
    RoleGet: async (who, r) => {
      const name = str(r.role)
      auth.checkAdminOrHolder(who, name)
      const role = S.findRole(store.state, name)
      if (role === undefined) throw authError('ROLE_NOT_FOUND')
      return {
        header: headers.header(),
        perm: role.permissions.map((p) => ({ permType: PERM_TYPES.indexOf(p.type), key: p.key, range_end: p.rangeEnd })),
      }
    },
    RoleList: async (who) => {
      auth.checkAdmin(who)
      return { header: headers.header(), roles: store.state.roles.map((r) => r.name) }
    },
    RoleDelete: admin((_who, r) => store.change((s) => S.deleteRole(s, str(r.role)))),
    RoleGrantPermission: admin((_who, r) => {
      const perm = (r.perm ?? {}) as Message
      const type = PERM_TYPES.includes(perm.permType as S.PermissionType) ? (perm.permType as S.PermissionType) : 'READ'
      return store.change((s) => S.grantPermission(s, str(r.name), { type, key: bytes(perm.key), rangeEnd: bytes(perm.range_end) }))
    }),
    RoleRevokePermission: admin((_who, r) => store.change((s) => S.revokePermission(s, str(r.role), bytes(r.key), bytes(r.range_end)))),
  }
}
