/**
 * log/level/io/range-compaction.ts: a memtable flush is seen as two write-ahead logs in LevelDB's directory, and
 * compactRange waits for it to end. First with files made by hand (standing in for LevelDB mid-flush),
 * then against a real LevelDB.
 */
import { expect } from 'chai'
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from '../../../../log/level/classic-level.js'
import { openLevelLog } from '../../../../log/level/level-log.js'
import { compactRangeBetweenFlushes, flushDone, flushing } from '../../../../log/level/io/range-compaction.js'
import { sleep } from '../../../support/wait.js'

describe('log/range-compaction', function () {
  this.timeout(60_000)
  let dir = ''
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-range-compaction-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  /** LevelDB's files between flushes: one write-ahead log, and names that are not logs. */
  async function idleFiles(): Promise<void> {
    for (const name of ['000007.log', '000005.ldb', 'MANIFEST-000002', 'CURRENT', 'LOCK', 'LOG', 'LOG.old']) {
      await writeFile(join(dir, name), '')
    }
    await mkdir(join(dir, 'trash'))
    await writeFile(join(dir, 'trash', '000004.log'), '')
  }

  it('sees a flush only while there is more than one write-ahead log', async () => {
    expect(await flushing(dir), 'an empty directory').to.equal(false)
    await idleFiles()
    expect(await flushing(dir), 'one log (LOG, LOG.old and trash/ are not logs)').to.equal(false)
    await writeFile(join(dir, '000009.log'), '')
    expect(await flushing(dir), 'a second log: the switch happened, the flush has not ended').to.equal(true)
    await unlink(join(dir, '000007.log'))
    expect(await flushing(dir), 'the old log deleted: the flush ended').to.equal(false)
    expect(await flushing(join(dir, 'missing')), 'a missing directory').to.equal(false)
  })

  it('waits until the flush ends', async () => {
    await idleFiles()
    expect(await flushDone(dir), 'no flush: no wait').to.equal(false)
    await writeFile(join(dir, '000009.log'), '')
    const started = Date.now()
    setTimeout(() => void unlink(join(dir, '000007.log')), 150)
    expect(await flushDone(dir, { pollMs: 5, maxWaitMs: 10_000 })).to.equal(true)
    expect(Date.now() - started, 'it waited for the flush to end').to.be.at.least(140)
    expect(await flushing(dir)).to.equal(false)
  })

  it('gives up after maxWaitMs', async () => {
    await idleFiles()
    await writeFile(join(dir, '000009.log'), '')
    const started = Date.now()
    expect(await flushDone(dir, { pollMs: 5, maxWaitMs: 100 })).to.equal(true)
    expect(Date.now() - started, 'it waited maxWaitMs').to.be.at.least(95)
  })

  it('holds compactRange while a flush shows, then compacts', async () => {
    const db = new ClassicLevel<Buffer, Buffer>(join(dir, 'db'), { keyEncoding: 'buffer', valueEncoding: 'buffer' })
    await db.open()
    try {
      const value = Buffer.alloc(1024, 1)
      await db.batch(Array.from({ length: 2000 }, (_, i) => ({ type: 'put' as const, key: Buffer.from(`k${i}`), value })))
      await db.batch(Array.from({ length: 2000 }, (_, i) => ({ type: 'del' as const, key: Buffer.from(`k${i}`) })))
      // A log numbered above LevelDB's own stands in for a switch in progress; removed before LevelDB looks.
      const standIn = join(dir, 'db', '999999.log')
      await writeFile(standIn, '')
      let compacted = false
      const started = Date.now()
      const compaction = compactRangeBetweenFlushes(db, join(dir, 'db'), Buffer.from('k'), Buffer.from('l')).then(() => {
        compacted = true
      })
      await sleep(150)
      expect(compacted, 'held while two logs show').to.equal(false)
      await unlink(standIn)
      await compaction
      expect(Date.now() - started).to.be.greaterThanOrEqual(140)
      const left = await db.getProperty('leveldb.num-files-at-level0')
      expect(left, 'the memtable was flushed and the range compacted out of level 0').to.equal('0')
    } finally {
      await db.close()
    }
  })

  it("holds a LevelLog's reclaimSpace and a compaction's compactRange while a flush shows", async () => {
    const logDir = join(dir, 'log')
    const log = await openLevelLog({ dir: logDir, fsync: 'never', compactionCompactsRange: true })
    try {
      for (let i = 0; i < 20; i++) await log.put('k', `v${i}`)
      const standIn = join(logDir, '999999.log')
      const target = log.revision
      for (const [what, call] of [
        ['reclaimSpace', () => log.reclaimSpace()],
        ['compact', () => log.compact(target)],
      ] as const) {
        await writeFile(standIn, '')
        let done = false
        const running = call().then(() => {
          done = true
        })
        await sleep(300)
        expect(done, `${what} held while two logs show`).to.equal(false)
        await unlink(standIn)
        await running
      }
      expect((await log.status()).compactRevision).to.equal(target)
    } finally {
      await log.close()
    }
  })

  it('finds a real LevelLog between flushes after writes, a reopen and a reclaim', async () => {
    const logDir = join(dir, 'log')
    let log = await openLevelLog({ dir: logDir, fsync: 'never', leveldbWriteBufferSize: 64 * 1024 })
    for (let round = 0; round < 20; round++) {
      await Promise.all(Array.from({ length: 50 }, (_, i) => log.put(`k/${i}`, Buffer.alloc(512, round))))
    }
    await log.close()
    log = await openLevelLog({ dir: logDir, fsync: 'never', leveldbWriteBufferSize: 64 * 1024 })
    try {
      await log.compact(log.revision)
      await log.reclaimSpace()
      expect(await flushing(logDir), 'one write-ahead log once LevelDB is idle').to.equal(false)
      expect((await log.range('k/0')).kvs[0].value).to.deep.equal(Buffer.alloc(512, 19))
    } finally {
      await log.close()
    }
  })
})
