/**
 * The CLI against a real `kvlog serve` speaking TLS with a private CA and client-certificate auth
 * (`--client-cert-auth`): --cacert, --cert and --key on put, get, txn (https) and watch (wss), the
 * certificate's CN acting as the user; without --cacert the private CA is not trusted, and --cert without
 * --key is a usage error.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { makeCertificates, ROOT_AND_ALICE_SETUP, tlsServeArgs } from '../../support/test-certs.js'
import { etcdctl } from '../../support/etcdctl.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { kvlog, watchProcess } from '../run-cli.js'

describe('kvlog CLI: TLS with a private CA and client certificates', function () {
  this.timeout(90_000)
  let dir: string
  let server: ServerProcess
  const tls = (user: string) => ['--cacert', join(dir, 'ca.crt'), '--cert', join(dir, `${user}.crt`), '--key', join(dir, `${user}.key`)]
  const as = (user: string, ...args: string[]) => kvlog([...args, ...tls(user)], { endpoint: server.http })

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-cli-tls-'))
    makeCertificates(dir, { server: '/CN=localhost', root: '/CN=root', alice: '/CN=alice' })
    server = await startServerProcess([...tlsServeArgs(dir), '--client-cert-auth', '--auth-password-hash-cost', '10'])
    expect(server.http).to.match(/^https:\/\//)
    const ctl = (...args: string[]) => etcdctl(`https://${server.grpc}`, [...tls('root'), ...args])
    for (const args of ROOT_AND_ALICE_SETUP) {
      const r = await ctl(...args)
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0)
    }
  })

  after(async () => {
    await server?.stop()
    await server?.cleanup()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it('put, get and txn over https act as the certificate CN', async () => {
    const put = await as('alice', 'put', 'app/x', '1')
    expect(put.code, put.stderr).to.equal(0)
    const got = await as('alice', 'get', 'app/x', '--print-value-only')
    expect([got.code, got.stdout], got.stderr).to.deep.equal([0, '1'])
    const denied = await as('alice', 'put', 'other', '1')
    expect(denied.code).to.equal(1)
    expect(denied.stderr).to.contain('PERMISSION_DENIED')
    const root = await as('root', 'put', 'other', '1')
    expect(root.code, root.stderr).to.equal(0)
    const txn = await kvlog(['txn', '-o', 'json', ...tls('alice')], {
      endpoint: server.http,
      input: JSON.stringify({ success: [{ type: 'put', key: 'app/t', value: 'v' }] }),
    })
    expect(txn.code, txn.stderr).to.equal(0)
    expect(JSON.parse(txn.stdout).succeeded).to.equal(true)
  })

  it('watch over wss receives the changes', async () => {
    const w = watchProcess(['app/w', '-o', 'json', ...tls('alice')], server.http)
    try {
      // The watch is created before the put only once it answered; retry the put until the event arrives.
      const lines = w.waitLines(1, 30_000)
      let n = 0
      const writer = setInterval(() => void as('alice', 'put', 'app/w', String(++n)), 500)
      try {
        const [line] = await lines
        expect(JSON.parse(line!)).to.include({ type: 'PUT', key: 'app/w' })
      } finally {
        clearInterval(writer)
      }
    } finally {
      await w.stop()
    }
  })

  it('without --cacert the private CA is not trusted; --cert without --key is a usage error', async () => {
    const r = await kvlog(['get', 'app/x', '--cert', join(dir, 'alice.crt'), '--key', join(dir, 'alice.key')], { endpoint: server.http })
    expect(r.code).to.equal(1)
    expect(r.stderr).to.match(/certificate/i)
    const usage = await kvlog(['get', 'app/x', '--cacert', join(dir, 'ca.crt'), '--cert', join(dir, 'alice.crt')], {
      endpoint: server.http,
    })
    expect(usage.code).to.equal(2)
  })
})
