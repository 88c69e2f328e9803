/**
 * auth enable|disable|status, user ..., role ...: etcdctl's auth commands over the native door's
 * /v1/auth API, with etcdctl's confirmations in the table form and objects with -o json.
 *
 *   user add NAME[:PASSWORD] [--new-user-password PW | --no-password] | get NAME | list | delete NAME
 *        | passwd NAME [--new-user-password PW] | grant-role NAME ROLE | revoke-role NAME ROLE
 *   role add NAME | get NAME | list | delete NAME
 *        | grant-permission ROLE read|write|readwrite KEY [RANGE_END] [--prefix|--from-key]
 *        | revoke-permission ROLE KEY [RANGE_END] [--prefix|--from-key]
 * A missing new password is asked for on the terminal (twice, without echo).
 */
import type { PermissionType } from '../../auth-api.js'
import type { KeyRange } from '../../codec.js'
import { UsageError } from '../args.js'
import { bool, str, type Context } from '../context.js'
import { display, table } from '../output.js'
import { askSecret } from '../secret.js'

export const AUTH_USAGE = 'auth enable | disable | status'
export const USER_USAGE =
  'user add NAME[:PASSWORD] [--new-user-password PW | --no-password] | get NAME | list | delete NAME | passwd NAME [--new-user-password PW] | grant-role NAME ROLE | revoke-role NAME ROLE'
export const ROLE_USAGE =
  'role add NAME | get NAME | list | delete NAME | grant-permission ROLE read|write|readwrite KEY [RANGE_END] [--prefix|--from-key] | revoke-permission ROLE KEY [RANGE_END] [--prefix|--from-key]'

/** The positionals each verb takes, for usage errors. */
function args(c: Context, usage: string, count: number): string[] {
  const [, ...rest] = c.p.args
  if (rest.length < count) throw new UsageError(`missing arguments: ${usage}`)
  if (rest.length > count) throw new UsageError(`unexpected argument ${rest[count]}: ${usage}`)
  return rest
}

/** What the table form prints, or the JSON object. */
function say(c: Context, line: string, json: unknown): number {
  c.out(c.mode === 'json' ? JSON.stringify(json) : line)
  return 0
}

export async function auth(c: Context): Promise<number> {
  const [verb] = c.p.args
  const a = c.client.auth
  switch (verb) {
    case 'enable':
      args(c, AUTH_USAGE, 0)
      await a.enable()
      return say(c, 'Authentication Enabled', await a.status())
    case 'disable':
      args(c, AUTH_USAGE, 0)
      await a.disable()
      return say(c, 'Authentication Disabled', await a.status())
    case 'status': {
      args(c, AUTH_USAGE, 0)
      const s = await a.status()
      if (c.mode === 'json') return say(c, '', s)
      c.out(
        table([
          ['enabled', String(s.enabled)],
          ['auth revision', String(s.authRevision)],
        ]),
      )
      return 0
    }
    default:
      throw new UsageError(`unknown subcommand ${JSON.stringify(verb)}: ${AUTH_USAGE}`)
  }
}

async function newPassword(c: Context, user: string): Promise<string> {
  const given = str(c, 'new-user-password')
  if (given !== undefined) return given
  const missing = `no password for user ${user}: give NAME:PASSWORD, --new-user-password or --no-password`
  const first = await askSecret(`Password of ${user}: `, missing)
  const again = await askSecret(`Type password of ${user} again for confirmation: `, missing)
  if (first !== again) throw new UsageError('the two passwords differ')
  return first
}

export async function user(c: Context): Promise<number> {
  const [verb] = c.p.args
  const a = c.client.auth
  switch (verb) {
    case 'add': {
      const [spec] = args(c, USER_USAGE, 1) as [string]
      const colon = spec.indexOf(':')
      const name = colon < 0 ? spec : spec.slice(0, colon)
      let password: string | undefined = colon < 0 ? undefined : spec.slice(colon + 1)
      if (bool(c, 'no-password')) {
        if (password !== undefined || str(c, 'new-user-password') !== undefined) throw new UsageError('--no-password takes no password')
      } else password ??= await newPassword(c, name)
      await a.addUser(name, password)
      return say(c, `User ${name} created`, { name, roles: [] })
    }
    case 'get': {
      const [name] = args(c, USER_USAGE, 1) as [string]
      const u = await a.getUser(name)
      if (c.mode === 'json') return say(c, '', u)
      c.out(
        table([
          ['USER', 'ROLES'],
          [u.name, u.roles.join(', ')],
        ]),
      )
      return 0
    }
    case 'list': {
      args(c, USER_USAGE, 0)
      const users = await a.users()
      if (c.mode === 'json') return say(c, '', users)
      c.out(table([['USER'], ...users.map((u) => [u])]))
      return 0
    }
    case 'delete': {
      const [name] = args(c, USER_USAGE, 1) as [string]
      await a.deleteUser(name)
      return say(c, `User ${name} deleted`, { deleted: name })
    }
    case 'passwd': {
      const [name] = args(c, USER_USAGE, 1) as [string]
      await a.changePassword(name, await newPassword(c, name))
      return say(c, 'Password updated', { name })
    }
    case 'grant-role': {
      const [name, role] = args(c, USER_USAGE, 2) as [string, string]
      await a.grantRole(name, role)
      return say(c, `Role ${role} is granted to user ${name}`, await a.getUser(name))
    }
    case 'revoke-role': {
      const [name, role] = args(c, USER_USAGE, 2) as [string, string]
      await a.revokeRole(name, role)
      return say(c, `Role ${role} is revoked from user ${name}`, await a.getUser(name))
    }
    default:
      throw new UsageError(`unknown subcommand ${JSON.stringify(verb)}: ${USER_USAGE}`)
  }
}

