/**
 * Leases and snapshots from the client side, against real `kvlog serve` processes: the client's lease
 * methods and snapshot download; `kvlog lease ...`, `put --lease` and `kvlog snapshot save|restore` end to
 * end in both output forms; bad input with its exit code; and the round trip the clients issue asks for:
 * snapshot save → restore → `kvlog serve` on the restored dir → the same keys, revision and compact revision.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { KvlogClient, KvlogClientError, type KeyValue } from '../../clients/index.js'
import { KVLOG_BIN, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { kvlog, kvlogInProcess, type Run } from './run-cli.js'
import { closedPort } from './tcp-proxy.js'

const BIG_ID = '9223372036854775807' // 2^63-1: a JS number would round it to ...808
const hex = (id: string) => BigInt(id).toString(16)
const json = (text: string) => JSON.parse(text) as Record<string, unknown>

async function allKeys(kv: KvlogClient): Promise<KeyValue[]> {
  return (await kv.range('\0', { fromKey: true })).kvs
}

describe('leases and snapshots: client and CLI (real server)', function () {
  this.timeout(40_000)
  let server: ServerProcess
  let restored: ServerProcess | undefined
  let kv: KvlogClient
  let tmp: string
  // Each command runs at least once as a real `node bin/kvlog` process; its other output form and most
  // bad-input cases run through main() in this process, which costs no node start-up (slow on a loaded box).
  const run = (...args: string[]) => kvlog(args, { endpoint: server.http })
  const inProcess = (...args: string[]) => kvlogInProcess(args, server.http)

  before(async () => {
    server = await startServerProcess(['--lease-min-ttl', '1'])
    kv = new KvlogClient({ endpoint: server.http })
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-lease-snap-'))
  })

  after(async () => {
    await restored?.cleanup()
    await server?.cleanup()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it('client: grant, leases, timeToLive with keys, keepAlive, revoke; ids exact as bigint and string', async () => {
    const picked = await kv.leaseGrant(60)
    expect(typeof picked.id).to.equal('bigint')
    expect(picked.ttl).to.equal(60)
    const big = await kv.leaseGrant(30, { id: BigInt(BIG_ID) })
    expect(big.id).to.equal(BigInt(BIG_ID))
    const viaString = await kv.leaseGrant(20, { id: '9007199254740993' }) // 2^53 + 1
    expect(viaString.id).to.equal(9007199254740993n)
    expect(await kv.leases()).to.include.members([picked.id, big.id, viaString.id])

    const { revision } = await kv.put('/cl/a', '1', { lease: big.id })
    await kv.put('/cl/b', '2', { lease: BIG_ID })
    expect((await kv.get('/cl/a'))!.lease).to.equal(BigInt(BIG_ID))
    const t = await kv.leaseTimeToLive(BIG_ID, { keys: true })
    expect(t).to.deep.include({ id: BigInt(BIG_ID), grantedTtl: 30 })
    expect(t!.keys!.map(String)).to.deep.equal(['/cl/a', '/cl/b'])
    expect(await kv.leaseTimeToLive(picked.id)).to.not.have.property('keys')
    expect(await kv.leaseKeepAlive(big.id)).to.deep.equal({ id: big.id, ttl: 30 })

    expect(await kv.leaseRevoke(big.id)).to.deep.equal({ revision: revision + 2 })
    expect(await kv.get('/cl/a')).to.equal(undefined)
    expect(await kv.leaseTimeToLive(big.id)).to.equal(undefined)
    const codes = await Promise.all(
      [kv.leaseKeepAlive(big.id), kv.leaseRevoke(big.id), kv.leaseGrant(10, { id: picked.id }), kv.leaseGrant(9e9 + 1)].map((p) =>
        p.then(
          () => 'ok',
          (e: KvlogClientError) => e.code,
        ),
      ),
    )
    expect(codes).to.deep.equal(['LEASE_NOT_FOUND', 'LEASE_NOT_FOUND', 'LEASE_EXISTS', 'LEASE_TTL_TOO_LARGE'])
    // A lease id that is not a decimal number is the caller's mistake, caught before anything is sent.
    const mistakes = await Promise.all(
      [kv.leaseRevoke('12abc'), kv.leaseTimeToLive(-1n), kv.put('/k', 'v', { lease: '1e3' })].map((p) =>
        p.then(
          () => 'ok',
          (e: Error) => e.name,
        ),
      ),
    )
    expect(mistakes).to.deep.equal(['TypeError', 'TypeError', 'TypeError'])
    await Promise.all([kv.leaseRevoke(picked.id), kv.leaseRevoke(viaString.id)])
  })

  it('client: snapshot() streams the bytes with the revision and a valid trailing checksum', async () => {
    const { revision } = await kv.put('/cs/a', 'snapshot me')
    const snap = await kv.snapshot()
    expect(snap.revision).to.equal(revision)
    const parts: Buffer[] = []
    for await (const chunk of snap.chunks) parts.push(chunk)
    const bytes = Buffer.concat(parts)
    const body = bytes.subarray(0, bytes.length - 32)
    expect(
      createHash('sha256')
        .update(body)
        .digest()
        .equals(bytes.subarray(bytes.length - 32)),
    ).to.equal(true)
    expect(body.includes(Buffer.from('snapshot me'))).to.equal(true)
    // Cancelling a download part way is allowed and leaves the server serving.
    const second = await kv.snapshot()
    await second.cancel()
    expect((await kv.status()).revision).to.equal(revision)
  })

  it('kvlog lease grant/list/ttl/keep-alive/revoke and put --lease, in both output forms', async () => {
    const g1 = await inProcess('lease', 'grant', '120', '-o', 'json')
    const g2 = await run('lease', 'grant', '90', '--id', BIG_ID)
    expect(g1.code, g1.stderr).to.equal(0)
    expect(g2.code, g2.stderr).to.equal(0)
    const id1 = json(g1.stdout).id as string
    expect(id1).to.match(/^[1-9][0-9]*$/)
    expect(json(g1.stdout).ttl).to.equal(120)
    // Tables give ids in hex, as etcdctl prints them (and the decimal form too); JSON gives both.
    expect(g2.stdout.trim()).to.equal(`lease ${hex(BIG_ID)} granted with TTL 90s (decimal ${BIG_ID})`)
    expect(json(g1.stdout).idHex).to.equal(hex(id1))

    const p1 = await run('put', '/cli/a', 'x', '--lease', BIG_ID, '-o', 'json')
    // A lease id in etcdctl's hex form is taken as well as the decimal one.
    const p2 = await inProcess('put', '/cli/b', 'y', '--lease', hex(BIG_ID))
    expect(p1.code, p1.stderr).to.equal(0)
    expect(p2.code, p2.stderr).to.equal(0)
    expect(p2.stdout).to.match(/^OK revision \d+/)
    expect((await kv.get('/cli/a'))!.lease).to.equal(BigInt(BIG_ID))

    const [lt, tt, kt] = await Promise.all([
      run('lease', 'list'),
      run('lease', 'ttl', BIG_ID, '--keys'),
      run('lease', 'keep-alive', `0x${hex(id1)}`, '--once'),
    ])
    const lj = await inProcess('lease', 'list', '-o', 'json')
    const tj = await inProcess('lease', 'ttl', BIG_ID, '--keys', '-o', 'json')
    const tNoKeys = await inProcess('lease', 'ttl', id1, '-o', 'json')
    const kj = await inProcess('lease', 'keep-alive', BIG_ID, '--once', '-o', 'json')
    for (const r of [lj, lt, tj, tt, tNoKeys, kj, kt]) expect(r.code, r.stderr).to.equal(0)
    const listed = json(lj.stdout).leases as Array<{ id: string; ttl: number; grantedTtl: number }>
    expect(listed.map((l) => l.id)).to.include.members([id1, BIG_ID])
    expect(listed.find((l) => l.id === BIG_ID)).to.include({ grantedTtl: 90 })
    const rows = lt.stdout.trim().split('\n')
    expect(rows[0].split(/\s+/)).to.deep.equal(['ID', 'DECIMAL', 'TTL', 'GRANTED'])
    expect(rows.slice(1).map((r) => r.split(/\s+/).slice(0, 2))).to.deep.include.members([
      [hex(id1), id1],
      [hex(BIG_ID), BIG_ID],
    ])
    expect(json(tj.stdout)).to.deep.include({ id: BIG_ID, grantedTtl: 90, keys: [{ key: '/cli/a' }, { key: '/cli/b' }] })
    expect(json(tj.stdout).ttl).to.be.within(60, 90)
    expect(tt.stdout)
      .to.match(/^keys\s+\/cli\/a, \/cli\/b$/m)
      .and.match(/^granted ttl\s+90s$/m)
    expect(json(tNoKeys.stdout)).to.not.have.property('keys')
    expect(json(kj.stdout)).to.deep.equal({ id: BIG_ID, idHex: hex(BIG_ID), ttl: 90 })
    expect(kt.stdout.trim()).to.equal(`lease ${hex(id1)} kept alive, TTL 120s`)

    // keep-alive without --once keeps going until a signal, then exits 0.
    const child = spawn(process.execPath, [KVLOG_BIN, 'lease', 'keep-alive', id1, '-o', 'json'], {
      env: { ...process.env, KVLOG_ENDPOINT: server.http },
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    const deadline = Date.now() + 15_000
    while (!out.includes('\n')) {
      expect(Date.now(), 'keep-alive printed nothing').to.be.below(deadline)
      await new Promise((r) => setTimeout(r, 50))
    }
    child.kill('SIGTERM')
    expect(await exited).to.equal(0)
    expect(json(out.split('\n')[0])).to.deep.equal({ id: id1, idHex: hex(id1), ttl: 120 })

    const rj = await inProcess('lease', 'revoke', BIG_ID, '-o', 'json')
    const rt = await run('lease', 'revoke', id1)
    expect(rj.code, rj.stderr).to.equal(0)
    expect(rt.code, rt.stderr).to.equal(0)
    expect(json(rj.stdout)).to.include({ id: BIG_ID })
    expect(json(rj.stdout).revision).to.equal((await kv.status()).revision)
    expect(rt.stdout).to.contain(`lease ${hex(id1)} revoked`)
    expect((await kv.range('/cli/', { prefix: true })).count).to.equal(0)
    expect(await kv.leases()).to.not.include(BigInt(BIG_ID))
  })

  it('bad input: unknown subcommands, bad ids and TTLs (2), missing leases and unreachable endpoints (1)', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`
    const notEmpty = join(tmp, 'not-empty')
    await mkdir(notEmpty)
    await writeFile(join(notEmpty, 'x'), 'x')
    // Usage errors in this process through main() (quick); the rest, and two usage errors, as real processes.
    const usage: Run[] = []
    for (const args of [
      ['lease', 'frob'],
      ['lease', 'ttl', 'xyz'],
      ['lease', 'revoke'],
      ['lease', 'grant', 'ten'],
      ['lease', 'grant', '10', '--id', '-3'],
      ['lease', 'ttl', '18446744073709551616'],
      ['lease', 'list', '--keys'],
      ['put', '/k', 'v', '--lease', '12x'],
      ['snapshot', 'frob', 'f'],
      ['snapshot', 'restore', join(tmp, 'f')],
    ])
      usage.push(await kvlogInProcess(args, server.http))
    const [noVerb, missingTtl, deadList] = await Promise.all([
      run('snapshot'),
      run('lease', 'ttl', '424242'),
      kvlog(['lease', 'list'], { endpoint: dead }),
    ])
    const failures: Run[] = [missingTtl]
    for (const args of [
      ['lease', 'revoke', '424242'],
      ['put', '/k', 'v', '--lease', '424242'],
      ['lease', 'list'],
      ['snapshot', 'save', join(tmp, 'dead.snap')],
      ['snapshot', 'restore', join(tmp, 'missing.snap'), '--data-dir', join(tmp, 'r-missing')],
      ['snapshot', 'restore', join(tmp, 'missing.snap'), '--data-dir', notEmpty],
    ])
      failures.push(await kvlogInProcess(args, args[1] === 'list' || args[1] === 'save' ? dead : server.http))
    expect(deadList.code).to.equal(1)
    expect(deadList.stderr).to.contain('cannot reach')
    const runs = [...usage, noVerb, ...failures]
    const codes = runs.map((r) => r.code)
    expect(
      codes.slice(0, 11),
      runs
        .slice(0, 11)
        .map((r) => r.stderr)
        .join(''),
    ).to.deep.equal(Array(11).fill(2))
    expect(
      codes.slice(11),
      runs
        .slice(11)
        .map((r) => r.stderr)
        .join(''),
    ).to.deep.equal(Array(7).fill(1))
    for (const r of runs) {
      expect(r.stdout).to.equal('')
      expect(r.stderr).to.match(/^kvlog (lease|put|snapshot): \S/)
    }
    for (const r of runs.slice(11, 14)) expect(r.stderr).to.contain('LEASE_NOT_FOUND')
    expect(runs[14].stderr).to.contain('cannot reach')
    expect(runs[17].stderr).to.contain('not empty')
    const left = await readdir(tmp)
    expect(left.filter((f) => f.startsWith('dead.snap') || f === 'r-missing')).to.deep.equal([])
    const help = [await inProcess('lease', '--help'), await inProcess('snapshot', '--help')]
    expect(help.map((h) => h.code)).to.deep.equal([0, 0])
    expect(help[0].stdout).to.contain('kvlog lease grant TTL')
    expect(help[1].stdout).to.contain('kvlog snapshot save FILE')
  })

  it('snapshot save → restore → kvlog serve on the restored dir: the same keys, revision, compact revision and leases', async () => {
    // Content with history, a compaction, deletes, bytes that are not UTF-8, and a lease with a key.
    for (let i = 0; i < 30; i++) await kv.put(`/rt/${i % 7}`, JSON.stringify({ i }))
    await kv.delete('/rt/3')
    const binKey = Buffer.from([0x2f, 0x72, 0x74, 0x2f, 0xff, 0x00])
    await kv.put(binKey, Buffer.from([0x00, 0xfe, 0x80]))
    const floor = (await kv.put('/rt/floor', 'x')).revision
    await kv.compact(floor)
    const lease = await kv.leaseGrant(3600)
    await kv.put('/rt/leased', 'held', { lease: lease.id })
    await kv.delete('/rt/floor')
    const status = await kv.status()
    const before = await allKeys(kv)

    const file = join(tmp, 'kv.snap')
    const save = await run('snapshot', 'save', file, '-o', 'json')
    const saveTable = await inProcess('snapshot', 'save', join(tmp, 'kv2.snap'))
    expect(save.code, save.stderr).to.equal(0)
    expect(saveTable.code, saveTable.stderr).to.equal(0)
    expect(save.stderr).to.equal('') // stderr is not a terminal: no progress bar
    const saved = json(save.stdout) as { file: string; revision: number; bytes: number; sha256: string }
    const bytes = await readFile(file)
    expect(saved).to.deep.equal({
      file,
      revision: status.revision,
      bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    })
    // Nothing was written in between: the table form saved the same bytes and says so.
    expect(saveTable.stdout)
      .to.contain(`revision ${status.revision as number}`)
      .and.contain(saved.sha256)
      .and.contain(`${saved.bytes} bytes`)
    expect(
      await stat(`${file}.part`).then(
        () => true,
        () => false,
      ),
    ).to.equal(false)

    const dir = join(tmp, 'restored')
    const restore = await run('snapshot', 'restore', file, '--data-dir', dir, '-o', 'json')
    const restoreTable = await inProcess('snapshot', 'restore', file, '--data-dir', join(tmp, 'restored2'))
    expect(restore.code, restore.stderr).to.equal(0)
    expect(restoreTable.code, restoreTable.stderr).to.equal(0)
    expect(json(restore.stdout)).to.include({ bytes: saved.bytes, sha256: saved.sha256, dataDir: dir })
    expect(json(restore.stdout).records).to.be.above(0)
    expect(restoreTable.stdout).to.contain(`sha256 ${saved.sha256}`)

    restored = await startServerProcess([], dir)
    const copy = new KvlogClient({ endpoint: restored.http })
    const after = await copy.status()
    expect(after.revision).to.equal(status.revision)
    expect(after.compactRevision).to.equal(floor)
    expect(await allKeys(copy)).to.deep.equal(before)
    expect(before.some((x) => x.key.equals(binKey))).to.equal(true)
    expect((await copy.leaseTimeToLive(lease.id, { keys: true }))!.keys!.map(String)).to.deep.equal(['/rt/leased'])
    // Below the floor is gone in the copy too; at the floor it reads.
    const below = await copy.range('/rt/', { prefix: true, revision: floor - 1 }).then(
      () => 'ok',
      (e: KvlogClientError) => e.code,
    )
    expect(below).to.equal('COMPACTED')
    expect((await copy.range('/rt/', { prefix: true, revision: floor })).kvs.length).to.be.above(0)
    // It is a working store: the next write gets the next revision.
    expect((await copy.put('/rt/new', 'n')).revision).to.equal((status.revision as number) + 1)
  })

  it('snapshot restore refuses a truncated or corrupt file and leaves no data dir behind', async () => {
    const file = join(tmp, 'whole.snap')
    const save = await inProcess('snapshot', 'save', file)
    expect(save.code, save.stderr).to.equal(0)
    const bytes = await readFile(file)
    const truncated = join(tmp, 'truncated.snap')
    await writeFile(truncated, bytes.subarray(0, bytes.length - 100))
    const flipped = Buffer.from(bytes)
    flipped[40] ^= 0xff
    const corrupt = join(tmp, 'corrupt.snap')
    await writeFile(corrupt, flipped)
    const t = await run('snapshot', 'restore', truncated, '--data-dir', join(tmp, 'r-truncated'))
    const c = await inProcess('snapshot', 'restore', corrupt, '--data-dir', join(tmp, 'r-corrupt'))
    expect([t.code, c.code]).to.deep.equal([1, 1])
    const left = await readdir(tmp)
    expect(left).to.not.include('r-truncated')
    expect(left).to.not.include('r-corrupt')
  })
})
