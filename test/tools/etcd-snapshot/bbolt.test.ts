/**
 * The bbolt codec and etcd's record encodings, without processes: any set of buckets (empty ones, tiny
 * and page-sized keys, values from empty to several pages, enough entries for branch levels) reads back
 * exactly as written; mvccpb.KeyValue and leasepb.Lease round-trip; a bare bbolt file and one with the
 * sha256 trailer are both accepted; damaged files are refused with INVALID_ARGUMENT and a stable
 * details.reason (NOT_BBOLT, CHECKSUM, TRUNCATED, CORRUPT, SCHEMA), and the import leaves no directory.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import fc from 'fast-check'
import { BboltReader } from '../../../apiserver/etcd-snapshot/bbolt-read.js'
import { PAGE_SIZE, writeBbolt, type BboltBucket } from '../../../apiserver/etcd-snapshot/bbolt-write.js'
import {
  decodeKeyValue,
  decodeLease,
  encodeKeyValue,
  encodeLease,
  parseRevisionKey,
  revisionKey,
} from '../../../apiserver/etcd-snapshot/etcd-schema.js'
import { importEtcdSnapshot, snapshotDatabase } from '../../../tools/import-etcd-snapshot.js'
import { isKvlogError } from '../../../log/index.js'

const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a))

/** Buckets with unique names and sorted, unique keys. */
const bucketsArb = fc
  .array(
    fc.record({
      name: bytes(12).filter((n) => n.length > 0),
      entries: fc.array(fc.tuple(bytes(40), fc.oneof(bytes(64), bytes(9000))), { maxLength: 400 }),
    }),
    { maxLength: 5 },
  )
  .map((raw) => {
    const byName = new Map<string, BboltBucket>()
    for (const b of raw) {
      const entries = new Map<string, readonly [Buffer, Buffer]>()
      for (const [k, v] of b.entries) entries.set(k.toString('hex'), [k, v])
      const sorted = [...entries.values()].sort((x, y) => Buffer.compare(x[0], y[0]))
      byName.set(b.name.toString('hex'), { name: b.name, entries: sorted })
    }
    return [...byName.values()]
  })

function readAll(file: Buffer): Array<{ name: string; entries: Array<[string, string]> }> {
  const reader = new BboltReader(file)
  return reader.bucketNames().map((name) => ({
    name: name.toString('hex'),
    entries: [...reader.bucket(name.toString('latin1'))!].map(([k, v]) => [k.toString('hex'), v.toString('hex')] as [string, string]),
  }))
}

function reasonOf(fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    if (isKvlogError(err, 'INVALID_ARGUMENT')) return err.details.reason
    throw err
  }
  return 'no error'
}

