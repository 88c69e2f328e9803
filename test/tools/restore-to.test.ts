/**
 * `kvlog snapshot restore FILE --data-dir DIR --to-revision REV | --to-time TIME` against real processes: a
 * store with history, a compaction, deletes, a binary key, a live lease and a lease revoked after REV is
 * saved, restored to a revision in the middle, and served. The restored store ends at REV; a Range at every
 * retained revision (floor .. REV) and the history with times and authors are what the original answers;
 * cursors ahead of REV come back at REV; new writes continue at REV + 1. --to-time picks the last revision
 * at or before the time; REV may be the floor or the snapshot revision itself. Bad input: a future
 * revision, a compacted one, a time before the floor, both flags, a malformed value, a non-empty directory
 * (nothing left behind).
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { KvlogClient, type KeyValue } from '../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { sleep } from '../support/wait.js'
import { kvlog, kvlogInProcess } from '../clients/run-cli.js'
import { openLog } from '../../log/index.js'

const ALL = { fromKey: true } as const
const json = (text: string) => JSON.parse(text) as Record<string, unknown>

async function rangeAt(kv: KvlogClient, revision: number): Promise<KeyValue[]> {
  return (await kv.range('\0', { ...ALL, revision })).kvs
}

describe('kvlog snapshot restore --to-revision / --to-time (real processes)', function () {
  this.timeout(120_000)
  let server: ServerProcess
  let restored: ServerProcess | undefined
  let kv: KvlogClient
  let tmp: string
  let file: string
  let floor: number
  let cut: number
  let cutTime: string
  let head: number
  let held: bigint
  let ended: bigint

  before(async () => {
    server = await startServerProcess(['--lease-min-ttl', '1'])
    kv = new KvlogClient({ endpoint: server.http })
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-restore-to-'))
    for (let i = 0; i < 12; i++) await kv.put(`/app/${i % 4}`, JSON.stringify({ i }))
    await kv.delete('/app/1')
    floor = (await kv.put('/app/floor', 'f')).revision
    await kv.compact(floor)
    held = (await kv.leaseGrant(3600)).id
    ended = (await kv.leaseGrant(3600)).id
    await kv.put('/app/held', 'h', { lease: held })
    await kv.put('/app/ended', 'e', { lease: ended })
    await kv.put(Buffer.from([0x2f, 0x61, 0xff, 0x00]), Buffer.from([0x00, 0xfe]))
    await kv.put('/app/0', JSON.stringify({ good: true }))
    cut = (await kv.put('/app/2', JSON.stringify({ good: true }))).revision
    const cursor = await kvlogInProcess(['cursor', 'commit', 'ctl', String(cut - 1)], server.http)
    expect(cursor.code, cursor.stderr).to.equal(0)
    await sleep(20)
    cutTime = new Date().toISOString()
    await sleep(20)
    // The bad change: overwrites, a delete, a lease revoked, a new key.
    await kv.put('/app/0', JSON.stringify({ bad: true }))
    await kv.delete('/app/2')
    await kv.leaseRevoke(ended)
    head = (await kv.put('/app/new', 'n')).revision
    const late = await kvlogInProcess(['cursor', 'commit', 'ctl', String(head)], server.http)
    expect(late.code, late.stderr).to.equal(0)
    file = join(tmp, 'store.snap')
    const save = await kvlog(['snapshot', 'save', file], { endpoint: server.http })
    expect(save.code, save.stderr).to.equal(0)
  })

  after(async () => {
    await restored?.cleanup()
    await server?.cleanup()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  afterEach(async () => {
    await restored?.cleanup()
    restored = undefined
  })

  it('--to-revision: the store ends at REV, reads every retained revision as the original, keeps times and authors', async () => {
    const dir = join(tmp, 'to-rev')
    const r = await kvlog(['snapshot', 'restore', file, '--data-dir', dir, '--to-revision', String(cut), '-o', 'json'])
    expect(r.code, r.stderr).to.equal(0)
    const out = json(r.stdout)
    expect(out).to.include({ revision: cut, compactRevision: floor, snapshotRevision: head, dataDir: dir })
    expect(out.keys).to.equal((await rangeAt(kv, cut)).length)

    restored = await startServerProcess([], dir)
    const copy = new KvlogClient({ endpoint: restored.http })
    // The lease revoked after REV is written expired: its key goes in the first revision after the open.
    let status = await copy.status()
    for (let i = 0; i < 100 && (status.revision as number) === cut; i++) {
      await sleep(100)
      status = await copy.status()
    }
    expect(status.revision).to.equal(cut + 1)
    expect(status.compactRevision).to.equal(floor)
    for (let rev = floor; rev <= cut; rev++) expect(await rangeAt(copy, rev), `revision ${rev}`).to.deep.equal(await rangeAt(kv, rev))
    const [h0, h1] = [
      await kv.history('\0', { ...ALL, from: floor + 1, to: cut, prevKv: true }),
      await copy.history('\0', { ...ALL, from: floor + 1, to: cut, prevKv: true }),
    ]
    expect(h1.events).to.deep.equal(h0.events)
    expect(h1.events).to.have.length(5)
    expect(h1.events.every((e) => e.author?.door === 'http')).to.equal(true)
    const gone = (await copy.history('/app/ended', { from: cut + 1 })).events
    expect(gone.map((e) => [e.type, e.revision])).to.deep.equal([['DELETE', cut + 1]])
    expect((await copy.leaseTimeToLive(held, { keys: true }))!.keys!.map(String)).to.deep.equal(['/app/held'])
    expect(await copy.leaseTimeToLive(ended)).to.equal(undefined)
    const cursors = json((await kvlogInProcess(['cursor', 'list', '-o', 'json'], restored.http)).stdout)
    expect(JSON.stringify(cursors)).to.contain(`"revision":${cut}`)
    expect((await copy.put('/app/after', 'a')).revision).to.equal(cut + 2)
  })

  it('--to-time: the last revision committed at or before the time; table output', async () => {
    const dir = join(tmp, 'to-time')
    const r = await kvlogInProcess(['snapshot', 'restore', file, '--data-dir', dir, '--to-time', cutTime])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout)
      .to.contain(`up to revision ${cut}:`)
      .and.contain(`revisions ${cut + 1}..${head} dropped`)
    restored = await startServerProcess([], dir)
    const copy = new KvlogClient({ endpoint: restored.http })
    expect((await copy.range('/app/0')).kvs[0].value.toString()).to.equal(JSON.stringify({ good: true }))
    expect((await copy.range('/app/new')).kvs).to.deep.equal([])
  })

  it('REV at the floor keeps only the floor state; REV at the snapshot revision keeps everything', async () => {
    for (const [name, rev] of [
      ['at-floor', floor],
      ['at-head', head],
    ] as const) {
      const dir = join(tmp, name)
      const r = await kvlogInProcess(['snapshot', 'restore', file, '--data-dir', dir, '--to-revision', String(rev), '-o', 'json'])
      expect(r.code, r.stderr).to.equal(0)
      expect(json(r.stdout)).to.include({ revision: rev, compactRevision: floor })
      const log = await openLog({ dir, leaseCheckInterval: 0 })
      try {
        expect([log.revision, log.compactRevision]).to.deep.equal([rev, floor])
        const copy = (await log.range(Buffer.from([0]), { rangeEnd: Buffer.from([0]), revision: rev })).kvs
        expect(copy.map((x) => ({ ...x, lease: String(x.lease) }))).to.deep.equal(
          (await rangeAt(kv, rev)).map((x) => ({ ...x, lease: String(x.lease) })),
        )
      } finally {
        await log.close()
      }
    }
  })

  it('bad input: future or compacted revision, time before the floor, both flags, bad values, a non-empty dir', async () => {
    const run = (dir: string, ...flags: string[]) => kvlogInProcess(['snapshot', 'restore', file, '--data-dir', join(tmp, dir), ...flags])
    const future = await run('bad-future', '--to-revision', String(head + 1))
    expect([future.code, future.stderr]).to.satisfy(([c, e]: [number, string]) => c === 1 && e.includes('FUTURE_REVISION'))
    const old = await run('bad-old', '--to-revision', String(floor - 1))
    expect([old.code, old.stderr]).to.satisfy(([c, e]: [number, string]) => c === 3 && e.includes('COMPACTED'))
    const early = await run('bad-early', '--to-time', '2001-01-01T00:00:00Z')
    expect([early.code, early.stderr]).to.satisfy(([c, e]: [number, string]) => c === 3 && e.includes('COMPACTED'))
    expect((await run('bad-both', '--to-revision', String(cut), '--to-time', cutTime)).code).to.equal(2)
    expect((await run('bad-rev', '--to-revision', 'abc')).code).to.equal(2)
    expect((await run('bad-zero', '--to-revision', '0')).code).to.equal(2)
    expect((await run('bad-time', '--to-time', 'noon')).code).to.equal(2)
    const full = join(tmp, 'full')
    await mkdir(full)
    await writeFile(join(full, 'x'), 'x')
    expect((await run('full', '--to-revision', String(cut))).code).to.equal(1)
    const left = await readdir(tmp)
    expect(left.filter((n) => n.startsWith('bad-') || n.includes('.restore-') || n.includes('.snapshot-'))).to.deep.equal([])
    expect(await readdir(full)).to.deep.equal(['x'])
  })
})
