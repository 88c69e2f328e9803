/**
 * log/level/io/data-size.ts: the store's data bytes count a preallocated write-ahead log up to its last
 * record (within one 32 KiB block), an appended one exactly, tables whole, and nothing else.
 */
import { expect } from 'chai'
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dataFileBytes, logRecordBytes } from '../../../../log/level/io/data-size.js'
import { openLevelLog } from '../../../../log/level/level-log.js'

const BLOCK = 32 * 1024
const MiB = 1024 * 1024

/** A file shaped like a LevelDB log: `blocks` blocks whose header has a type, then zeros up to `size`. */
function fakeLog(blocks: number, size: number): Buffer {
  const out = Buffer.alloc(size)
  for (let b = 0; b < blocks; b++) {
    out.fill(0x5a, b * BLOCK, b * BLOCK + 100)
    out[b * BLOCK + 6] = 1 + (b % 4)
  }
  return out
}

describe('log/level/io/data-size', function () {
  this.timeout(30_000)
  let dir = ''
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-data-size-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('a log allocated past its records counts up to the block of its last record', async () => {
    for (const blocks of [1, 2, 5, 64, 127, 128]) {
      const path = join(dir, `${blocks}.log`)
      await writeFile(path, fakeLog(blocks, 4 * MiB))
      expect(await logRecordBytes(path, 4 * MiB), `${blocks} blocks`).to.equal(blocks * BLOCK)
    }
  })

  it('an appended log counts exactly, and an empty one as nothing', async () => {
    const appended = fakeLog(3, 2 * BLOCK + 500)
    await writeFile(join(dir, '000007.log'), appended)
    expect(await logRecordBytes(join(dir, '000007.log'), appended.length)).to.equal(appended.length)
    await writeFile(join(dir, '000008.log'), Buffer.alloc(0))
    expect(await logRecordBytes(join(dir, '000008.log'), 0)).to.equal(0)
  })

  it('counts tables whole and logs up to their records; not LOG, MANIFEST, CURRENT or LOCK', async () => {
    await writeFile(join(dir, '000005.ldb'), Buffer.alloc(70_000, 1))
    await writeFile(join(dir, '000006.log'), fakeLog(2, MiB))
    for (const other of ['LOG', 'LOG.old', 'MANIFEST-000004', 'CURRENT', 'LOCK']) await writeFile(join(dir, other), Buffer.alloc(9_999))
    expect(await dataFileBytes(dir)).to.equal(70_000 + 2 * BLOCK)
  })

  it("a store's dbSize leaves out its log's preallocated tail", async () => {
    const log = await openLevelLog({ dir, deferFileDeletes: false, leveldbWalPreallocateBytes: 4 * MiB })
    let dbSize: number
    try {
      for (let i = 0; i < 100; i++) await log.put(`/k/${i}`, Buffer.alloc(100, 'v'))
      const logs = (await readdir(dir)).filter((f) => f.endsWith('.log'))
      expect(logs).to.have.lengthOf(1)
      expect((await stat(join(dir, logs[0]))).size, 'allocated while open').to.equal(4 * MiB)
      dbSize = (await log.status()).dbSize
    } finally {
      await log.close()
    }
    // Closed, the log is cut back to its records (and no table was written): dbSize was that, to a block.
    const records = await dataFileBytes(dir)
    expect(records).to.be.above(100 * 100)
    expect(dbSize).to.be.at.least(records)
    expect(dbSize).to.be.below(records + BLOCK)
  })
})