const TYPES: Record<string, PermissionType> = { read: 'READ', write: 'WRITE', readwrite: 'READWRITE' }

/** KEY [RANGE_END] [--prefix|--from-key] as a range. */
function permissionRange(c: Context, rangeEnd: string | undefined): KeyRange {
  const prefix = bool(c, 'prefix')
  const fromKey = bool(c, 'from-key')
  if (Number(prefix) + Number(fromKey) + Number(rangeEnd !== undefined) > 1)
    throw new UsageError('give at most one of RANGE_END, --prefix and --from-key')
  return { ...(prefix ? { prefix } : {}), ...(fromKey ? { fromKey } : {}), ...(rangeEnd !== undefined ? { rangeEnd } : {}) }
}

/** The positionals after the fixed ones, one optional (RANGE_END). */
function withOptional(c: Context, fixed: number): string[] {
  const [, ...rest] = c.p.args
  if (rest.length < fixed) throw new UsageError(`missing arguments: ${ROLE_USAGE}`)
  if (rest.length > fixed + 1) throw new UsageError(`unexpected argument ${rest[fixed + 1]}: ${ROLE_USAGE}`)
  return rest
}

export async function role(c: Context): Promise<number> {
  const [verb] = c.p.args
  const a = c.client.auth
  switch (verb) {
    case 'add': {
      const [name] = args(c, ROLE_USAGE, 1) as [string]
      await a.addRole(name)
      return say(c, `Role ${name} created`, { name, permissions: [] })
    }
    case 'get': {
      const [name] = args(c, ROLE_USAGE, 1) as [string]
      const r = await a.getRole(name)
      if (c.mode === 'json') {
        const permissions = r.permissions.map((p) => ({
          type: p.type,
          key: display(p.key),
          ...(p.rangeEnd !== undefined ? { rangeEnd: display(p.rangeEnd) } : {}),
        }))
        return say(c, '', { name: r.name, permissions })
      }
      c.out(`Role ${r.name}`)
      c.out(
        table([
          ['TYPE', 'KEY', 'RANGE END'],
          ...r.permissions.map((p) => [
            p.type,
            display(p.key),
            p.rangeEnd === undefined ? '' : p.rangeEnd.equals(Buffer.from([0])) ? '<open ended>' : display(p.rangeEnd),
          ]),
        ]),
      )
      return 0
    }
    case 'list': {
      args(c, ROLE_USAGE, 0)
      const roles = await a.roles()
      if (c.mode === 'json') return say(c, '', roles)
      c.out(table([['ROLE'], ...roles.map((r) => [r])]))
      return 0
    }
    case 'delete': {
      const [name] = args(c, ROLE_USAGE, 1) as [string]
      await a.deleteRole(name)
      return say(c, `Role ${name} deleted`, { deleted: name })
    }
    case 'grant-permission': {
      const [name, typeText, key, rangeEnd] = withOptional(c, 3) as [string, string, string, string | undefined]
      const type = TYPES[typeText.toLowerCase()]
      if (type === undefined) throw new UsageError(`permission type must be read, write or readwrite, got ${JSON.stringify(typeText)}`)
      await a.grantPermission(name, type, key, permissionRange(c, rangeEnd))
      return say(c, `Role ${name} updated`, { name, type, key })
    }
    case 'revoke-permission': {
      const [name, key, rangeEnd] = withOptional(c, 2) as [string, string, string | undefined]
      await a.revokePermission(name, key, permissionRange(c, rangeEnd))
      return say(c, `Permission of ${key} is revoked from role ${name}`, { name, key })
    }
    default:
      throw new UsageError(`unknown subcommand ${JSON.stringify(verb)}: ${ROLE_USAGE}`)
  }
}
