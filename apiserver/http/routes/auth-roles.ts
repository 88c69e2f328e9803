/**
 * Roles on the native door (etcd's RoleAdd/Get/List/Delete/GrantPermission/RevokePermission):
 *   GET    /v1/auth/roles                          { roles: [name] }
 *   POST   /v1/auth/roles   { name }
 *   GET    /v1/auth/roles/:name                    { role: { name, permissions: [{ type, key, rangeEnd? }] } }
 *   DELETE /v1/auth/roles/:name
 *   POST   /v1/auth/roles/:name/permissions   { type: READ|WRITE|READWRITE, key, [prefix | fromKey | rangeEnd] }
 *   DELETE /v1/auth/roles/:name/permissions?key=...[&prefix=true | &fromKey=true | &rangeEnd=...]
 * Keys are UTF-8 strings or `keyBase64`/`rangeEndBase64`, as on /v1/kv; a permission's rangeEnd "\0"
 * means every key from key on. With auth enabled all need role root, except reading a role one holds.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import { PERMISSION_TYPES, type AuthAdmin } from '../../auth/admin.js'
import { currentCaller } from '../../auth/guarded-log.js'
import type { Role } from '../../auth/state.js'
import { putBytes, type JsonObject } from '../../codec.js'
import { asObject, bodyBool, KEY_SELECTION_PARAMS, keySelection, onlyFields, queryBool, type Query } from '../../params.js'

const EMPTY = Buffer.alloc(0)

function roleJson(role: Role): JsonObject {
  return {
    name: role.name,
    permissions: role.permissions.map((p) => {
      const out: JsonObject = { type: p.type }
      putBytes(out, 'key', p.key)
      if (p.rangeEnd.length > 0) putBytes(out, 'rangeEnd', p.rangeEnd)
      return out
    }),
  }
}

export function authRoleRoutes(app: FastifyInstance, log: Log, admin: AuthAdmin): void {
  const header = () => ({ revision: log.revision })
  const nameOf = (request: { params: unknown }) => (request.params as { name: string }).name

  app.get('/v1/auth/roles', async (request) => {
    onlyFields(request.query as Query, [], '')
    return { header: header(), roles: admin.listRoles(currentCaller()) }
  })

  app.post('/v1/auth/roles', async (request) => {
    onlyFields(request.query as Query, [], '')
    const b = asObject(request.body, 'body')
    onlyFields(b, ['name'], '')
    if (typeof b.name !== 'string') throw invalid('name', 'is required (a string)')
    await admin.addRole(currentCaller(), b.name)
    return { header: header(), role: { name: b.name, permissions: [] } }
  })

  app.get('/v1/auth/roles/:name', async (request) => {
    onlyFields(request.query as Query, [], '')
    return { header: header(), role: roleJson(admin.getRole(currentCaller(), nameOf(request))) }
  })

  app.delete('/v1/auth/roles/:name', async (request) => {
    onlyFields(request.query as Query, [], '')
    await admin.deleteRole(currentCaller(), nameOf(request))
    return { header: header(), deleted: true }
  })

  app.post('/v1/auth/roles/:name/permissions', async (request) => {
    onlyFields(request.query as Query, [], '')
    const b = asObject(request.body, 'body')
    onlyFields(b, ['type', ...KEY_SELECTION_PARAMS], '')
    const type = PERMISSION_TYPES.find((t) => t === b.type)
    if (type === undefined) throw invalid('type', `must be one of ${PERMISSION_TYPES.join(', ')}`)
    const { key, rangeEnd } = keySelection(b, { prefix: bodyBool(b, 'prefix', ''), fromKey: bodyBool(b, 'fromKey', '') })
    await admin.grantPermission(currentCaller(), nameOf(request), { type, key, rangeEnd: rangeEnd ?? EMPTY })
    return { header: header(), role: roleJson(admin.getRole(currentCaller(), nameOf(request))) }
  })

  app.delete('/v1/auth/roles/:name/permissions', async (request) => {
    const q = request.query as Query
    onlyFields(q, KEY_SELECTION_PARAMS, '')
    const { key, rangeEnd } = keySelection(q, { prefix: queryBool(q, 'prefix'), fromKey: queryBool(q, 'fromKey') })
    await admin.revokePermission(currentCaller(), nameOf(request), key, rangeEnd ?? EMPTY)
    return { header: header(), role: roleJson(admin.getRole(currentCaller(), nameOf(request))) }
  })
}
