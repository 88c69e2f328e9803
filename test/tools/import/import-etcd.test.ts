/**
 * `kvlog import --from-etcd`: a real etcd 3.4 gets a mixed history (puts, deletes, a range delete, txns
 * with several writes, keys with zero bytes, leases with keys, a revoked lease, a compaction, writes after
 * it), the import copies it, and a real `kvlog serve` on the imported store answers exactly as etcd does
 * over the etcd v3 API: the revision and compact revision, Range of every key at every retained revision,
 * the history from the floor (a watch with prevKv) event by event, the leases and their TTLs (within a
 * tolerance). Then the store behaves normally: a new write gets head + 1, compaction works, reads below the
 * floor are COMPACTED. A watch cut on etcd resumes on the imported kvlog from its last revision with
 * exactly the remaining events, then kvlog's own. Bad input: an unreachable source and a non-empty target
 * fail with stable codes and leave nothing behind; the command's usage errors exit 2; an import killed
 * with SIGKILL mid-way leaves its work directory, which the next import removes, saying it starts over;
 * a source that compacts while the base state is being read makes the import start over from the new
 * floor.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { importFromEtcd } from '../../../apiserver/etcd-follow/import-etcd.js'
import { isKvlogError } from '../../../log/index.js'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { leases, plainKv, rangeAll, revisionOf, watchAll, type Message } from '../../support/etcd-compare.js'
import { startEtcd, type EtcdProcess } from '../../support/etcd-process.js'
import { freePort } from '../../support/free-port.js'
import { connectEtcd3, prefixEnd } from '../../support/etcd3-proto.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { kvlogInProcess } from '../../clients/run-cli.js'

const ALL = Buffer.from([0])
const b = (s: string) => Buffer.from(s)
const put = (key: string | Buffer, value: string, lease?: string) => ({
  request_put: { key: Buffer.from(key), value: b(value), ...(lease ? { lease } : {}) },
})
const del = (key: string, rangeEnd?: Buffer) => ({ request_delete_range: { key: b(key), ...(rangeEnd ? { range_end: rangeEnd } : {}) } })

describe('kvlog import --from-etcd', function () {
  this.timeout(120_000)
  let etcd: EtcdProcess
  let source: EtcdGrpc
  let tmp: string
  let served: ServerProcess | undefined
  let head = 0
  let floor = 0

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-import-'))
    etcd = await startEtcd()
    source = connectEtcd3(etcd.endpoint)
    const kv = (method: string, request: Message) => source.call('KV', method, request)
    const txn = (success: Message[]) => kv('Txn', { compare: [], success })
    // Before the compaction: versions, deletes, a txn, a key with zero bytes, a lease with keys.
    await txn([put('/a', 'a1'), put('/b', 'b1'), put('/c', 'c1')])
    await kv('Put', { key: b('/a'), value: b('a2') })
    await kv('Put', { key: Buffer.from('/z\0x'), value: b('zero') })
    const l1 = String((await source.call('Lease', 'LeaseGrant', { TTL: 600 })).ID)
    await kv('Put', { key: b('/lease/1'), value: b('l'), lease: l1 })
    await kv('DeleteRange', { key: b('/b') })
    await kv('Put', { key: b('/b'), value: b('b2') })
    await kv('Put', { key: b('/d/1'), value: b('d1') })
    await kv('Put', { key: b('/d/2'), value: b('d2') })
    const compactAt = revisionOf(await kv('Put', { key: b('/c'), value: b('c2') }))
    await kv('Put', { key: b('/a'), value: b('a3') })
    await kv('Compact', { revision: compactAt, physical: true })
    floor = compactAt
    // After it: replace and delete versions from below the floor, a range delete, txns, leases.
    await txn([put('/a', 'a4'), del('/c'), put('/e', 'e1')])
    await kv('DeleteRange', { key: b('/d/'), range_end: prefixEnd('/d/') })
    const l2 = String((await source.call('Lease', 'LeaseGrant', { TTL: 300 })).ID)
    await txn([put('/lease/2', 'm', l2), put('/lease/3', 'n', l2), put('/z\0x', 'zero2')])
    const l3 = String((await source.call('Lease', 'LeaseGrant', { TTL: 900 })).ID)
    await kv('Put', { key: b('/lease/4'), value: b('gone'), lease: l3 })
    await source.call('Lease', 'LeaseRevoke', { ID: l3 })
    await kv('Put', { key: b('/lease/1'), value: b('l2'), lease: l1 })
    head = revisionOf(await kv('Put', { key: b('/b'), value: b('b3') }))
  })

  after(async () => {
    source?.close()
    await served?.cleanup()
    await etcd?.stop()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it('copies revisions, every retained state, the history from the floor, leases and the floor exactly', async () => {
    const dir = join(tmp, 'store')
    const r = await importFromEtcd(etcd.endpoint, dir)
    expect(r).to.include({ revision: head, compactRevision: floor, revisions: head - floor, leases: 2, restarts: 0 })
    served = await startServerProcess([], dir)
    const kvlog = connectEtcd3(served.grpc)
    try {
      const status = await kvlog.call('Maintenance', 'Status', {})
      expect(revisionOf(status)).to.equal(head)
      for (let rev = floor; rev <= head; rev++) {
        expect(await rangeAll(kvlog, rev), `Range at ${rev}`).to.deep.equal(await rangeAll(source, rev))
      }
      const history = await watchAll(source, floor + 1, head)
      expect(history.length).to.be.greaterThan(10)
      expect(await watchAll(kvlog, floor + 1, head)).to.deep.equal(history)
      // The floor: below it COMPACTED on both, a watch from below it canceled with the same compact revision.
      for (const c of [source, kvlog]) {
        const err = await c.call('KV', 'Range', { key: ALL, range_end: ALL, revision: floor - 1 }).then(
          () => undefined,
          (e: Error & { code: number }) => e,
        )
        expect(err?.code).to.equal(11) // OUT_OF_RANGE
      }
      const expectedLeases = await leases(source)
      const importedLeases = await leases(kvlog)
      expect(importedLeases.map((l) => [l.id, l.granted])).to.deep.equal(expectedLeases.map((l) => [l.id, l.granted]))
      for (let i = 0; i < expectedLeases.length; i++)
        expect(importedLeases[i].ttl).to.be.within(expectedLeases[i].ttl - 3, expectedLeases[i].ttl + 1)
      const withKeys = await kvlog.call('Lease', 'LeaseTimeToLive', { ID: expectedLeases.find((l) => l.granted === 300)!.id, keys: true })
      expect((withKeys.keys as Buffer[]).map(String)).to.deep.equal(['/lease/2', '/lease/3'])

      // It behaves as a store of its own from here: the next write gets head + 1, compaction, reads.
      const next = await kvlog.call('KV', 'Put', { key: b('/after'), value: b('x'), prev_kv: true })
      expect(revisionOf(next)).to.equal(head + 1)
      const replaced = await kvlog.call('KV', 'Put', { key: b('/e'), value: b('e2'), prev_kv: true })
      expect(plainKv(replaced.prev_kv as Message)).to.deep.equal(
        (await rangeAll(source, head)).find((kv) => (kv as { key: string }).key === b('/e').toString('hex')),
      )
      await kvlog.call('KV', 'Compact', { revision: head, physical: true })
      expect(await rangeAll(kvlog, head)).to.deep.equal(await rangeAll(source, head))
      const revoked = await kvlog.call('Lease', 'LeaseRevoke', { ID: expectedLeases.find((l) => l.granted === 300)!.id })
      expect(revisionOf(revoked)).to.equal(head + 3)
      expect((await rangeAll(kvlog, head + 3)).map((kv) => Buffer.from((kv as { key: string }).key, 'hex').toString())).to.not.include(
        '/lease/2',
      )
    } finally {
      kvlog.close()
    }
  })

  it('cutover: a watch cut on etcd at revision M resumes on kvlog from M + 1 with exactly the remaining events', async () => {
    // The watcher saw etcd's events up to M, then its connection was cut; writers stopped, the store moved.
    const M = floor + 3
    const seen = await watchAll(source, floor + 1, M)
    expect(seen.length).to.be.greaterThan(0)
    const remaining = await watchAll(source, M + 1, head)
    const dir = join(tmp, 'cutover')
    await importFromEtcd(etcd.endpoint, dir)
    const server = await startServerProcess([], dir)
    const kvlog = connectEtcd3(server.grpc)
    try {
      const first = revisionOf(await kvlog.call('KV', 'Put', { key: b('/new/1'), value: b('n1') }))
      const second = revisionOf(await kvlog.call('KV', 'Put', { key: b('/new/2'), value: b('n2') }))
      expect([first, second]).to.deep.equal([head + 1, head + 2])
      const resumed = await watchAll(kvlog, M + 1, head + 2)
      expect(resumed.slice(0, remaining.length)).to.deep.equal(remaining)
      expect(
        resumed.slice(remaining.length).map((e) => {
          const { kv } = e as { kv: { key: string; mod: string } }
          return [Buffer.from(kv.key, 'hex').toString(), Number(kv.mod)]
        }),
      ).to.deep.equal([
        ['/new/1', head + 1],
        ['/new/2', head + 2],
      ])
    } finally {
      kvlog.close()
      await server.cleanup()
    }
  })

  it('runs as `kvlog import` with -o json, and refuses a target that is not empty, leaving it as it was', async () => {
    const dir = join(tmp, 'cli-store')
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [KVLOG_BIN, 'import', '--from-etcd', `http://${etcd.endpoint}`, '--data-dir', dir, '-o', 'json'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      )
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })
    expect(run.code, run.stderr).to.equal(0)
    expect(JSON.parse(run.stdout)).to.include({ revision: head, compactRevision: floor })
    expect(await readdir(dir)).to.include('CURRENT')

    const again = await importFromEtcd(etcd.endpoint, dir).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isKvlogError(again, 'INVALID_ARGUMENT')).to.equal(true)
    const notEmpty = join(tmp, 'not-empty')
    await mkdir(notEmpty)
    await writeFile(join(notEmpty, 'keep'), 'x')
    const refused = await kvlogInProcess(['import', '--from-etcd', etcd.endpoint, '--data-dir', notEmpty])
    expect(refused.code).to.equal(1)
    expect(await readdir(notEmpty)).to.deep.equal(['keep'])
    expect((await readdir(tmp)).filter((n) => n.includes('.import-'))).to.deep.equal([])
  })

  it('an unreachable source fails with UNAVAILABLE and leaves nothing; usage errors exit 2', async () => {
    const dir = join(tmp, 'never')
    const dead = `127.0.0.1:${await freePort()}`
    const err = await importFromEtcd(dead, dir).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isKvlogError(err, 'UNAVAILABLE')).to.equal(true)
    expect(await readdir(tmp)).to.not.include('never')
    expect((await readdir(tmp)).filter((n) => n.includes('.import-'))).to.deep.equal([])
    const cli = await kvlogInProcess(['import', '--from-etcd', dead, '--data-dir', dir])
    expect(cli.code).to.equal(1)
    for (const args of [
      ['import', '--data-dir', dir],
      ['import', '--from-etcd', dead],
      ['import', '--bogus', 'x'],
      ['import', 'extra', '--from-etcd', dead, '--data-dir', dir],
      ['import', '--from-etcd', dead, '--data-dir', dir, '--follow'],
      ['import', 'cutover', '--timeout', 'soon'],
    ]) {
      expect((await kvlogInProcess(args)).code, args.join(' ')).to.equal(2)
    }
  })

  it('an import killed mid-way (SIGKILL): the next one removes what it left, says so and starts over', async () => {
    // Enough history that the import is still running when its work directory appears.
    const base = revisionOf(await source.call('Maintenance', 'Status', {}))
    for (let i = 0; i < 40; i++)
      await Promise.all(Array.from({ length: 50 }, (_, j) => source.call('KV', 'Put', { key: b(`/bulk/${j}`), value: b(`v${i}`) })))
    const dir = join(tmp, 'killed')
    const child = spawn(process.execPath, [KVLOG_BIN, 'import', '--from-etcd', etcd.endpoint, '--data-dir', dir], { stdio: 'ignore' })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    const leftovers = async () => (await readdir(tmp)).filter((n) => n.startsWith('.killed.import-'))
    while ((await leftovers()).length === 0 && child.exitCode === null) await new Promise((r) => setTimeout(r, 2))
    child.kill('SIGKILL')
    expect(await exited).to.equal(null)
    expect(await leftovers()).to.have.length(1)
    expect(await readdir(tmp)).to.not.include('killed')

    const again = await kvlogInProcess(['import', '--from-etcd', etcd.endpoint, '--data-dir', dir, '-o', 'json'])
    expect(again.code, again.stderr).to.equal(0)
    expect(again.stderr).to.match(/interrupted import/)
    expect(await leftovers()).to.deep.equal([])
    const latest = revisionOf(await source.call('Maintenance', 'Status', {}))
    expect(latest).to.equal(base + 2000)
    head = latest // the next test's head
    expect(JSON.parse(again.stdout)).to.include({ revision: latest, compactRevision: floor })
    const server = await startServerProcess([], dir)
    const kvlog = connectEtcd3(server.grpc)
    try {
      expect(await rangeAll(kvlog, latest)).to.deep.equal(await rangeAll(source, latest))
    } finally {
      kvlog.close()
      await server.cleanup()
    }
  })

  // Last: it compacts the shared etcd.
  it('a source that compacts during the import: it starts over from the new floor and says so', async () => {
    const dir = join(tmp, 'recompacted')
    const notes: string[] = []
    let compactedAt = 0
    const r = await importFromEtcd(etcd.endpoint, dir, {
      rangePageSize: 2,
      note: (line) => notes.push(line),
      baseProgress: async () => {
        if (compactedAt !== 0) return
        compactedAt = head
        await source.call('KV', 'Compact', { revision: head, physical: true })
      },
    })
    expect(notes).to.have.length(1)
    expect(r).to.include({ restarts: 1, compactRevision: head, revision: head, revisions: 0 })
    expect((await readdir(tmp)).filter((n) => n.includes('.import-'))).to.deep.equal([])
    const server = await startServerProcess([], dir)
    const kvlog = connectEtcd3(server.grpc)
    try {
      expect(await rangeAll(kvlog, head)).to.deep.equal(await rangeAll(source, head))
    } finally {
      kvlog.close()
      await server.cleanup()
    }
  })
})
