/**
 * Who changed what, and auth state that lives in the log: writes through the etcd door, the native door
 * and the resource API record their door and user; /v1/history and `kvlog history` show them; after a
 * restart auth is still enabled, the users and passwords still work and the authors are still there. The
 * auth state never appears among user keys, and enabling auth on a store with data loses nothing.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Metadata, type ServiceError } from '@grpc/grpc-js'
import { expect } from 'chai'
import type { Message } from '../../../apiserver/etcd/proto.js'
import { jsonLines, kvlog } from '../../clients/run-cli.js'
import { etcdGrpc, type EtcdGrpc } from '../../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'

const b = (s: string) => Buffer.from(s)
/** What grpc-js sends as its user-agent. */
const GRPC_JS_AGENT = `grpc-node-js/${(JSON.parse(await readFile(new URL('../../../../node_modules/@grpc/grpc-js/package.json', import.meta.url), 'utf8')) as { version: string }).version}`
const ALL = Buffer.from([0])

interface Author {
  door: string
  user?: string
  agent?: string
}

describe('auth: who changed what, and auth state kept in the log', function () {
  this.timeout(60_000)
  let dir: string
  let server: ServerProcess
  let grpc: EtcdGrpc

  const start = async () => {
    server = await startServerProcess(['--auth-password-hash-cost', '10'], dir)
    grpc = etcdGrpc(server.grpc)
  }
  const stop = async () => {
    grpc.close()
    await server.stop()
    await server.cleanup()
  }
  const auth = (method: string, request: Message, token?: string) => {
    const m = new Metadata()
    if (token !== undefined) m.set('token', token)
    return grpc.call('Auth', method, request, m)
  }
  const login = async (name: string, password: string) => String((await auth('Authenticate', { name, password })).token)
  const asToken = (token: string) => {
    const m = new Metadata()
    m.set('token', token)
    return m
  }
  const historyAuthors = async (token: string, prefix: string): Promise<Array<[number, string, Author | undefined]>> => {
    const res = await fetch(`${server.http}/v1/history?key=${encodeURIComponent(prefix)}&prefix=true`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.status).to.equal(200)
    const body = (await res.json()) as { events: Array<{ revision: number; type: string; kv: { key: string }; author?: Author }> }
    return body.events.map((e) => [e.revision, `${e.type} ${e.kv.key}`, e.author])
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-auth-who-'))
    await start()
  })

  after(async () => {
    await stop().catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
  })

  let expected: Array<[number, string, Author | undefined]> = []

  it('records the door and the user of each write, on every door', async () => {
    const r0 = await grpc.call('KV', 'Put', { key: b('w/0'), value: b('before auth') })
    await auth('UserAdd', { name: 'root', password: 'rootpw' })
    await auth('UserAdd', { name: 'alice', password: 'alicepw' })
    await auth('UserGrantRole', { user: 'root', role: 'root' })
    await auth('RoleAdd', { name: 'w' })
    await auth('RoleGrantPermission', { name: 'w', perm: { permType: 2, key: b('w/'), range_end: b('w0') } })
    await auth('RoleGrantPermission', {
      name: 'w',
      perm: { permType: 2, key: b('/registry/configmaps/team/'), range_end: b('/registry/configmaps/team0') },
    })
    await auth('RoleGrantPermission', { name: 'w', perm: { permType: 0, key: b('/registry/namespaces/team') } })
    await auth('UserGrantRole', { user: 'alice', role: 'w' })
    // Namespaces exist before objects are made in them (creating one reads its namespace).
    for (const name of ['team']) {
      const res = await fetch(`${server.http}/api/v1/namespaces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
      })
      expect(res.status, `create namespace ${name}`).to.equal(201)
    }
    await auth('AuthEnable', {})
    const alice = await login('alice', 'alicepw')

    const r1 = await grpc.call('KV', 'Put', { key: b('w/1'), value: b('1') }, asToken(alice))
    const put = await fetch(`${server.http}/v1/kv`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'w/2', value: '2' }),
    })
    const r2 = ((await put.json()) as { header: { revision: number } }).header.revision
    const txn = await grpc.call('KV', 'Txn', { success: [{ request_delete_range: { key: b('w/0') } }] }, asToken(alice))
    const cm = await fetch(`${server.http}/api/v1/namespaces/team/configmaps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { a: '1' } }),
    })
    expect(cm.status).to.equal(201)

    const rev = (m: Message) => Number((m.header as { revision: string }).revision)
    expected = [
      // Anonymous (before auth was enabled): the gRPC client's user-agent.
      [rev(r0), 'PUT w/0', { door: 'etcd', agent: GRPC_JS_AGENT }],
      [rev(r1), 'PUT w/1', { door: 'etcd', user: 'alice' }],
      [r2, 'PUT w/2', { door: 'http', user: 'alice' }],
      [rev(txn), 'DELETE w/0', { door: 'etcd', user: 'alice' }],
    ]
    expect(await historyAuthors(alice, 'w/')).to.deep.equal(expected)
    const cms = await historyAuthors(alice, '/registry/configmaps/team/')
    expect(cms.map((e) => e[2])).to.deep.equal([{ door: 'resources', user: 'alice' }])
  })

  it('keeps auth state and authors across a restart; auth state is never a user key', async () => {
    await stop()
    await start()
    // Still enabled: no token, no read.
    const anon = await fetch(`${server.http}/v1/kv?key=w/1`)
    expect(((await anon.json()) as { error: { code: string } }).error.code).to.equal('UNAUTHENTICATED')
    await grpc.call('KV', 'Range', { key: b('w/1') }).then(
      () => expect.fail('read without a token'),
      (err: ServiceError) => expect(err.metadata.get('kvlog-code')[0]).to.equal('UNAUTHENTICATED'),
    )
    const alice = await login('alice', 'alicepw')
    expect(await historyAuthors(alice, 'w/')).to.deep.equal(expected)
    const root = await login('root', 'rootpw')
    const status = await auth('AuthStatus', {}, root)
    expect(status.enabled).to.equal(true)
    // Every user key, and nothing else: the auth record is outside the keyspace.
    const all = await grpc.call('KV', 'Range', { key: ALL, range_end: ALL, keys_only: true }, asToken(root))
    const keys = (all.kvs as Array<{ key: Buffer }>).map((kv) => kv.key.toString())
    expect(keys).to.deep.equal(['/registry/configmaps/team/c1', '/registry/namespaces/team', 'w/1', 'w/2'])
    await auth('AuthDisable', {}, root)
  })

  it('kvlog history shows who changed what (-o json and table)', async () => {
    const json = await kvlog(['history', 'w/', '--prefix', '-o', 'json'], { endpoint: server.http })
    expect(json.code, json.stderr).to.equal(0)
    expect(jsonLines(json.stdout).map((e) => [e.revision, e.author])).to.deep.equal(expected.map(([r, , a]) => [r, a]))
    const table = await kvlog(['history', 'w/', '--prefix'], { endpoint: server.http })
    const rows = table.stdout.trim().split('\n')
    expect(rows[1]).to.contain('anonymous@etcd')
    expect(rows[2]).to.contain('alice@etcd')
    expect(rows[3]).to.contain('alice@http')
  })
})
