/**
 * etcd → snapshot → kvlog → snapshot → etcd, with real etcd 3.4 and etcdctl. A real etcd gets a mixed
 * history big enough for branch and overflow pages (txns of many puts, a 20 KB value, deletes, a range
 * delete, a key with a zero byte, leases with keys, a revoked lease, a compaction, writes after it).
 *
 *   1. `etcdctl snapshot save` on etcd, `kvlog import --from-etcd-snapshot`, `kvlog serve`: Range at every
 *      retained revision, the history from the floor (watch with prevKv), the floor itself and the leases
 *      are etcd's.
 *   2. `etcdctl snapshot save` on kvlog (Maintenance.Snapshot), `etcdctl snapshot status` (revision, hash),
 *      `etcdctl snapshot restore` and a real etcd on the restored dir: the same Range at every retained
 *      revision, history, floor and leases as the first etcd. The "key" bucket equals etcd's own snapshot
 *      entry for entry above the floor (below it, etcd's sub revisions within a compacted txn are not kept
 *      by kvlog, so only the set of values is compared). The gateway's /v3/maintenance/snapshot streams
 *      the same database.
 *   3. `kvlog export --etcd-snapshot` on the stopped server writes the same "key" bucket, etcdctl reads it,
 *      and an etcd restored from it serves the same store.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { BboltReader } from '../../../apiserver/etcd-snapshot/bbolt-read.js'
import { decodeLease, parseRevisionKey } from '../../../apiserver/etcd-snapshot/etcd-schema.js'
import { snapshotDatabase } from '../../../tools/import-etcd-snapshot.js'
import { restoreFile } from '../../../tools/restore.js'
import { isKvlogError } from '../../../log/index.js'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { leases, rangeAll, revisionOf, watchAll, type Message } from '../../support/etcd-compare.js'
import { startEtcd, type EtcdProcess } from '../../support/etcd-process.js'
import { connectEtcd3, prefixEnd } from '../../support/etcd3-proto.js'
import { etcdctl } from '../../support/etcdctl.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../../support/server-process.js'

const ALL = Buffer.from([0])
const b = (s: string) => Buffer.from(s)
const put = (key: string | Buffer, value: string | Buffer, lease?: string) => ({
  request_put: { key: Buffer.from(key), value: Buffer.from(value), ...(lease ? { lease } : {}) },
})
const del = (key: string) => ({ request_delete_range: { key: b(key) } })

/** Runs bin/kvlog with `args`; resolves with the exit code and output. */
function kvlog(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [KVLOG_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** A snapshot file's "key" bucket: above the floor as exact bytes, at or below it as a sorted list of values. */
async function keyBucket(file: string, floor: number): Promise<{ above: string[]; below: string[] }> {
  const reader = new BboltReader(snapshotDatabase(await readFile(file)).db)
  const above: string[] = []
  const below: string[] = []
  for (const [k, v] of reader.bucket('key')!) {
    const rev = parseRevisionKey(k)
    if (rev.main > floor) above.push(`${k.toString('hex')}=${v.toString('hex')}`)
    else below.push(`${rev.main}${rev.tombstone ? 't' : ''}=${v.toString('hex')}`)
  }
  return { above, below: below.sort() }
}

async function leaseBucket(file: string): Promise<Array<[string, number]>> {
  const reader = new BboltReader(snapshotDatabase(await readFile(file)).db)
  return [...reader.bucket('lease')!].map(([, v]) => decodeLease(v)).map((l) => [String(l.id), l.ttl])
}

/** The same keys, values and revisions at every revision from the floor, the same history, floor and leases. */
async function expectSameStore(actual: EtcdGrpc, expected: EtcdGrpc, floor: number, head: number): Promise<void> {
  expect(revisionOf(await actual.call('Maintenance', 'Status', {}))).to.equal(head)
  for (let rev = floor; rev <= head; rev++)
    expect(await rangeAll(actual, rev), `Range at ${rev}`).to.deep.equal(await rangeAll(expected, rev))
  const history = await watchAll(expected, floor + 1, head)
  expect(history.length).to.be.greaterThan(10)
  expect(await watchAll(actual, floor + 1, head)).to.deep.equal(history)
  const below = await actual.call('KV', 'Range', { key: ALL, range_end: ALL, revision: floor - 1 }).then(
    () => undefined,
    (e: Error & { code: number }) => e,
  )
  expect(below?.code, 'Range below the floor').to.equal(11) // OUT_OF_RANGE: compacted
  const want = await leases(expected)
  const got = await leases(actual)
  expect(got.map((l) => [l.id, l.granted])).to.deep.equal(want.map((l) => [l.id, l.granted]))
  for (const [i, l] of got.entries()) expect(l.ttl, `lease ${l.id} TTL`).to.be.within(want[i].ttl - 5, want[i].granted)
}

describe('etcd snapshots: etcd → kvlog → etcd', function () {
  this.timeout(180_000)
  let tmp: string
  let etcdA: EtcdProcess
  let etcdB: EtcdProcess | undefined
  let a: EtcdGrpc
  let served: ServerProcess | undefined
  let head = 0
  let floor = 0

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-etcd-snap-'))
    etcdA = await startEtcd()
    a = connectEtcd3(etcdA.endpoint)
    const kv = (method: string, request: Message) => a.call('KV', method, request)
    const txn = (success: Message[]) => kv('Txn', { compare: [], success })
    for (let t = 0; t < 6; t++) {
      const ops = []
      for (let i = 0; i < 60; i++) ops.push(put(`/bulk/${t}/${String(i).padStart(3, '0')}`, `value ${t}.${i} `.repeat(4)))
      await txn(ops)
    }
    await kv('Put', { key: b('/big'), value: Buffer.alloc(20_000, 'x') })
    await txn([put('/a', 'a1'), put('/b', 'b1'), put('/c', 'c1')])
    await kv('Put', { key: b('/a'), value: b('a2') })
    await kv('Put', { key: Buffer.from('/z\0x'), value: b('zero') })
    const l1 = String((await a.call('Lease', 'LeaseGrant', { TTL: 600 })).ID)
    await kv('Put', { key: b('/lease/1'), value: b('l'), lease: l1 })
    await kv('DeleteRange', { key: b('/b') })
    await kv('Put', { key: b('/b'), value: b('b2') })
    await kv('DeleteRange', { key: b('/bulk/0/'), range_end: prefixEnd('/bulk/0/') })
    floor = revisionOf(await kv('Put', { key: b('/c'), value: b('c2') }))
    await kv('Put', { key: b('/a'), value: b('a3') })
    await kv('Compact', { revision: floor, physical: true })
    await txn([put('/a', 'a4'), del('/c'), put('/e', 'e1'), put('/bulk/1/000', 'replaced')])
    await kv('DeleteRange', { key: b('/bulk/2/'), range_end: prefixEnd('/bulk/2/') })
    const l2 = String((await a.call('Lease', 'LeaseGrant', { TTL: 300 })).ID)
    await txn([put('/lease/2', 'm', l2), put('/lease/3', 'n', l2), put('/z\0x', 'zero2')])
    const l3 = String((await a.call('Lease', 'LeaseGrant', { TTL: 900 })).ID)
    await kv('Put', { key: b('/lease/4'), value: b('gone'), lease: l3 })
    await a.call('Lease', 'LeaseRevoke', { ID: l3 })
    await kv('Put', { key: b('/big'), value: Buffer.alloc(9000, 'y') })
    head = revisionOf(await kv('Put', { key: b('/b'), value: b('b3') }))
    const saved = await etcdctl(etcdA.endpoint, ['snapshot', 'save', join(tmp, 'etcd.db')])
    expect(saved.code, saved.stderr).to.equal(0)
  })

  after(async () => {
    a?.close()
    await served?.cleanup()
    await etcdB?.stop()
    await etcdA?.stop()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it("etcd's snapshot imports into kvlog with the same revisions, states, history, floor and leases", async () => {
    const r = await kvlog(['import', '--from-etcd-snapshot', join(tmp, 'etcd.db'), '--data-dir', join(tmp, 'kv'), '-o', 'json'])
    expect(r.code, r.stderr).to.equal(0)
    expect(JSON.parse(r.stdout)).to.include({ revision: head, compactRevision: floor, revisions: head - floor, leases: 2 })
    served = await startServerProcess([], join(tmp, 'kv'))
    const k = connectEtcd3(served.grpc)
    try {
      await expectSameStore(k, a, floor, head)
    } finally {
      k.close()
    }
  })

  it("kvlog's Maintenance.Snapshot: etcdctl snapshot status reads it, snapshot restore gives an etcd with the same store", async () => {
    const file = join(tmp, 'kvlog.db')
    const saved = await etcdctl(served!.grpc, ['snapshot', 'save', file])
    expect(saved.code, saved.stderr).to.equal(0)
    const status = await etcdctl(served!.grpc, ['snapshot', 'status', file, '-w', 'json'])
    expect(status.code, status.stderr).to.equal(0)
    const s = JSON.parse(status.stdout) as { hash: number; revision: number; totalKey: number; totalSize: number }
    expect(s.revision).to.equal(head)
    expect(s.totalSize).to.equal((await readFile(file)).length - 32)
    const ours = await keyBucket(file, floor)
    const theirs = await keyBucket(join(tmp, 'etcd.db'), floor)
    expect(ours.above).to.deep.equal(theirs.above)
    expect(ours.below).to.deep.equal(theirs.below)
    expect(await leaseBucket(file)).to.deep.equal(await leaseBucket(join(tmp, 'etcd.db')))

    // The gateway streams the same database (the lease bucket's remaining TTLs may have ticked meanwhile).
    const res = await fetch(`http://${served!.grpc}/v3/maintenance/snapshot`, { method: 'POST', body: '{}' })
    expect(res.status).to.equal(200)
    const lines = (await res.text()).split('\n').filter((l) => l.trim() !== '')
    const blob = Buffer.concat(lines.map((l) => Buffer.from((JSON.parse(l) as { result: { blob?: string } }).result.blob ?? '', 'base64')))
    const viaGateway = join(tmp, 'gateway.db')
    await writeFile(viaGateway, blob)
    expect((await keyBucket(viaGateway, floor)).above).to.deep.equal(ours.above)

    etcdB = await startEtcd({ restoreFrom: file })
    const restored = connectEtcd3(etcdB.endpoint)
    try {
      await expectSameStore(restored, a, floor, head)
      // It is a working etcd from there: the next write gets head + 1.
      expect(revisionOf(await restored.call('KV', 'Put', { key: b('/after'), value: b('x') }))).to.equal(head + 1)
    } finally {
      restored.close()
    }
  })

  it('kvlog export --etcd-snapshot on the stopped server writes the same database, which etcdctl reads and restores', async () => {
    expect(await served!.stop()).to.equal(0)
    const file = join(tmp, 'export.db')
    const r = await kvlog(['export', '--etcd-snapshot', file, '--data-dir', join(tmp, 'kv'), '-o', 'json'])
    expect(r.code, r.stderr).to.equal(0)
    expect(JSON.parse(r.stdout)).to.include({ revision: head, compactRevision: floor, leases: 2 })
    const status = await etcdctl(etcdA.endpoint, ['snapshot', 'status', file, '-w', 'json'])
    expect(status.code, status.stderr).to.equal(0)
    expect((JSON.parse(status.stdout) as { revision: number }).revision).to.equal(head)
    expect(await keyBucket(file, floor)).to.deep.equal(await keyBucket(join(tmp, 'kvlog.db'), floor))
    // Moving back: etcdctl snapshot restore of the exported file gives an etcd with the same store.
    const etcdD = await startEtcd({ restoreFrom: file })
    const d = connectEtcd3(etcdD.endpoint)
    try {
      await expectSameStore(d, a, floor, head)
    } finally {
      d.close()
      await etcdD.stop()
    }
    const usage = await kvlog(['export', '--data-dir', join(tmp, 'kv')])
    expect(usage.code).to.equal(2)
    const corrupt = await kvlog(['import', '--from-etcd-snapshot', join(tmp, 'kv', 'CURRENT'), '--data-dir', join(tmp, 'nothing')])
    expect(corrupt.code).to.equal(1)
    expect(await readdir(tmp)).to.not.include('nothing')
    // kvlog's own restore is for kvlog's format: an etcd snapshot is recognized and pointed to the import.
    const wrong = await restoreFile(file, join(tmp, 'wrong'), () => ({ update: () => undefined, done: () => undefined })).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isKvlogError(wrong, 'INVALID_ARGUMENT') && wrong.details).to.deep.equal({ field: 'snapshot', reason: 'ETCD_SNAPSHOT' })
    expect(await readdir(tmp)).to.not.include('wrong')
  })

  it('a store never compacted, and an empty one, go to etcd and back the same way', async () => {
    const fresh = await startServerProcess([])
    const k = connectEtcd3(fresh.grpc)
    let etcdC: EtcdProcess | undefined
    try {
      const empty = join(tmp, 'empty.db')
      expect((await etcdctl(fresh.grpc, ['snapshot', 'save', empty])).code).to.equal(0)
      const back = await kvlog(['import', '--from-etcd-snapshot', empty, '--data-dir', join(tmp, 'empty'), '-o', 'json'])
      expect(back.code, back.stderr).to.equal(0)
      expect(JSON.parse(back.stdout)).to.include({ revision: 1, compactRevision: 0, keys: 0, revisions: 0, leases: 0 })
      await k.call('KV', 'Txn', { compare: [], success: [put('/x', 'x1'), put('/y', 'y1')] })
      await k.call('KV', 'Put', { key: b('/x'), value: b('x2') })
      const last = revisionOf(await k.call('KV', 'DeleteRange', { key: b('/y') }))
      const file = join(tmp, 'uncompacted.db')
      expect((await etcdctl(fresh.grpc, ['snapshot', 'save', file])).code).to.equal(0)
      etcdC = await startEtcd({ restoreFrom: file })
      const c = connectEtcd3(etcdC.endpoint)
      try {
        for (let rev = 1; rev <= last; rev++) expect(await rangeAll(c, rev), `Range at ${rev}`).to.deep.equal(await rangeAll(k, rev))
        expect(await watchAll(c, 2, last)).to.deep.equal(await watchAll(k, 2, last))
      } finally {
        c.close()
      }
    } finally {
      k.close()
      await etcdC?.stop()
      await fresh.cleanup()
    }
  })
})
