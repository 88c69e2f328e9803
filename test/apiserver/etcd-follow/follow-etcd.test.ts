/**
 * `kvlog serve --follow-etcd`: a real etcd 3.4 with a history (a compaction, a lease), a real kvlog that
 * imports it into an empty data dir and then mirrors every new etcd revision (puts, txns, a range delete,
 * a lease granted and revoked) with etcd's revisions: Range at every revision and the history event by
 * event equal etcd's. While following, writes are refused with READ_ONLY on the etcd and native doors
 * (read-only txns work), `kvlog import status` shows the lag. A follower restarted resumes from its own
 * revision; one whose connection to etcd breaks says so in its status, retries and catches up. A gRPC
 * watch and an informer opened on kvlog during the follow go on across the cutover (`kvlog import
 * cutover`) without a cancel or a relist, into kvlog's own writes, which get etcd's head + 1; a watcher
 * cut on etcd resumes on kvlog from its last revision; the leases carry over; /metrics shows the lag. Bad
 * input (an unreachable etcd, a store not imported from etcd, a cluster member) stops `kvlog serve` with
 * exit 1 and leaves nothing behind (a store of its own stays writable, at its revision). A cut-over store
 * refuses to follow again. A mirror that etcd compacted past while it was down fails (COMPACTED in its
 * status), refuses the cutover and still refuses writes.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { Informer } from '../../../clients/index.js'
import { configMap, configMaps, eventually, versions } from '../../clients/informer/helpers.js'
import { kvlog as runKvlog, kvlogInProcess } from '../../clients/run-cli.js'
import { TcpProxy } from '../../clients/tcp-proxy.js'
import { leases, rangeAll, revisionOf, watchAll, type Message } from '../../support/etcd-compare.js'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { startEtcd, type EtcdProcess } from '../../support/etcd-process.js'
import { freePort } from '../../support/free-port.js'
import { connectEtcd3, grpcError, openWatch, prefixEnd } from '../../support/etcd3-proto.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'

const b = (s: string) => Buffer.from(s)
const cm = (name: string, x: string) => b(JSON.stringify(configMap('default', name, { x })))

describe('kvlog serve --follow-etcd', function () {
  this.timeout(180_000)
  let etcd: EtcdProcess
  let source: EtcdGrpc
  let tmp: string
  let dir: string
  let server: ServerProcess | undefined
  let kvlog: EtcdGrpc | undefined
  let floor = 0
  const kv = (method: string, request: Message) => source.call('KV', method, request)
  const start = async () => {
    server = undefined
    server = await startServerProcess(['--follow-etcd', etcd.endpoint, '--follow-etcd-status-interval', '200'], dir, {
      readyTimeoutMs: 60_000,
    })
    kvlog = connectEtcd3(server.grpc)
    return server
  }
  const status = async () => {
    const r = await kvlogInProcess(['import', 'status', '--endpoint', server!.http, '-o', 'json'])
    expect(r.code, r.stderr).to.equal(0)
    return JSON.parse(r.stdout) as { state: string; revision: number; sourceRevision: number; lagRevisions: number; lagSeconds: number }
  }
  const caughtUp = async () => {
    const head = revisionOf(await source.call('Maintenance', 'Status', {}))
    await eventually(`kvlog at etcd's revision ${head}`, async () => (await status()).revision === head, 30_000, status)
    return head
  }

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-follow-'))
    dir = join(tmp, 'store')
    etcd = await startEtcd()
    source = connectEtcd3(etcd.endpoint)
    await kv('Put', { key: b('/a'), value: b('a1') })
    await kv('Put', { key: b('/b'), value: b('b1') })
    floor = revisionOf(await kv('Put', { key: b('/a'), value: b('a2') }))
    await kv('Compact', { revision: floor, physical: true })
    const lease = String((await source.call('Lease', 'LeaseGrant', { TTL: 600 })).ID)
    await kv('Put', { key: b('/held'), value: b('h'), lease })
  })

  after(async () => {
    kvlog?.close()
    source?.close()
    await server?.cleanup()
    await etcd?.stop()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it('imports an empty data dir, then mirrors every new revision with etcd’s numbers, refusing writes', async () => {
    await start()
    // New history on etcd while kvlog follows: txns, a range delete, a lease granted, used and revoked.
    await kv('Txn', {
      compare: [],
      success: [{ request_put: { key: b('/c'), value: b('c1') } }, { request_put: { key: b('/a'), value: b('a3') } }],
    })
    await kv('Put', { key: b('/d/1'), value: b('1') })
    await kv('Put', { key: b('/d/2'), value: b('2') })
    await kv('DeleteRange', { key: b('/d/'), range_end: prefixEnd('/d/') })
    const l2 = String((await source.call('Lease', 'LeaseGrant', { TTL: 300 })).ID)
    await kv('Put', { key: b('/l/1'), value: b('x'), lease: l2 })
    await kv('Put', { key: b('/l/2'), value: b('y'), lease: l2 })
    await source.call('Lease', 'LeaseRevoke', { ID: l2 })
    const head = await caughtUp()
    for (let rev = floor; rev <= head; rev++)
      expect(await rangeAll(kvlog!, rev), `Range at ${rev}`).to.deep.equal(await rangeAll(source, rev))
    expect(await watchAll(kvlog!, floor + 1, head)).to.deep.equal(await watchAll(source, floor + 1, head))

    const put = await grpcError(kvlog!.call('KV', 'Put', { key: b('/x'), value: b('no') }))
    expect(put.code).to.equal(14)
    expect(put.metadata.get('kvlog-code')).to.deep.equal(['READ_ONLY'])
    expect((await grpcError(kvlog!.call('Lease', 'LeaseGrant', { TTL: 60 }))).metadata.get('kvlog-code')).to.deep.equal(['READ_ONLY'])
    const read = await kvlog!.call('KV', 'Txn', { compare: [], success: [{ request_range: { key: b('/a') } }] })
    expect(revisionOf(read)).to.equal(head)
    const http = await fetch(`${server!.http}/v1/kv`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: '/x', value: 'no' }),
    })
    expect(http.status).to.equal(503)
    expect(((await http.json()) as { error: { code: string } }).error.code).to.equal('READ_ONLY')
    const s = await status()
    expect(s).to.include({ state: 'following', revision: head, sourceRevision: head, lagRevisions: 0, lagSeconds: 0 })
    const metrics = await (await fetch(`${server!.http}/metrics`)).text()
    expect(metrics).to.match(/^kvlog_follow_lag_revisions 0$/m)
    expect(metrics).to.match(/^kvlog_follow_cut_over 0$/m)
  })

  it('a follower restarted resumes from its own revision', async () => {
    kvlog!.close()
    expect(await server!.stop()).to.equal(0)
    await kv('Put', { key: b('/while-down'), value: b('1') })
    await start()
    const head = await caughtUp()
    expect(await rangeAll(kvlog!, head)).to.deep.equal(await rangeAll(source, head))
  })

  it('a connection to etcd that breaks: the follower says so in its status, retries and catches up', async () => {
    const proxy = await TcpProxy.start(`http://${etcd.endpoint}`)
    const own = await startServerProcess(['--follow-etcd', proxy.url, '--follow-etcd-status-interval', '200'], join(tmp, 'proxied'), {
      readyTimeoutMs: 60_000,
    })
    const ownStatus = async () => {
      const r = await kvlogInProcess(['import', 'status', '--endpoint', own.http, '-o', 'json'])
      return JSON.parse(r.stdout) as { state: string; revision: number; error?: { code: string } }
    }
    try {
      await proxy.down()
      const head = revisionOf(await kv('Put', { key: b('/during-outage'), value: b('1') }))
      await eventually('the status shows the outage', async () => (await ownStatus()).error?.code === 'UNAVAILABLE', 30_000, ownStatus)
      expect((await ownStatus()).state).to.equal('following')
      await proxy.up()
      await eventually(`caught up at ${head}`, async () => (await ownStatus()).revision === head, 60_000, ownStatus)
      const mirror = connectEtcd3(own.grpc)
      try {
        expect(await rangeAll(mirror, head)).to.deep.equal(await rangeAll(source, head))
      } finally {
        mirror.close()
      }
    } finally {
      await own.cleanup()
      await proxy.close()
    }
  })

  it('cutover: a watch and an informer on kvlog go on without a cancel or a relist; writes get head + 1', async () => {
    const from = revisionOf(await source.call('Maintenance', 'Status', {})) + 1
    const watch = openWatch(kvlog!)
    watch.send({ create_request: { key: b('/registry/'), range_end: prefixEnd('/registry/'), start_revision: from } })
    const watched = () => watch.responses.flatMap((r) => (r.events ?? []) as Message[])
    const informer = new Informer(configMaps(server!.http), { namespace: 'default', minBackoffMs: 20, maxBackoffMs: 200 })
    informer.start()
    try {
      await informer.synced()
      await kv('Put', { key: b('/registry/configmaps/default/one'), value: cm('one', '1') })
      await kv('Put', { key: b('/registry/configmaps/default/two'), value: cm('two', '1') })
      await kv('Put', { key: b('/registry/configmaps/default/one'), value: cm('one', '2') })
      const head = await caughtUp()
      await eventually('the informer has the etcd writes', () => informer.resourceVersion === String(head), 30_000)

      // Writers on etcd have stopped: cut over.
      const r = await kvlogInProcess(['import', 'cutover', '--endpoint', server!.http, '--timeout', '30000', '-o', 'json'])
      expect(r.code, r.stderr).to.equal(0)
      expect(JSON.parse(r.stdout)).to.include({ state: 'cutover', cutoverRevision: head, revision: head })
      expect((await status()).state).to.equal('cutover')
      const again = await kvlogInProcess(['import', 'cutover', '--endpoint', server!.http, '-o', 'json'])
      expect(JSON.parse(again.stdout)).to.include({ cutoverRevision: head })

      const mine = await configMaps(server!.http).create(configMap('default', 'three', { x: '1' }))
      expect(mine.metadata.resourceVersion).to.equal(String(head + 1))
      // A watcher that was on etcd up to head - 1 resumes on kvlog from head: etcd's last event, then kvlog's.
      const upTo = (events: unknown[], to: number) => events.filter((e) => Number((e as { kv: { mod: string } }).kv.mod) <= to)
      const onEtcd = await watchAll(source, from, head)
      expect(upTo(await watchAll(kvlog!, from, head - 1), head - 1)).to.deep.equal(onEtcd.slice(0, -1))
      const resumed = upTo(await watchAll(kvlog!, head, head + 1), head + 1)
      expect(resumed[0]).to.deep.equal(onEtcd[onEtcd.length - 1])
      expect(resumed).to.have.length(2)
      await eventually('the informer has kvlog’s own write', () => informer.resourceVersion === String(head + 1), 30_000)
      expect(informer.lists).to.equal(1)
      expect(versions(informer.store.list())).to.deep.equal(versions((await configMaps(server!.http).list({ namespace: 'default' })).items))

      await eventually('the watch has 4 events', () => watched().length >= 4, 30_000, watched)
      expect(watched().map((e) => [String((e.kv as Message).key), Number((e.kv as Message).mod_revision)])).to.deep.equal([
        ['/registry/configmaps/default/one', head - 2],
        ['/registry/configmaps/default/two', head - 1],
        ['/registry/configmaps/default/one', head],
        ['/registry/configmaps/default/three', head + 1],
      ])
      expect(watch.responses.some((r) => r.canceled === true)).to.equal(false)
      expect(watch.error()).to.equal(undefined)

      // The lease from etcd is kvlog's now, with its keys.
      const theirs = await leases(source)
      expect((await leases(kvlog!)).map((l) => [l.id, l.granted])).to.deep.equal(theirs.map((l) => [l.id, l.granted]))
      const ttl = await kvlog!.call('Lease', 'LeaseTimeToLive', { ID: theirs[0].id, keys: true })
      expect((ttl.keys as Buffer[]).map(String)).to.deep.equal(['/held'])
    } finally {
      await informer.stop()
      watch.end()
    }
  })

  it('bad input: an unreachable etcd, a store not imported from etcd, a cluster member: exit 1, nothing changed', async () => {
    const serve = (dataDir: string, ...args: string[]) =>
      runKvlog(['serve', '--data-dir', dataDir, '--listen-http', '127.0.0.1:0', '--listen-grpc', '127.0.0.1:0', ...args])
    const empty = join(tmp, 'unreachable')
    const dead = await serve(empty, '--follow-etcd', `127.0.0.1:${await freePort()}`)
    expect(dead.code, dead.stderr).to.equal(1)
    expect(await readdir(tmp)).to.not.include('unreachable')
    expect((await readdir(tmp)).filter((n) => n.includes('.import-'))).to.deep.equal([])

    const plain = join(tmp, 'plain')
    const own = await startServerProcess([], plain)
    const ownGrpc = connectEtcd3(own.grpc)
    const written = revisionOf(await ownGrpc.call('KV', 'Put', { key: b('/mine'), value: b('1') }))
    ownGrpc.close()
    await own.stop()
    const refused = await serve(plain, '--follow-etcd', etcd.endpoint)
    expect(refused.code, refused.stderr).to.equal(1)
    const reopened = await startServerProcess([], plain)
    const check = connectEtcd3(reopened.grpc)
    try {
      const status = await check.call('Maintenance', 'Status', {})
      expect(revisionOf(status)).to.equal(written)
      expect((await check.call('KV', 'Put', { key: b('/still-mine'), value: b('2') })).header).to.not.equal(undefined)
    } finally {
      check.close()
      await reopened.cleanup()
    }

    const member = await serve(join(tmp, 'member'), '--follow-etcd', etcd.endpoint, '--nats-url', 'nats://127.0.0.1:1')
    expect(member.code, member.stderr).to.equal(1)
    expect(await readdir(tmp)).to.not.include('member')
  })

  it('a store that was cut over refuses to follow again', async () => {
    kvlog!.close()
    kvlog = undefined
    expect(await server!.stop()).to.equal(0)
    const failed = await start().then(
      () => undefined,
      (e: Error) => e,
    )
    expect(failed?.message).to.match(/cut over/)
  })

  // Last: it compacts the shared etcd.
  it('etcd compacted past the mirror while it was down: state failed (COMPACTED), cutover refused, writes still refused', async () => {
    const dir = join(tmp, 'left-behind')
    const args = ['--follow-etcd', etcd.endpoint, '--follow-etcd-status-interval', '200']
    const first = await startServerProcess(args, dir, { readyTimeoutMs: 60_000 })
    await first.stop()
    await first.cleanup()
    await kv('Put', { key: b('/while-away'), value: b('1') })
    const head = revisionOf(await kv('Put', { key: b('/while-away'), value: b('2') }))
    await kv('Compact', { revision: head, physical: true })
    const again = await startServerProcess(args, dir, { readyTimeoutMs: 60_000 })
    const statusOf = async () => {
      const r = await kvlogInProcess(['import', 'status', '--endpoint', again.http, '-o', 'json'])
      return JSON.parse(r.stdout) as { state: string; error?: { code: string } }
    }
    try {
      await eventually('the mirror has failed', async () => (await statusOf()).state === 'failed', 30_000, statusOf)
      expect((await statusOf()).error?.code).to.equal('COMPACTED')
      const cut = await kvlogInProcess(['import', 'cutover', '--endpoint', again.http, '--timeout', '1000'])
      expect(cut.code).to.equal(1)
      const answer = await fetch(`${again.http}/v1/follow/cutover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      expect(((await answer.json()) as { error: { code: string } }).error.code).to.equal('UNAVAILABLE')
      expect((await statusOf()).state).to.equal('failed')
      const put = await fetch(`${again.http}/v1/kv`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: '/x', value: 'no' }),
      })
      expect(((await put.json()) as { error: { code: string } }).error.code).to.equal('READ_ONLY')
    } finally {
      await again.cleanup()
    }
  })
})
