/**
 * Errors that point at the fix, against a real `kvlog serve` with TLS and client-certificate auth: the
 * etcd port given as the endpoint, a TLS port addressed as http:// (a write there was never applied, and
 * the CLI says to use https://), and snapshot save by a user without the root role.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { makeCertificates, ROOT_AND_ALICE_SETUP, tlsServeArgs } from '../../support/test-certs.js'
import { etcdctl } from '../../support/etcdctl.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { kvlog } from '../run-cli.js'

describe('kvlog CLI: errors that name the fix', function () {
  this.timeout(90_000)
  let dir: string
  let server: ServerProcess
  const tls = (user: string) => ['--cacert', join(dir, 'ca.crt'), '--cert', join(dir, `${user}.crt`), '--key', join(dir, `${user}.key`)]

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-cli-wrong-'))
    makeCertificates(dir, { server: '/CN=localhost', root: '/CN=root', alice: '/CN=alice' })
    server = await startServerProcess([...tlsServeArgs(dir), '--client-cert-auth', '--auth-password-hash-cost', '10'])
    for (const args of ROOT_AND_ALICE_SETUP) {
      const r = await etcdctl(`https://${server.grpc}`, [...tls('root'), ...args])
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0)
    }
  })

  after(async () => {
    await server?.stop()
    await server?.cleanup()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it('the etcd port as the endpoint is WRONG_ENDPOINT, not a bare HTTP 404', async () => {
    const r = await kvlog(['get', 'app/x', ...tls('alice')], { endpoint: `https://${server.grpc}` })
    expect(r.code).to.equal(1)
    expect(r.stderr).to.match(/WRONG_ENDPOINT: .*etcd port/)
  })

  it('http:// to the TLS port is WRONG_ENDPOINT naming https://, for a write too (nothing was applied)', async () => {
    const plain = server.http.replace(/^https:/, 'http:')
    for (const args of [
      ['put', 'app/x', '1'],
      ['get', 'app/x'],
    ]) {
      const r = await kvlog([...args, ...tls('alice')], { endpoint: plain })
      expect(r.code, args[0]).to.equal(1)
      expect(r.stderr, args[0]).to.contain('WRONG_ENDPOINT')
      expect(r.stderr, args[0]).to.contain(`use ${server.http}`)
    }
    const get = await kvlog(['get', 'app/x', '--print-value-only', ...tls('alice')], { endpoint: server.http })
    expect([get.code, get.stdout], 'the put over http:// was not applied').to.deep.equal([1, ''])
  })

  it('snapshot save without the root role is PERMISSION_DENIED saying it needs root', async () => {
    const r = await kvlog(['snapshot', 'save', join(dir, 'alice.snap'), ...tls('alice')], { endpoint: server.http })
    expect(r.code).to.equal(1)
    expect(r.stderr).to.match(/PERMISSION_DENIED: .*root role/)
    const ok = await kvlog(['snapshot', 'save', join(dir, 'root.snap'), ...tls('root')], { endpoint: server.http })
    expect(ok.code, ok.stderr).to.equal(0)
  })
})
