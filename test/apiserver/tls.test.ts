/**
 * TLS with openssl-made certificates on a real `kvlog serve`: client-certificate auth (`--client-cert-auth`)
 * with Debian's etcdctl --cert/--key, the certificate's CN being the user; then reloading the certificate
 * on SIGHUP: new connections on both ports get the new one, a connection opened before keeps working, and
 * files that do not load leave the previous certificate serving, with an error in the log.
 */
import { readFileSync } from 'node:fs'
import { X509Certificate } from 'node:crypto'
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, type TLSSocket } from 'node:tls'
import { expect } from 'chai'
import { makeCertificates, ROOT_AND_ALICE_SETUP, tlsServeArgs } from '../support/test-certs.js'
import { etcdctl } from '../support/etcdctl.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { sleep } from '../support/wait.js'

/** host:port of an https:// or bare address. */
const hostPort = (address: string) => address.replace(/^https?:\/\//, '')

function open(dir: string, address: string): Promise<TLSSocket> {
  const [host, port] = hostPort(address).split(':') as [string, string]
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port: Number(port),
      ca: readFileSync(join(dir, 'ca.crt')),
      cert: readFileSync(join(dir, 'alice.crt')),
      key: readFileSync(join(dir, 'alice.key')),
      servername: 'localhost',
      ALPNProtocols: ['http/1.1'],
    })
    socket.once('secureConnect', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** The organization of the certificate a new connection is served. */
async function servedOrg(dir: string, address: string): Promise<string> {
  const socket = await open(dir, address)
  try {
    const cert = new X509Certificate(socket.getPeerX509Certificate()!.raw)
    return /O=([^\n,]+)/.exec(cert.subject)?.[1] ?? cert.subject
  } finally {
    socket.destroy()
  }
}

/** One HTTP/1.1 request on an open TLS socket: the status line. */
function request(socket: TLSSocket, path: string): Promise<string> {
  return new Promise((resolve) => {
    let text = ''
    const onData = (d: Buffer) => {
      text += d.toString()
      if (text.includes('\r\n')) {
        socket.off('data', onData)
        resolve(text.split('\r\n')[0]!)
      }
    }
    socket.on('data', onData)
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`)
  })
}

describe('TLS: client-certificate auth and reload on SIGHUP', function () {
  this.timeout(90_000)
  let dir: string
  let server: ServerProcess
  const ctl = (user: 'root' | 'alice', ...args: string[]) =>
    etcdctl(`https://${server.grpc}`, [
      '--cacert',
      join(dir, 'ca.crt'),
      '--cert',
      join(dir, `${user}.crt`),
      '--key',
      join(dir, `${user}.key`),
      ...args,
    ])

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-tls-reload-'))
    // Two server certificates (O=first, O=second) and client certificates for root and alice.
    makeCertificates(dir, { first: '/O=first/CN=localhost', second: '/O=second/CN=localhost', root: '/CN=root', alice: '/CN=alice' })
    await copyFile(join(dir, 'first.crt'), join(dir, 'server.crt'))
    await copyFile(join(dir, 'first.key'), join(dir, 'server.key'))
    server = await startServerProcess([...tlsServeArgs(dir), '--client-cert-auth', '--auth-password-hash-cost', '10'])
  })

  after(async () => {
    await server?.stop()
    await server?.cleanup()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it('--client-cert-auth: etcdctl --cert/--key acts as the certificate CN', async () => {
    for (const args of ROOT_AND_ALICE_SETUP) {
      const r = await ctl('root', ...args)
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0)
    }
    expect((await ctl('alice', 'put', 'app/x', '1')).stdout).to.equal('OK\n')
    expect((await ctl('alice', 'get', 'app/x', '--print-value-only')).stdout).to.equal('1\n')
    expect((await ctl('alice', 'put', 'other', '1')).stderr).to.contain('etcdserver: permission denied')
    expect((await ctl('alice', 'user', 'list')).stderr).to.contain('etcdserver: permission denied')
    expect((await ctl('root', 'put', 'other', '1')).stdout).to.equal('OK\n')
    // The native door takes the same certificate as the same user.
    const socket = await open(dir, server.http)
    try {
      expect(await request(socket, '/v1/kv?key=app/x')).to.equal('HTTP/1.1 200 OK')
      expect(await request(socket, '/v1/kv?key=other')).to.equal('HTTP/1.1 403 Forbidden')
    } finally {
      socket.destroy()
    }
  })

  it('SIGHUP: new connections on both ports get the new certificate; open ones keep working', async () => {
    expect(await servedOrg(dir, server.http)).to.equal('first')
    expect(await servedOrg(dir, server.grpc)).to.equal('first')
    const before = await open(dir, server.http)
    try {
      expect(await request(before, '/healthz')).to.equal('HTTP/1.1 200 OK')
      await copyFile(join(dir, 'second.crt'), join(dir, 'server.crt'))
      await copyFile(join(dir, 'second.key'), join(dir, 'server.key'))
      server.child.kill('SIGHUP')
      const deadline = Date.now() + 20_000
      while ((await servedOrg(dir, server.http)) !== 'second') {
        if (Date.now() > deadline) expect.fail('the HTTP port still serves the first certificate')
        await sleep(100)
      }
      expect(await servedOrg(dir, server.grpc)).to.equal('second')
      expect(await request(before, '/healthz')).to.equal('HTTP/1.1 200 OK')
    } finally {
      before.destroy()
    }
    expect((await ctl('alice', 'get', 'app/x', '--print-value-only')).stdout).to.equal('1\n')
  })

  it('SIGHUP with files that do not load: the previous certificate stays, and the log says why', async () => {
    await writeFile(join(dir, 'server.crt'), 'not a certificate\n')
    server.child.kill('SIGHUP')
    const deadline = Date.now() + 20_000
    while (!server.stdout().includes('TLS reload failed')) {
      if (Date.now() > deadline) expect.fail(`no log line about the failed reload: ${server.stdout()}`)
      await sleep(100)
    }
    expect(await servedOrg(dir, server.http)).to.equal('second')
    expect(await servedOrg(dir, server.grpc)).to.equal('second')
    // A key that does not match the certificate is refused too.
    await copyFile(join(dir, 'first.crt'), join(dir, 'server.crt'))
    await copyFile(join(dir, 'second.key'), join(dir, 'server.key'))
    const failures = server.stdout().split('TLS reload failed').length
    server.child.kill('SIGHUP')
    while (server.stdout().split('TLS reload failed').length === failures) {
      if (Date.now() > deadline + 20_000) expect.fail('no log line about the mismatched key')
      await sleep(100)
    }
    expect(await servedOrg(dir, server.http)).to.equal('second')
    expect((await ctl('alice', 'get', 'app/x', '--print-value-only')).stdout).to.equal('1\n')
  })
})