describe('apiserver/etcd-snapshot: the bbolt codec', () => {
  it('reads back any buckets exactly as written (fast-check)', () => {
    fc.assert(
      fc.property(bucketsArb, (buckets) => {
        const file = Buffer.concat(writeBbolt(buckets))
        expect(file.length % PAGE_SIZE).to.equal(0)
        const expected = [...buckets]
          .sort((a, b) => Buffer.compare(a.name, b.name))
          .map((b) => ({ name: b.name.toString('hex'), entries: b.entries.map(([k, v]) => [k.toString('hex'), v.toString('hex')]) }))
        expect(readAll(file)).to.deep.equal(expected)
      }),
      { numRuns: 60 },
    )
  })

  it('builds branch levels and overflow pages for big buckets', () => {
    const entries: Array<[Buffer, Buffer]> = []
    for (let i = 0; i < 20_000; i++) entries.push([revisionKey(i + 2, 0), Buffer.alloc(i % 1000 === 0 ? 20_000 : 30, i % 251)])
    const file = Buffer.concat(writeBbolt([{ name: Buffer.from('key'), entries }]))
    const back = [...new BboltReader(file).bucket('key')!]
    expect(back.length).to.equal(entries.length)
    expect(back.every(([k, v], i) => k.equals(entries[i][0]) && v.equals(entries[i][1]))).to.equal(true)
  })

  it('round-trips KeyValue, Lease and revision keys (fast-check)', () => {
    const kvArb = fc.record({
      key: bytes(50),
      value: bytes(200),
      createRevision: fc.nat(),
      modRevision: fc.nat(),
      version: fc.nat(),
      lease: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
    })
    fc.assert(
      fc.property(kvArb, (kv) => {
        expect(decodeKeyValue(encodeKeyValue(kv))).to.deep.equal(kv)
      }),
    )
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.nat(), fc.nat(), (id, ttl, remainingTtl) => {
        expect(decodeLease(encodeLease({ id, ttl, remainingTtl }))).to.deep.equal({ id, ttl, remainingTtl })
      }),
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 0, max: 0xffff }),
        fc.boolean(),
        (main, sub, tomb) => {
          expect(parseRevisionKey(revisionKey(main, sub, tomb))).to.deep.equal({ main, sub, tombstone: tomb })
        },
      ),
    )
  })

  it('refuses damaged files with a stable reason', () => {
    const file = Buffer.concat(writeBbolt([{ name: Buffer.from('key'), entries: [[revisionKey(2, 0), Buffer.from('x')]] }]))
    const withHash = Buffer.concat([file, createHash('sha256').update(file).digest()])
    expect(snapshotDatabase(withHash).db.equals(file)).to.equal(true)
    expect(snapshotDatabase(file).sha256).to.equal(undefined)

    expect(reasonOf(() => new BboltReader(Buffer.from('this is not a database at all, just some text '.repeat(100))))).to.equal('NOT_BBOLT')
    expect(reasonOf(() => new BboltReader(Buffer.alloc(10)))).to.equal('NOT_BBOLT')
    expect(reasonOf(() => new BboltReader(file.subarray(0, file.length - PAGE_SIZE)))).to.equal('TRUNCATED')
    expect(reasonOf(() => new BboltReader(file.subarray(0, 100)))).to.equal('TRUNCATED')
    const badMetas = Buffer.from(file)
    badMetas[16 + 40] ^= 1 // the high-water mark of meta 0
    badMetas[PAGE_SIZE + 16 + 40] ^= 1 // and of meta 1
    expect(reasonOf(() => new BboltReader(badMetas))).to.equal('CHECKSUM')
    const oneBadMeta = Buffer.from(file)
    oneBadMeta[PAGE_SIZE + 16 + 40] ^= 1 // meta 1 (the newer) is damaged: bbolt falls back to meta 0
    expect(readAll(oneBadMeta)).to.deep.equal(readAll(file))
    const damagedHash = Buffer.from(withHash)
    damagedHash[3 * PAGE_SIZE + 100] ^= 0xff
    expect(reasonOf(() => snapshotDatabase(damagedHash))).to.equal('CHECKSUM')
    const badPage = Buffer.from(file)
    badPage.writeUInt16LE(0x40, 3 * PAGE_SIZE + 8) // the key bucket's leaf gets an unknown page type
    expect(reasonOf(() => [...new BboltReader(badPage).bucket('key')!])).to.equal('CORRUPT')
    const loop = Buffer.from(file)
    // The root page made a branch that points at itself.
    const root = Number(loop.readBigUInt64LE(16 + 16))
    loop.writeUInt16LE(0x01, root * PAGE_SIZE + 8)
    loop.writeUInt16LE(1, root * PAGE_SIZE + 10)
    loop.writeBigUInt64LE(BigInt(root), root * PAGE_SIZE + 16 + 8)
    expect(reasonOf(() => new BboltReader(loop).bucketNames())).to.equal('CORRUPT')
    expect(reasonOf(() => parseRevisionKey(Buffer.from('not-a-revision')))).to.equal('SCHEMA')
    expect(reasonOf(() => decodeKeyValue(Buffer.from([0x0a, 0x05, 0x61])))).to.equal('SCHEMA')
  })

  it('import: a damaged or foreign file fails with its reason and leaves nothing behind', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'kvlog-bbolt-'))
    try {
      const good = Buffer.concat(writeBbolt([{ name: Buffer.from('key'), entries: [[revisionKey(2, 0), Buffer.from('x')]] }]))
      const noKeyBucket = Buffer.concat(writeBbolt([{ name: Buffer.from('other'), entries: [] }]))
      const cases: Array<[string, Buffer, string]> = [
        ['text', Buffer.from('hello\n'.repeat(2000)), 'NOT_BBOLT'],
        ['truncated', good.subarray(0, good.length - PAGE_SIZE - 7), 'TRUNCATED'],
        ['no-key-bucket', noKeyBucket, 'SCHEMA'],
        ['bad-kv', good, 'SCHEMA'], // a KeyValue of 'x' is not a valid message
      ]
      for (const [name, content, reason] of cases) {
        const file = join(tmp, `${name}.db`)
        await writeFile(file, content)
        const err = await importEtcdSnapshot(file, join(tmp, `${name}-data`)).then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(isKvlogError(err, 'INVALID_ARGUMENT'), `${name}: ${String(err)}`).to.equal(true)
        expect((err as { details: { reason: string } }).details.reason, name).to.equal(reason)
      }
      expect((await readdir(tmp)).sort()).to.deep.equal(cases.map(([name]) => `${name}.db`).sort())
    } finally {
      await rm(tmp, { recursive: true, force: true })
    }
  })
})
