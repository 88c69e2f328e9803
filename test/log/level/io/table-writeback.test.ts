/**
 * log/level/io/table-writeback.ts: table files that grow get synced every interval, other files do not, a file
 * deleted before its turn is skipped, and close stops it. First with files written by hand (standing in
 * for LevelDB), then under a real LevelLog whose small write buffer makes table files.
 */
import { expect } from 'chai'
import { appendFile, mkdtemp, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLevelLog } from '../../../../log/level/level-log.js'
import { TableWriteback } from '../../../../log/level/io/table-writeback.js'
import { sleep, waitFor } from '../../../support/wait.js'

describe('log/table-writeback', function () {
  this.timeout(60_000)
  let dir = ''
  let writeback: TableWriteback | undefined
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-table-writeback-'))
  })
  afterEach(async () => {
    await writeback?.close()
    writeback = undefined
    await rm(dir, { recursive: true, force: true })
  })

  it('is off at interval 0', () => {
    expect(TableWriteback.start(dir, 0)).to.equal(undefined)
  })

  it('syncs a table file that grows, and not the other files', async () => {
    writeback = TableWriteback.start(dir, 10)!
    for (const name of ['000003.log', 'MANIFEST-000002', 'LOG', '000004.ldb.tmp']) await appendFile(join(dir, name), Buffer.alloc(4096))
    await sleep(200)
    expect(writeback.stats.syncs, 'no table file was written').to.equal(0)
    for (let i = 0; i < 5; i++) {
      await appendFile(join(dir, '000005.ldb'), Buffer.alloc(64 * 1024, i))
      await sleep(30)
    }
    await waitFor('a sync', () => writeback!.stats.syncs > 0)
    // Let the last append's event and pass land (under load they may come late), then watch a quiet spell.
    await sleep(300)
    const syncs = writeback.stats.syncs
    await sleep(300)
    expect(writeback.stats.syncs, 'nothing appended since: nothing more to sync').to.equal(syncs)
  })

  it('skips a file deleted before its turn', async () => {
    writeback = TableWriteback.start(dir, 200)!
    await appendFile(join(dir, '000007.ldb'), Buffer.alloc(4096))
    await unlink(join(dir, '000007.ldb'))
    await sleep(500)
    expect(writeback.stats.syncs).to.equal(0)
  })

  it('stops at close', async () => {
    writeback = TableWriteback.start(dir, 10)!
    await writeback.close()
    await appendFile(join(dir, '000009.ldb'), Buffer.alloc(4096))
    await sleep(200)
    expect(writeback.stats.syncs).to.equal(0)
  })

  it('syncs the table files of a real LevelLog, which reads back the same after a reopen', async () => {
    const logDir = join(dir, 'log')
    const options = { dir: logDir, fsync: 'never' as const, leveldbWriteBufferSize: 64 * 1024, tableSyncInterval: 5 }
    let log = await openLevelLog(options)
    try {
      expect(log.writeback, 'on by default settings').to.not.equal(undefined)
      for (let round = 0; round < 16; round++) {
        await Promise.all(Array.from({ length: 16 }, (_, i) => log.put(`k/${round}/${i}`, Buffer.alloc(4096, round))))
      }
      await waitFor('a synced table file', () => log.writeback!.stats.syncs > 0)
    } finally {
      await log.close()
    }
    log = await openLevelLog(options)
    try {
      const { kvs } = await log.range('k/', { rangeEnd: 'k0' })
      expect(kvs).to.have.length(256)
      expect(kvs.find((kv) => kv.key.toString() === 'k/15/3')?.value).to.deep.equal(Buffer.alloc(4096, 15))
    } finally {
      await log.close()
    }
  })
})
