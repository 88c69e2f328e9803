/**
 * Reaching a source etcd that serves TLS with client certificates and has auth enabled (a real etcd 3.4,
 * openssl certificates): `kvlog import` with etcdctl's --cacert, --cert, --key and --user copies it; a
 * wrong password is UNAUTHENTICATED, no --user PERMISSION_DENIED (the certificate's CN has no role), no
 * client certificate UNAVAILABLE, --cert without --key INVALID_ARGUMENT, each leaving nothing behind. `kvlog serve --follow-etcd` with the followEtcd* TLS and user
 * settings imports and mirrors writes made after it started.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { importFromEtcd } from '../../../apiserver/etcd-follow/import-etcd.js'
import { isKvlogError } from '../../../log/index.js'
import { eventually } from '../../clients/informer/helpers.js'
import { kvlogInProcess } from '../../clients/run-cli.js'
import { rangeAll, revisionOf } from '../../support/etcd-compare.js'
import { grpc, connectEtcd3 } from '../../support/etcd3-proto.js'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { startEtcd, type EtcdProcess } from '../../support/etcd-process.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { makeTestCerts, type TestCerts } from '../../support/test-certs.js'

const b = (s: string) => Buffer.from(s)

describe('import and follow: an etcd with TLS and auth', function () {
  this.timeout(120_000)
  let tmp: string
  let certs: TestCerts
  let etcd: EtcdProcess
  let source: EtcdGrpc
  let token: grpc.Metadata
  let server: ServerProcess | undefined
  let expected: unknown[]
  let head = 0

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-source-access-'))
    certs = makeTestCerts(tmp)
    etcd = await startEtcd({ tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca } })
    source = connectEtcd3(etcd.endpoint)
    await source.call('KV', 'Put', { key: b('/a'), value: b('1') })
    await source.call('KV', 'Put', { key: b('/b'), value: b('2') })
    head = revisionOf(await source.call('KV', 'Put', { key: b('/a'), value: b('3') }))
    expected = await rangeAll(source, head)
    await source.call('Auth', 'UserAdd', { name: 'root', password: 'secret' })
    await source.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' })
    await source.call('Auth', 'AuthEnable', {})
    token = new grpc.Metadata()
    token.set('token', String((await source.call('Auth', 'Authenticate', { name: 'root', password: 'secret' })).token))
  })

  after(async () => {
    source?.close()
    await server?.cleanup()
    await etcd?.stop()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it('kvlog import with --cacert, --cert, --key and --user copies it; bad credentials fail cleanly', async () => {
    const tls = ['--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey]
    const dir = join(tmp, 'imported')
    const run = await kvlogInProcess([
      'import',
      '--from-etcd',
      etcd.tlsEndpoint!,
      '--data-dir',
      dir,
      ...tls,
      '--user',
      'root:secret',
      '-o',
      'json',
    ])
    expect(run.code, run.stderr).to.equal(0)
    expect(JSON.parse(run.stdout)).to.include({ revision: head })
    const served = await startServerProcess([], dir)
    const kvlog = connectEtcd3(served.grpc)
    try {
      expect(await rangeAll(kvlog, head)).to.deep.equal(expected)
    } finally {
      kvlog.close()
      await served.cleanup()
    }

    const access = { caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey }
    const fail = (o: Parameters<typeof importFromEtcd>[2]) =>
      importFromEtcd(etcd.tlsEndpoint!, join(tmp, 'never'), o).then(
        () => 'imported',
        (e: unknown) => (isKvlogError(e) ? e.code : String(e)),
      )
    expect(await fail({ access: { ...access, user: 'root:wrong' } })).to.equal('UNAUTHENTICATED')
    expect(await fail({ access: { caFile: certs.ca, user: 'root:secret' } })).to.equal('UNAVAILABLE')
    // Without --user, etcd takes the client certificate's CN ("client") as the user, who has no role.
    expect(await fail({ access: { ...access } })).to.equal('PERMISSION_DENIED')
    expect(await fail({ access: { caFile: certs.ca, certFile: certs.clientCert } })).to.equal('INVALID_ARGUMENT')
    expect(await readdir(tmp)).to.not.include('never')
    expect((await readdir(tmp)).filter((n) => n.includes('.import-'))).to.deep.equal([])
    const usage = await kvlogInProcess([
      'import',
      '--from-etcd',
      etcd.tlsEndpoint!,
      '--data-dir',
      join(tmp, 'never'),
      '--cert',
      certs.clientCert,
    ])
    expect(usage.code).to.equal(1)
  })

  it('kvlog serve --follow-etcd over TLS with a user mirrors writes made after it started', async () => {
    server = await startServerProcess(
      [
        '--follow-etcd',
        `https://${etcd.tlsEndpoint!}`,
        '--follow-etcd-ca-file',
        certs.ca,
        '--follow-etcd-cert-file',
        certs.clientCert,
        '--follow-etcd-key-file',
        certs.clientKey,
        '--follow-etcd-user',
        'root:secret',
      ],
      join(tmp, 'following'),
      { readyTimeoutMs: 60_000 },
    )
    const kvlog = connectEtcd3(server.grpc)
    try {
      const later = revisionOf(await source.call('KV', 'Put', { key: b('/c'), value: b('4') }, token))
      await eventually(`kvlog at ${later}`, async () => revisionOf(await kvlog.call('Maintenance', 'Status', {})) === later, 30_000)
      const theirs = await source.call('KV', 'Range', { key: b('\0'), range_end: b('\0') }, token)
      const mine = await kvlog.call('KV', 'Range', { key: b('\0'), range_end: b('\0') })
      expect(mine.kvs).to.deep.equal(theirs.kvs)
    } finally {
      kvlog.close()
    }
  })
})
