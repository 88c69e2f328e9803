/**
 * log/level/io/inline-write.ts and the writer's use of it: kvlog's build of classic-level has batchSync (the
 * install built it: log/level/native/), an inline batch is atomic and readable on return, and LevelLog
 * writes a lone write inline but a group of concurrent writes, a lone write right after larger groups,
 * compaction's batches and everything with inlineWriteMaxTxns 0 through LevelDB's thread pool.
 */
import { expect } from 'chai'
import { ClassicLevel } from '../../../../log/level/classic-level.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inlineWrite } from '../../../../log/level/io/inline-write.js'
import { openLevelLog, type LevelLog } from '../../../../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../../../log/level/options.js'

describe('log/inline-write', function () {
  this.timeout(60_000)
  let dir = ''
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-inline-write-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  describe('ClassicLevel#batchSync', () => {
    it("is there (npm install built kvlog's LevelDB addon, log/level/native/)", async () => {
      const db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
      await db.open()
      try {
        expect(inlineWrite(db), "kvlog's LevelDB addon was not built: see log/level/native/").to.be.a('function')
      } finally {
        await db.close()
      }
    })

    it('writes puts and deletes as one batch before it returns, and fails once the database is closed', async () => {
      const db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
      await db.open()
      const write = inlineWrite(db)!
      const k = (s: string): Buffer => Buffer.from(s)
      await db.put(k('gone'), k('x'))
      write(
        [
          { type: 'put', key: k('a'), value: k('1') },
          { type: 'put', key: Buffer.from([0, 255, 0]), value: Buffer.alloc(100_000, 7) },
          { type: 'del', key: k('gone') },
        ],
        true,
      )
      expect(db.getSync(k('a'))?.toString()).to.equal('1')
      expect(db.getSync(Buffer.from([0, 255, 0]))?.equals(Buffer.alloc(100_000, 7))).to.equal(true)
      expect(db.getSync(k('gone'))).to.equal(undefined)
      write([], true) // nothing to write: no error
      await db.close()
      expect(() => write([{ type: 'put', key: k('b'), value: k('2') }], false))
        .to.throw()
        .with.property('code', 'LEVEL_DATABASE_NOT_OPEN')
      const reopened = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
      await reopened.open()
      expect((await reopened.get(k('a')))?.toString(), 'durable across a reopen').to.equal('1')
      await reopened.close()
    })
  })

  describe('LevelLog', () => {
    let log: LevelLog | undefined
    afterEach(async () => {
      await log?.close()
      log = undefined
    })
    const open = async (inlineWriteMaxTxns: number): Promise<LevelLog> =>
      (log = await openLevelLog({ ...DEFAULT_LEVEL_LOG_OPTIONS, dir, fsync: 'always', inlineWriteMaxTxns }))

    it("writes each of a lone writer's puts inline, with its revision, readable at once", async () => {
      const l = await open(1)
      for (let i = 1; i <= 20; i++) {
        const r = await l.put(`k${i % 3}`, `v${i}`)
        expect(r.revision).to.equal(i + 1)
        expect((await l.get(`k${i % 3}`))?.value.toString()).to.equal(`v${i}`)
      }
      expect(l.writerStats.inlineBatches).to.equal(20)
      expect(l.writerStats.batches).to.equal(20)
      await l.close()
      log = undefined
      const again = await open(1)
      expect(again.revision, 'after a reopen').to.equal(21)
      expect((await again.get('k2'))?.value.toString()).to.equal('v20')
    })

    it('writes a group of concurrent writes through the thread pool', async () => {
      const l = await open(1)
      await Promise.all(Array.from({ length: 50 }, (_, i) => l.put(`k${i}`, 'v')))
      const s = l.writerStats
      expect(s.txns).to.equal(50)
      expect(s.batches, 'the 50 puts shared groups').to.be.lessThan(50)
      expect(s.inlineBatches).to.equal(0)
    })

    it('writes a lone write through the thread pool while the recent groups were large, inline once they are small again', async () => {
      const l = await open(1)
      for (let burst = 0; burst < 10; burst++) await Promise.all(Array.from({ length: 64 }, (_, i) => l.put(`k${i}`, `b${burst}`)))
      expect(l.writerStats.recentGroupTxns).to.be.greaterThan(2)
      await l.put('lone', '1')
      expect(l.writerStats.inlineBatches, 'right after the bursts').to.equal(0)
      for (let i = 0; i < 100 && l.writerStats.inlineBatches === 0; i++) await l.put('lone', `${i}`)
      expect(l.writerStats.inlineBatches, 'after lone writes only').to.be.greaterThan(0)
      expect(l.writerStats.recentGroupTxns).to.be.lessThan(2)
    })

    it('writes inline groups up to inlineWriteMaxTxns, and none at 0', async () => {
      const wide = await open(100)
      await Promise.all(Array.from({ length: 10 }, (_, i) => wide.put(`k${i}`, 'v')))
      expect(wide.writerStats.inlineBatches, 'a group of 10 while idle').to.be.greaterThan(0)
      await wide.close()
      log = undefined
      const off = await open(0)
      for (let i = 0; i < 5; i++) await off.put('k', `v${i}`)
      await Promise.all(Array.from({ length: 10 }, (_, i) => off.put(`k${i}`, 'v')))
      expect(off.writerStats.inlineBatches).to.equal(0)
      expect((await off.get('k'))?.value.toString()).to.equal('v4')
    })

    it("writes compaction's batches through the thread pool", async () => {
      const l = await open(1)
      for (let i = 0; i < 30; i++) await l.put('k', `v${i}`)
      const before = l.writerStats
      await l.compact(25)
      const after = l.writerStats
      expect(after.inlineBatches, 'no compaction batch went inline').to.equal(before.inlineBatches)
      expect((await l.get('k'))?.value.toString()).to.equal('v29')
    })
  })
})
