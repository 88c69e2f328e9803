/**
 * log/level/io/drop-files.ts over kvlog's build of classic-level (DB::DropFilesInRange in LevelDB, from
 * log/level/native/leveldb/): the table files whose keys all lie in the range go, in one edit of the
 * version, and their disk space with them; every key outside the range stays, also through writes that
 * run during the drop and a reopen; what is left of the range is keys of files that straddle its ends and
 * of the memtable, and deleting those empties it.
 */
import { expect } from 'chai'
import { ClassicLevel } from '../../../../log/level/classic-level.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dropFilesInRange } from '../../../../log/level/io/drop-files.js'

type Db = ClassicLevel<Buffer, Buffer>

const ENTRIES = 60_000

function key(tag: number, n: number): Buffer {
  const k = Buffer.alloc(5)
  k[0] = tag
  k.writeUInt32BE(n, 1)
  return k
}

async function tableBytes(dir: string): Promise<number> {
  const names = (await readdir(dir)).filter((f) => f.endsWith('.ldb'))
  const sizes = await Promise.all(names.map(async (f) => (await stat(join(dir, f))).size))
  return sizes.reduce((a, b) => a + b, 0)
}

async function count(db: Db, gte: Buffer, lt: Buffer): Promise<number> {
  return (await db.keys({ gte, lt }).all()).length
}

describe('log/level/io/drop-files: table files dropped by key range', function () {
  this.timeout(60_000)
  let dir = ''
  let db: Db

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-drop-files-'))
    // Small table files and memtable, so that the range spans many files.
    db = new ClassicLevel<Buffer, Buffer>(dir, {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
      maxFileSize: 256 * 1024,
      writeBufferSize: 512 * 1024,
    })
    await db.open()
    // Tag 1: the range's keys (incompressible 300-byte values); tags 0 and 2: keys around it.
    for (let b = 0; b < ENTRIES / 1000; b++) {
      const batch = db.batch()
      for (let i = 0; i < 1000; i++) batch.put(key(1, b * 1000 + i), randomBytes(300))
      batch.put(key(0, b), Buffer.from(`before ${b}`))
      batch.put(key(2, b), Buffer.from(`after ${b}`))
      await batch.write()
    }
    await db.compactRange(Buffer.from([0]), Buffer.from([3]))
  })
  afterEach(async () => {
    if (db.status === 'open') await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('the addon in use has it', () => {
    expect(typeof (db as Db & { dropFilesInRange?: unknown }).dropFilesInRange).to.equal('function')
  })

  it('drops the files wholly in the range, frees their space, and keeps every key outside it', async () => {
    const before = await tableBytes(dir)
    const end = key(1, 45_000)
    const dropped = await dropFilesInRange(db, key(1, 0), end)
    expect(dropped.files, 'files dropped').to.be.greaterThan(10)
    expect(dropped.bytes, 'their bytes: most of 45,000 values of 300 bytes').to.be.greaterThan(10_000_000)
    expect(await tableBytes(dir), 'table files on disk').to.be.at.most(before - dropped.bytes)

    const left = await count(db, key(1, 0), end)
    expect(left, 'keys of the range left: only the straddling files').to.be.below(5_000)
    expect(await count(db, end, key(1, ENTRIES)), 'the rest of tag 1').to.equal(ENTRIES - 45_000)
    expect(await count(db, key(0, 0), key(1, 0)), 'keys before the range').to.equal(ENTRIES / 1000)
    expect(await count(db, key(2, 0), key(3, 0)), 'keys after the range').to.equal(ENTRIES / 1000)
    expect((await db.get(key(2, 7)))?.toString()).to.equal('after 7')

    // What is left is the caller's to delete; then the range is empty, also after a reopen.
    await db.batch((await db.keys({ gte: key(1, 0), lt: end }).all()).map((k) => ({ type: 'del' as const, key: k })))
    await db.close()
    await db.open()
    expect(await count(db, key(1, 0), end)).to.equal(0)
    expect(await count(db, end, key(1, ENTRIES))).to.equal(ENTRIES - 45_000)
  })

  it('keeps the writes that run while it drops, and a range with no whole file drops nothing', async () => {
    const writes = (async () => {
      for (let b = 0; b < 20; b++) {
        const batch = db.batch()
        for (let i = 0; i < 500; i++) batch.put(key(2, 100_000 + b * 500 + i), randomBytes(300))
        await batch.write()
      }
    })()
    const [dropped] = await Promise.all([dropFilesInRange(db, key(1, 0), key(1, 30_000)), writes])
    expect(dropped.files).to.be.greaterThan(0)
    expect(await count(db, key(2, 100_000), key(2, 110_000)), 'writes during the drop').to.equal(10_000)

    const none = await dropFilesInRange(db, key(1, 50_000), key(1, 50_001))
    expect(none).to.deep.equal({ files: 0, bytes: 0 })
    expect((await db.get(key(1, 50_000)))?.length).to.equal(300)
  })
})
