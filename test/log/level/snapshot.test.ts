/**
 * log/level/snapshot.ts: a snapshot taken while writes go on restores to exactly the state at its revision
 * (keys, history, compact revision, leases), and a damaged stream is refused; snapshotWithMeta labels
 * one with a meta record read from the same state.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLevelLog, type LevelLog } from '../../../log/level/level-log.js'
import { restoreSnapshot } from '../../../log/level/snapshot.js'
import { rejectionWithCode } from '../../support/rejection.js'

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = []
  for await (const c of chunks) out.push(c)
  return out
}

async function* from(parts: Buffer[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield p
}

describe('log/snapshot', function () {
  this.timeout(30_000)
  let root: string
  let log: LevelLog
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kvlog-snapshot-'))
    log = await openLevelLog({ dir: join(root, 'source'), fsync: 'never' })
  })
  afterEach(async () => {
    await log.close().catch(() => undefined)
    await rm(root, { recursive: true, force: true })
  })

  it('restores exactly the state at the snapshot revision, while writes went on', async () => {
    for (let i = 0; i < 300; i++) await log.put(`k/${i % 50}`, `v${i}-${'x'.repeat(i)}`)
    await log.compact(100)
    const { id } = await log.leaseGrant(600)
    await log.put('leased', 'v', { lease: id })
    const snap = await log.snapshot(4096)
    const writes = Promise.all(Array.from({ length: 50 }, (_, i) => log.put(`later/${i}`, 'v')))
    const chunks = await collect(snap.chunks)
    await writes
    expect(chunks.length).to.be.greaterThan(3)
    // etcdctl's snapshot save accepts a download only if it is 32 bytes (the sha256) over a multiple of 512.
    expect(chunks.reduce((n, c) => n + c.length, 0) % 512).to.equal(32)
    const expected = await log.range('\0', { rangeEnd: '\0', revision: snap.revision })
    const expectedHistory = await log.history('k/', { rangeEnd: 'k0', fromRevision: 100, toRevision: snap.revision })

    const target = join(root, 'restored')
    let progress = 0
    const r = await restoreSnapshot(from(chunks), target, (b) => (progress = b))
    expect(progress).to.equal(chunks.reduce((n, c) => n + c.length, 0))
    expect(r.records).to.be.greaterThan(300)
    const restored = await openLevelLog({ dir: target, fsync: 'never' })
    try {
      expect(restored.revision).to.equal(snap.revision)
      expect(restored.compactRevision).to.equal(100)
      expect((await restored.range('\0', { rangeEnd: '\0' })).kvs).to.deep.equal(expected.kvs)
      expect((await restored.history('k/', { rangeEnd: 'k0', fromRevision: 100 })).entries).to.deep.equal(expectedHistory.entries)
      expect(restored.leaseTimeToLive(id, { keys: true })?.keys?.map(String)).to.deep.equal(['leased'])
      expect((await restored.put('new', 'v')).revision).to.equal(snap.revision + 1)
    } finally {
      await restored.close()
    }
  })

  it('refuses a truncated, corrupted or foreign stream, and a non-empty target', async () => {
    await log.put('a', '1')
    const chunks = await collect((await log.snapshot()).chunks)
    const whole = Buffer.concat(chunks)
    const attempt = (bytes: Buffer, name: string) =>
      rejectionWithCode(restoreSnapshot(from([bytes]), join(root, name)), 'INVALID_ARGUMENT', `restore of a ${name} stream`)
    await attempt(whole.subarray(0, whole.length - 1), 'truncated')
    const flipped = Buffer.from(whole)
    flipped[20] ^= 0xff
    await attempt(flipped, 'flipped')
    await attempt(Buffer.from('not a snapshot at all, just text that is long enough'), 'foreign')
    await restoreSnapshot(from([whole]), join(root, 'ok'))
    await attempt(whole, 'ok')
  })

  it('labels a snapshot with a meta record as of the same state, while later writes move the record on', async () => {
    await log.applyReplicated(1000, [{ type: 'txn', request: { success: [{ type: 'put', key: 'a', value: '1' }] } }], {
      name: 'applied',
      value: { seq: 1 },
    })
    const { stream, meta } = await log.snapshotWithMeta('applied', 4096)
    await log.applyReplicated(2000, [{ type: 'txn', request: { success: [{ type: 'put', key: 'b', value: '2' }] } }], {
      name: 'applied',
      value: { seq: 2 },
    })
    expect(meta).to.deep.equal({ seq: 1 })
    expect(await log.readMeta('applied')).to.deep.equal({ seq: 2 })
    const dir = join(root, 'labelled')
    await restoreSnapshot(stream.chunks, dir)
    const copy = await openLevelLog({ dir, fsync: 'never' })
    try {
      expect(await copy.readMeta('applied')).to.deep.equal({ seq: 1 })
      expect(copy.revision).to.equal(stream.revision)
      expect((await copy.range('b')).kvs).to.have.length(0)
    } finally {
      await copy.close()
    }
  })
})
