/**
 * The etcd gRPC door's own behaviour beyond what etcdctl shows: stable identity across restarts, watch ids,
 * rejected creates, fragments, progress requests, compacted starts, leases expiring through the door,
 * Hash/HashKV, the snapshot stream, and TLS with client certificates on both listeners.
 */
import { expect } from 'chai'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { credentials } from '@grpc/grpc-js'
import type { Message } from '../../../apiserver/etcd/proto.js'
import { importEtcdSnapshot } from '../../../tools/import-etcd-snapshot.js'
import { etcdGrpc, responses, type EtcdGrpc } from '../../support/etcd-grpc.js'
import { rejection, rejectionWithCode } from '../../support/rejection.js'
import { etcdctl, parseJsonLines } from '../../support/etcdctl.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { makeTestCerts } from '../../support/test-certs.js'

const b = (s: string) => Buffer.from(s)

describe('apiserver/etcd: the gRPC door', function () {
  this.timeout(60_000)
  let server: ServerProcess
  let etcd: EtcdGrpc
  before(async () => {
    server = await startServerProcess(['--lease-min-ttl', '1', '--lease-check-interval', '50', '--max-request-bytes', '65536'])
    etcd = etcdGrpc(server.grpc)
  })
  after(async () => {
    etcd?.close()
    await server?.cleanup()
  })

  it('keeps cluster and member ids across a restart; every header carries them', async () => {
    const before = (await etcd.call('Cluster', 'MemberList')) as { header: Message; members: Message[] }
    expect(before.members).to.have.length(1)
    expect(before.members[0].ID).to.equal(before.header.member_id)
    etcd.close()
    expect(await server.stop('SIGTERM')).to.equal(0)
    server = await startServerProcess(
      ['--lease-min-ttl', '1', '--lease-check-interval', '50', '--max-request-bytes', '65536'],
      server.dataDir,
    )
    etcd = etcdGrpc(server.grpc)
    const after = (await etcd.call('KV', 'Range', { key: b('x') })) as { header: Message }
    expect(after.header.cluster_id).to.equal(before.header.cluster_id)
    expect(after.header.member_id).to.equal(before.header.member_id)
  })

  it("records an anonymous write's client agent (etcdctl's gRPC user-agent) as its author, as history shows it", async () => {
    const put = await etcdctl(server.grpc, ['put', 'agent/x', 'v'])
    expect(put.code, put.stderr).to.equal(0)
    const run = spawnSync(process.execPath, [KVLOG_BIN, 'history', 'agent/x', '-o', 'json', '--endpoint', server.http], {
      encoding: 'utf8',
    })
    expect(run.status, run.stderr).to.equal(0)
    const [entry] = parseJsonLines(run.stdout) as Array<{ author: { door: string; agent?: string } }>
    expect(entry.author.door).to.equal('etcd')
    expect(entry.author.agent).to.match(/grpc-go\//)
  })

  it('etcdctl endpoint status --cluster dials the client URL MemberList lists (host:port: a scheme is refused as :authority)', async () => {
    const status = await etcdctl(server.grpc, ['endpoint', 'status', '--cluster', '-w', 'json'])
    expect(status.code, status.stderr).to.equal(0)
    const rows = JSON.parse(status.stdout) as Array<{ Endpoint: string }>
    expect(rows.map((r) => r.Endpoint)).to.deep.equal([server.grpc])
  })

  it('watch: server ids from 0, client ids kept, duplicates rejected as etcd does', async () => {
    const call = etcd.stream('Watch', 'Watch')
    const r = responses(call)
    call.write({ create_request: { key: b('w/a') } })
    expect(await r.next()).to.include({ watch_id: '0', created: true })
    call.write({ create_request: { key: b('w/b'), watch_id: 7 } })
    expect(await r.next()).to.include({ watch_id: '7', created: true })
    call.write({ create_request: { key: b('w/c'), watch_id: 7 } })
    const rejected = await r.next()
    expect(rejected).to.include({ watch_id: '-1', created: true, canceled: true })
    expect(rejected.cancel_reason).to.match(/duplicate watch ID/)
    call.write({ cancel_request: { watch_id: 7 } })
    expect(await r.next()).to.include({ watch_id: '7', canceled: true })
    await etcd.call('KV', 'Put', { key: b('w/a'), value: b('1') })
    const events = await r.next()
    expect(events.watch_id).to.equal('0')
    expect((events.events as Message[]).map((e) => String((e.kv as Message).key))).to.deep.equal(['w/a'])
    call.end()
  })

  it('watch: a compacted start is created, then canceled with the compact revision', async () => {
    for (let i = 0; i < 5; i++) await etcd.call('KV', 'Put', { key: b('c/k'), value: b(String(i)) })
    const rev = Number(((await etcd.call('KV', 'Range', { key: b('c/k') })).header as Message).revision)
    await etcd.call('KV', 'Compact', { revision: rev - 1, physical: true })
    const call = etcd.stream('Watch', 'Watch')
    const r = responses(call)
    call.write({ create_request: { key: b('c/k'), start_revision: 2 } })
    expect(await r.next()).to.include({ created: true, canceled: false })
    const canceled = await r.next()
    expect(canceled).to.include({ canceled: true, compact_revision: String(rev - 1) })
    call.end()
  })

  it('watch: fragments a response larger than the request limit when asked, and the parts join up', async () => {
    const call = etcd.stream('Watch', 'Watch')
    const r = responses(call)
    // With prev_kv a revision's response is about twice its request: over the 64 KiB limit here.
    call.write({ create_request: { key: b('f/'), range_end: b('f0'), fragment: true, prev_kv: true } })
    await r.next()
    const big = 'x'.repeat(7_000)
    const success = Array.from({ length: 8 }, (_, i) => ({ request_put: { key: b(`f/${i}`), value: b(big) } }))
    await etcd.call('KV', 'Txn', { success })
    const first = await r.next()
    expect(first.fragment).to.equal(false)
    await etcd.call('KV', 'Txn', { success })
    const parts: Message[] = []
    do parts.push(await r.next())
    while (parts[parts.length - 1].fragment === true)
    expect(parts.length).to.be.greaterThan(1)
    expect(parts.flatMap((p) => (p.events as Message[]).map((e) => String((e.kv as Message).key)))).to.deep.equal(
      success.map((s) => String(s.request_put.key)),
    )
    call.end()
  })

  it('watch: a progress request is answered with watch_id -1 at the store revision, after the events below it', async () => {
    const call = etcd.stream('Watch', 'Watch')
    const r = responses(call)
    const now = Number(((await etcd.call('KV', 'Range', { key: b('p/') })).header as Message).revision)
    call.write({ create_request: { key: b('p/'), range_end: b('p0'), start_revision: now } })
    await r.next()
    await etcd.call('KV', 'Put', { key: b('p/1'), value: b('v') })
    call.write({ progress_request: {} })
    let m = await r.next()
    let last = 0
    while (m.watch_id !== '-1') {
      for (const e of m.events as Message[]) last = Math.max(last, Number((e.kv as Message).mod_revision))
      m = await r.next()
    }
    const revision = Number((m.header as Message).revision)
    expect(last).to.be.greaterThan(0)
    expect(revision).to.be.at.least(last)
    expect(m.events).to.deep.equal([])
    call.end()
  })

  it('leases: an expired lease deletes its keys; keep-alive and time-to-live answer as etcd for unknown ids', async () => {
    const grant = await etcd.call('Lease', 'LeaseGrant', { TTL: 1 })
    const id = grant.ID as string
    await etcd.call('KV', 'Put', { key: b('l/k'), value: b('v'), lease: id })
    const ttl = await etcd.call('Lease', 'LeaseTimeToLive', { ID: id, keys: true })
    expect((ttl.keys as Buffer[]).map(String)).to.deep.equal(['l/k'])
    const deadline = Date.now() + 5000
    while (Number((await etcd.call('KV', 'Range', { key: b('l/k') })).count) > 0) {
      expect(Date.now()).to.be.below(deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect((await etcd.call('Lease', 'LeaseTimeToLive', { ID: id })).TTL).to.equal('-1')
    const ka = etcd.stream('Lease', 'LeaseKeepAlive')
    const r = responses(ka)
    ka.write({ ID: id })
    expect((await r.next()).TTL).to.equal('0')
    ka.end()
    const err = await rejection(etcd.call('Lease', 'LeaseRevoke', { ID: id }), 'revoke of an expired lease')
    expect(err.details).to.equal('etcdserver: requested lease not found')
  })

  it('Hash/HashKV are equal for equal states and change with the data', async () => {
    const h1 = await etcd.call('Maintenance', 'HashKV', {})
    const again = await etcd.call('Maintenance', 'HashKV', {})
    expect(again.hash).to.equal(h1.hash)
    await etcd.call('KV', 'Put', { key: b('h/k'), value: b('v') })
    const h2 = await etcd.call('Maintenance', 'HashKV', {})
    expect(h2.hash).to.not.equal(h1.hash)
    const atOld = await etcd.call('Maintenance', 'HashKV', { revision: h1.hash_revision })
    expect(atOld.hash).to.equal(h1.hash)
  })

  it("Snapshot streams etcd's bbolt file (sha256 trailer) that imports to the same state", async () => {
    const parts = await etcd.collect('Maintenance', 'Snapshot')
    const blobs = parts.map((p) => p.blob as Buffer)
    expect(Number(parts[parts.length - 1].remaining_bytes)).to.equal(0)
    expect(Number(parts[0].remaining_bytes)).to.equal(Buffer.concat(blobs).length - blobs[0].length)
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-grpc-snap-'))
    try {
      await writeFile(join(dir, 'snap.db'), Buffer.concat(blobs))
      const imported = await importEtcdSnapshot(join(dir, 'snap.db'), join(dir, 'data'))
      expect(imported.sha256).to.match(/^[0-9a-f]{64}$/)
      const restored = await startServerProcess([], join(dir, 'data'))
      const copy = etcdGrpc(restored.grpc)
      try {
        const all = { key: Buffer.from([0]), range_end: Buffer.from([0]) }
        const a = await etcd.call('KV', 'Range', all)
        const c = await copy.call('KV', 'Range', all)
        expect(c.kvs).to.deep.equal(a.kvs)
      } finally {
        copy.close()
        await restored.cleanup()
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('apiserver/etcd: TLS with client certificates on both listeners', function () {
  this.timeout(60_000)
  let dir: string
  let server: ServerProcess
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-tls-'))
    makeTestCerts(dir)
    server = await startServerProcess([
      '--tls-cert-file',
      join(dir, 'server.crt'),
      '--tls-key-file',
      join(dir, 'server.key'),
      '--tls-client-ca-file',
      join(dir, 'ca.crt'),
    ])
  })
  after(async () => {
    await server?.cleanup()
    await rm(dir, { recursive: true, force: true })
  })
  const file = (name: string) => readFileSync(join(dir, name))

  it('serves gRPC over TLS to a client with a certificate, and refuses one without', async () => {
    const ok = etcdGrpc(server.grpc, credentials.createSsl(file('ca.crt'), file('client.key'), file('client.crt')))
    try {
      await ok.call('KV', 'Put', { key: b('tls'), value: b('v') })
      expect(Number((await ok.call('KV', 'Range', { key: b('tls') })).count)).to.equal(1)
    } finally {
      ok.close()
    }
    const anonymous = etcdGrpc(server.grpc, credentials.createSsl(file('ca.crt')))
    try {
      // 14, UNAVAILABLE: the handshake failed.
      await rejectionWithCode(anonymous.call('KV', 'Range', { key: b('tls') }), 14, 'a client without a certificate')
    } finally {
      anonymous.close()
    }
  })

  it('serves HTTPS with the same rule, and etcdctl connects with an https:// endpoint', async () => {
    expect(server.http.startsWith('https://')).to.equal(true)
    const curl = (...extra: string[]) => {
      try {
        return execFileSync('curl', [
          '-s',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '--cacert',
          join(dir, 'ca.crt'),
          ...extra,
          `${server.http}/healthz`,
        ]).toString()
      } catch {
        return 'refused'
      }
    }
    expect(curl('--cert', join(dir, 'client.crt'), '--key', join(dir, 'client.key'))).to.equal('200')
    expect(curl()).to.not.equal('200')
    const out = execFileSync('etcdctl', [
      `--endpoints=https://${server.grpc}`,
      '--cacert',
      join(dir, 'ca.crt'),
      '--cert',
      join(dir, 'client.crt'),
      '--key',
      join(dir, 'client.key'),
      'get',
      'tls',
    ]).toString()
    expect(out).to.equal('tls\nv\n')
  })
})
