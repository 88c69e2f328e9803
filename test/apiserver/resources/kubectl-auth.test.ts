/**
 * kubectl (v1.32) against the resource door with auth enabled: with a bearer token from a
 * kube-apiserver-style token file (`--token`), and with a TLS client certificate whose CN is the user
 * (`--client-certificate/--client-key`, clientCertAuth). A user with READWRITE on one namespace's
 * configmaps creates, lists and deletes them there (one by one and as a collection); elsewhere kubectl reports Forbidden; with a wrong
 * token, Unauthorized, as against kube-apiserver.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { makeCertificates, tlsServeArgs } from '../../support/test-certs.js'
import { readFileSync } from 'node:fs'
import { credentials as grpcCredentials } from '@grpc/grpc-js'
import { etcdGrpc, type EtcdGrpc } from '../../support/etcd-grpc.js'
import { etcd3Service } from '../../support/etcd3-proto.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { KubectlHarness } from './kubectl-harness.js'

const b = (s: string) => Buffer.from(s)

/**
 * Users root and alice; alice may read and write configmaps in namespace team and read that namespace.
 * The namespaces are made first (auth still off), then auth is enabled.
 */
async function setUp(kubectl: KubectlHarness, credentials: string[], c: EtcdGrpc): Promise<void> {
  for (const ns of ['team', 'other']) await kubectl.run([...credentials, 'create', 'namespace', ns])
  try {
    await c.call('Auth', 'UserAdd', { name: 'root', password: 'rootpw' })
    await c.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' })
    await c.call('Auth', 'UserAdd', { name: 'alice', password: 'apw' })
    await c.call('Auth', 'RoleAdd', { name: 'team' })
    const perm = (permType: number, key: string, end?: string) => ({ permType, key: b(key), ...(end ? { range_end: b(end) } : {}) })
    await c.call('Auth', 'RoleGrantPermission', { name: 'team', perm: perm(2, '/registry/configmaps/team/', '/registry/configmaps/team0') })
    await c.call('Auth', 'RoleGrantPermission', { name: 'team', perm: perm(0, '/registry/namespaces/team') })
    await c.call('Auth', 'UserGrantRole', { user: 'alice', role: 'team' })
    await c.call('Auth', 'AuthEnable', {})
  } finally {
    c.close()
  }
}

async function asAlice(kubectl: KubectlHarness, alice: string[]): Promise<void> {
  expect(await kubectl.run([...alice, '-n', 'team', 'create', 'configmap', 'c1', '--from-literal=a=b'])).to.contain('configmap/c1 created')
  expect(await kubectl.run([...alice, '-n', 'team', 'get', 'configmaps', '-o', 'name'])).to.equal('configmap/c1\n')
  expect(await kubectl.run([...alice, '-n', 'team', 'get', 'configmap', 'c1', '-o', 'jsonpath={.data.a}'])).to.equal('b')
  const forbidden = await kubectl.fails([...alice, '-n', 'other', 'get', 'configmaps'])
  expect(forbidden).to.contain('Error from server (Forbidden)')
  expect(await kubectl.fails([...alice, '-n', 'other', 'create', 'configmap', 'c2', '--from-literal=a=b'])).to.match(/forbidden/i)
  expect(await kubectl.run([...alice, '-n', 'team', 'delete', 'configmap', 'c1'])).to.contain('deleted')
  // deletecollection: each object checked as the caller's delete, the collection as the caller's list.
  expect(await kubectl.fails([...alice, 'delete', '--raw', '/api/v1/namespaces/other/configmaps'])).to.contain('(Forbidden)')
  await kubectl.run([...alice, '-n', 'team', 'create', 'configmap', 'c3', '--from-literal=a=b'])
  const deleted = JSON.parse(await kubectl.run([...alice, 'delete', '--raw', '/api/v1/namespaces/team/configmaps'])) as {
    kind: string
    items: Array<{ metadata: { name: string } }>
  }
  expect([deleted.kind, deleted.items.map((o) => o.metadata.name)]).to.deep.equal(['ConfigMapList', ['c3']])
  expect(await kubectl.run([...alice, '-n', 'team', 'get', 'configmaps', '-o', 'name'])).to.equal('')
}

describe('resource API: kubectl with auth (bearer token, client certificate)', function () {
  this.timeout(120_000)
  let dir: string

  const file = (name: string) => readFileSync(join(dir, name))

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-kubectl-auth-'))
    makeCertificates(dir, { server: '/CN=localhost', root: '/CN=root', alice: '/CN=alice', mallory: '/CN=mallory' })
  })

  after(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  // kubectl sends a bearer token over HTTPS only: TLS without client certificates here.
  describe('bearer tokens from tokenAuthFile', () => {
    let server: ServerProcess
    let kubectl: KubectlHarness
    const token = (t: string) => ['--certificate-authority', join(dir, 'ca.crt'), '--token', t]

    before(async () => {
      const tokens = join(dir, 'tokens.csv')
      await writeFile(tokens, 'root-token,root,1\nalice-token,alice,2,"team"\n')
      server = await startServerProcess([...tlsServeArgs(dir).slice(0, 4), '--token-auth-file', tokens, '--auth-password-hash-cost', '10'])
      kubectl = await KubectlHarness.start(server.http)
      await setUp(kubectl, token('root-token'), etcdGrpc(server.grpc, grpcCredentials.createSsl(file('ca.crt')), etcd3Service))
    })

    after(async () => {
      await kubectl?.stop()
      await server?.stop()
      await server?.cleanup()
    })

    it('a permitted user works in its namespace and is Forbidden elsewhere', async () => {
      await asAlice(kubectl, token('alice-token'))
      expect(await kubectl.run([...token('root-token'), '-n', 'other', 'get', 'configmaps'])).to.equal('')
    })

    // (Without any credentials kubectl asks for a user name on a 401 instead of failing, as it does
    // against kube-apiserver: the native door's tests cover requests without credentials.)
    it('a wrong token: Unauthorized', async () => {
      expect(await kubectl.fails([...token('nope'), '-n', 'team', 'get', 'configmaps'])).to.contain('Unauthorized')
    })
  })

  describe('client certificates (clientCertAuth)', () => {
    let server: ServerProcess
    let kubectl: KubectlHarness
    const cert = (name: string) => [
      '--certificate-authority',
      join(dir, 'ca.crt'),
      '--client-certificate',
      join(dir, `${name}.crt`),
      '--client-key',
      join(dir, `${name}.key`),
    ]

    before(async () => {
      server = await startServerProcess([...tlsServeArgs(dir), '--client-cert-auth', '--auth-password-hash-cost', '10'])
      kubectl = await KubectlHarness.start(server.http)
      const tls = grpcCredentials.createSsl(file('ca.crt'), file('root.key'), file('root.crt'))
      await setUp(kubectl, cert('root'), etcdGrpc(server.grpc, tls, etcd3Service))
    })

    after(async () => {
      await kubectl?.stop()
      await server?.stop()
      await server?.cleanup()
    })

    it("the certificate's CN is the user", async () => {
      expect(server.http.startsWith('https://')).to.equal(true)
      await asAlice(kubectl, cert('alice'))
      expect(await kubectl.run([...cert('root'), '-n', 'other', 'get', 'configmaps'])).to.equal('')
      // A valid certificate of a user kvlog does not know: Forbidden, as a user without roles.
      expect(await kubectl.fails([...cert('mallory'), '-n', 'team', 'get', 'configmaps'])).to.contain('(Forbidden)')
    })
  })
})
