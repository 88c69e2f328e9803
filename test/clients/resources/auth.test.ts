/**
 * The resource API client with credentials, against a real `kvlog serve` with auth enabled: a bearer
 * token (a static one from tokenAuthFile) or a user and password (logged in on first use) on every
 * request and on watch streams; without credentials 401 Unauthorized, without the permission 403
 * Forbidden, as Status reasons; a wrong password fails the login (UNAUTHENTICATED).
 */
import { expect } from 'chai'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KvlogClient, KvlogClientError, ResourceClient, StatusError, type ResourceWatchEvent } from '../../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { configMap, type ConfigMap } from '../informer/helpers.js'

const TYPE = { version: 'v1', resource: 'configmaps' }

/** The Status reason of a refused request, or the native code of a refused login. */
async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (err) {
    expect(err).to.be.instanceOf(KvlogClientError)
    return `${err instanceof StatusError ? 'Status' : 'native'} ${(err as KvlogClientError).code}`
  }
  throw new Error('expected a refusal')
}

async function first(events: AsyncIterable<ResourceWatchEvent<ConfigMap>>): Promise<ResourceWatchEvent<ConfigMap>> {
  for await (const e of events) return e
  throw new Error('the watch ended without an event')
}

describe('ResourceClient with credentials (real server, auth enabled)', function () {
  this.timeout(60_000)
  let dir: string
  let server: ServerProcess

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-resources-auth-'))
    await writeFile(join(dir, 'tokens.csv'), 'root-static-token,root,0\n')
    server = await startServerProcess(['--token-auth-file', join(dir, 'tokens.csv'), '--auth-password-hash-cost', '10'])
    const { auth } = new KvlogClient({ endpoint: server.http })
    await auth.addUser('root', 'rootpw')
    await auth.grantRole('root', 'root')
    await auth.addRole('cm-reader')
    await auth.grantPermission('cm-reader', 'READ', '/registry/configmaps/', { prefix: true })
    await auth.addUser('viewer', 'viewerpw')
    await auth.grantRole('viewer', 'cm-reader')
    await auth.enable()
  })

  after(async () => {
    await server?.stop('SIGTERM')
    await server?.cleanup()
    await rm(dir, { recursive: true, force: true })
  })

  it('sends a bearer token on requests and watch streams; none gives Unauthorized', async () => {
    const root = new ResourceClient<ConfigMap>({ endpoint: server.http, credentials: { token: 'root-static-token' } }, TYPE)
    const created = await root.create(configMap('default', 'a', { x: '1' }))
    const list = await root.list({ namespace: 'default' })
    expect(list.items.map((i) => i.metadata.name)).to.deep.equal(['a'])
    const watch = root.watch({ namespace: 'default', resourceVersion: '0' })
    const event = await first(watch)
    watch.close()
    expect([event.type, (event.object as ConfigMap).metadata.resourceVersion]).to.deep.equal(['ADDED', created.metadata.resourceVersion])

    const anonymous = new ResourceClient<ConfigMap>({ endpoint: server.http }, TYPE)
    expect(await reason(anonymous.list({ namespace: 'default' }))).to.equal('Status Unauthorized')
    expect(await reason(first(anonymous.watch({ namespace: 'default' })))).to.equal('Status Unauthorized')
  })

  it('logs in with a user and password: reads and watches what the user may, Forbidden for the rest', async () => {
    const viewer = new ResourceClient<ConfigMap>({ endpoint: server.http, credentials: { user: 'viewer', password: 'viewerpw' } }, TYPE)
    expect((await viewer.get('a', 'default')).data).to.deep.equal({ x: '1' })
    const watch = viewer.watch({ namespace: 'default', resourceVersion: '0' })
    expect(((await first(watch)).object as ConfigMap).metadata.name).to.equal('a')
    watch.close()
    expect(await reason(viewer.create(configMap('default', 'b')))).to.equal('Status Forbidden')
    // A wrong password is refused by the login itself (POST /v1/auth/authenticate), before the request.
    const wrong = new ResourceClient<ConfigMap>({ endpoint: server.http, credentials: { user: 'viewer', password: 'nope' } }, TYPE)
    expect(await reason(wrong.list({ namespace: 'default' }))).to.equal('native UNAUTHENTICATED')
  })
})
