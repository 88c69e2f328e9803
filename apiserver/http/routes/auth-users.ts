/**
 * Users on the native door (etcd's UserAdd/Get/List/Delete/ChangePassword/GrantRole/RevokeRole):
 *   GET    /v1/auth/users                          { users: [name] }
 *   POST   /v1/auth/users   { name, password | noPassword: true }
 *   GET    /v1/auth/users/:name                    { user: { name, roles } }
 *   DELETE /v1/auth/users/:name
 *   PUT    /v1/auth/users/:name/password   { password }
 *   PUT    /v1/auth/users/:name/roles/:role        grant
 *   DELETE /v1/auth/users/:name/roles/:role        revoke
 * With auth enabled all need role root, except reading one's own user (auth/admin.ts).
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import type { AuthAdmin } from '../../auth/admin.js'
import { currentCaller } from '../../auth/guarded-log.js'
import { asObject, bodyBool, onlyFields, type Query } from '../../params.js'

interface Params {
  name: string
  role: string
}

function password(body: unknown, allowNone: boolean): { password: string; noPassword: boolean } {
  const b = asObject(body, 'body')
  const noPassword = allowNone && bodyBool(b, 'noPassword', '')
  if (noPassword) {
    if (b.password !== undefined) throw invalid('password', 'give password or noPassword, not both')
    return { password: '', noPassword }
  }
  if (typeof b.password !== 'string')
    throw invalid('password', allowNone ? 'is required (a string), or noPassword: true' : 'is required (a string)')
  return { password: b.password, noPassword }
}

export function authUserRoutes(app: FastifyInstance, log: Log, admin: AuthAdmin): void {
  const header = () => ({ revision: log.revision })

  app.get('/v1/auth/users', async (request) => {
    onlyFields(request.query as Query, [], '')
    return { header: header(), users: admin.listUsers(currentCaller()) }
  })

  app.post('/v1/auth/users', async (request) => {
    onlyFields(request.query as Query, [], '')
    const b = asObject(request.body, 'body')
    onlyFields(b, ['name', 'password', 'noPassword'], '')
    if (typeof b.name !== 'string') throw invalid('name', 'is required (a string)')
    const p = password(b, true)
    await admin.addUser(currentCaller(), b.name, p.password, p.noPassword)
    return { header: header(), user: { name: b.name, roles: [] } }
  })

  app.get('/v1/auth/users/:name', async (request) => {
    onlyFields(request.query as Query, [], '')
    const user = admin.getUser(currentCaller(), (request.params as Params).name)
    return { header: header(), user: { name: user.name, roles: user.roles } }
  })

  app.delete('/v1/auth/users/:name', async (request) => {
    onlyFields(request.query as Query, [], '')
    await admin.deleteUser(currentCaller(), (request.params as Params).name)
    return { header: header(), deleted: true }
  })

  app.put('/v1/auth/users/:name/password', async (request) => {
    onlyFields(request.query as Query, [], '')
    const b = asObject(request.body, 'body')
    onlyFields(b, ['password'], '')
    await admin.changePassword(currentCaller(), (request.params as Params).name, password(b, false).password)
    return { header: header() }
  })

  app.put('/v1/auth/users/:name/roles/:role', async (request) => {
    onlyFields(request.query as Query, [], '')
    const { name, role } = request.params as Params
    await admin.grantRole(currentCaller(), name, role)
    return { header: header(), user: { name, roles: admin.getUser(currentCaller(), name).roles } }
  })

  app.delete('/v1/auth/users/:name/roles/:role', async (request) => {
    onlyFields(request.query as Query, [], '')
    const { name, role } = request.params as Params
    await admin.revokeRole(currentCaller(), name, role)
    return { header: header(), user: { name, roles: admin.getUser(currentCaller(), name).roles } }
  })
}
