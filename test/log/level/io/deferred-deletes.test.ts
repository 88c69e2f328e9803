/**
 * log/level/io/deferred-deletes.ts: data files get a second name in trash/ as they appear, a file whose LevelDB
 * name is deleted is freed from the trash, and the trash is emptied on start and on close. First with
 * files made by hand (standing in for LevelDB), then under a real LevelLog whose compaction drops files.
 */
import { expect } from 'chai'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, stat, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DeferredDeletes } from '../../../../log/level/io/deferred-deletes.js'
import { openLevelLog } from '../../../../log/level/level-log.js'

async function until(what: string, check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

const links = async (path: string) => (await stat(path).catch(() => undefined))?.nlink ?? 0

describe('log/deferred-deletes', function () {
  this.timeout(60_000)
  let dir = ''
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-deferred-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('links data files as they appear, frees them once deleted, and empties the trash on close', async () => {
    await writeFile(join(dir, '000005.ldb'), Buffer.alloc(4096, 1)) // there before start
    await mkdir(join(dir, 'trash'))
    await writeFile(join(dir, 'trash', '000001.ldb'), 'left by a crash')
    const d = await DeferredDeletes.start(dir, 0)
    expect(d, 'started').to.not.equal(undefined)
    try {
      expect(await readdir(join(dir, 'trash')), 'emptied on start, then the existing file linked').to.deep.equal(['000005.ldb'])
      expect(await links(join(dir, '000005.ldb'))).to.equal(2)

      await writeFile(join(dir, '000007.log'), Buffer.alloc(4096, 2))
      await writeFile(join(dir, 'MANIFEST-000002'), 'not a data file')
      await until('the new log file linked', async () => (await links(join(dir, '000007.log'))) === 2)
      expect(existsSync(join(dir, 'trash', 'MANIFEST-000002')), 'only tables and logs').to.equal(false)

      // LevelDB deletes its name: only a directory entry goes; the trash then frees the file.
      await unlink(join(dir, '000005.ldb'))
      await until('the deleted file freed', async () => !existsSync(join(dir, 'trash', '000005.ldb')))
      expect(await links(join(dir, '000007.log')), 'a live file keeps both names').to.equal(2)
    } finally {
      await d!.close()
    }
    expect(existsSync(join(dir, 'trash')), 'trash removed on close').to.equal(false)
    expect((await readdir(dir)).sort()).to.deep.equal(['000007.log', 'MANIFEST-000002'])
    expect(await links(join(dir, '000007.log'))).to.equal(1)
  })

  it('frees a deleted file a chunk at a time at the paced rate; drained() waits for it', async () => {
    const d = (await DeferredDeletes.start(dir, 4 * 1024 * 1024))! // 4 MiB/s: chunks of 256 KiB
    try {
      await writeFile(join(dir, '000009.ldb'), Buffer.alloc(2 * 1024 * 1024, 3))
      await until('linked', async () => (await links(join(dir, '000009.ldb'))) === 2)
      const t0 = performance.now()
      await unlink(join(dir, '000009.ldb'))
      const trashed = join(dir, 'trash', '000009.ldb')
      await until('truncated part of the way', async () => {
        const size = (await stat(trashed).catch(() => undefined))?.size
        return size !== undefined && size > 0 && size < 2 * 1024 * 1024
      })
      await d.drained()
      const ms = performance.now() - t0
      expect(existsSync(trashed), 'freed').to.equal(false)
      expect(d.stats.freed).to.equal(1)
      // Paced, not at once: 2 MiB at 4 MiB/s takes most of half a second at least (timers are never
      // much early); a busy machine only makes it longer, and a hang fails drained() on the test's timeout.
      expect(ms, '2 MiB at 4 MiB/s').to.be.greaterThan(350)
    } finally {
      await d.close()
    }
  })

  it('under a LevelLog: the files a compaction drops are freed, the live ones stay linked', async () => {
    const log = await openLevelLog({ dir, fsync: 'never' })
    try {
      const value = Buffer.alloc(4096, 7) // 40 MB in all: past the 32 MiB write buffer, so files get dropped
      for (let i = 0; i < 10_000; i += 1000) {
        await Promise.all(Array.from({ length: 1000 }, (_, j) => log.put(`k/${(i + j) % 500}`, value)))
      }
      await log.compact(log.revision)
      await log.reclaimSpace()
      const data = async () => (await readdir(dir)).filter((n) => /^\d+\.(ldb|log)$/.test(n))
      await until('every trash entry linked to a live file', async () => {
        const trash = await readdir(join(dir, 'trash'))
        const live = await data()
        return trash.every((n) => live.includes(n)) && live.every((n) => trash.includes(n))
      })
      for (const name of await data()) expect(await links(join(dir, name)), name).to.equal(2)
      expect(log.deletes?.stats.freed, 'files LevelDB dropped, freed from the trash').to.be.greaterThan(0)
      expect((await log.range('k/', { rangeEnd: 'k0' })).kvs).to.have.length(500)
    } finally {
      await log.close()
    }
    expect(existsSync(join(dir, 'trash'))).to.equal(false)
  })
})
