/**
 * log/level/level-log.ts leveldbOptions(): the LevelDB settings reach LevelDB. A small write buffer turns the
 * same writes into table files that the default buffer still holds in memory (and in LevelDB's log).
 */
import { expect } from 'chai'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { leveldbOptions, openLevelLog } from '../../../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../../log/level/options.js'

const tables = async (dir: string) => (await readdir(dir)).filter((f) => f.endsWith('.ldb')).length

/** Writes ~1 MiB through a LevelLog opened with `writeBuffer`; the table files while it is still open. */
async function tablesAfterWrites(dir: string, writeBuffer: number, waitMs: number): Promise<number> {
  const log = await openLevelLog({ dir, deferFileDeletes: false, leveldbWriteBufferSize: writeBuffer })
  try {
    const value = Buffer.alloc(4096, 'v')
    for (let i = 0; i < 256; i += 16) {
      await Promise.all(Array.from({ length: 16 }, (_, j) => log.put(`/k/${i + j}`, value)))
    }
    // LevelDB writes a full buffer out from its background thread: give it time to.
    const end = Date.now() + waitMs
    while (Date.now() < end && (await tables(dir)) === 0) await new Promise((r) => setTimeout(r, 20))
    return await tables(dir)
  } finally {
    await log.close()
  }
}

describe('log/level-log leveldbOptions', function () {
  this.timeout(30_000)
  let dir = ''
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-leveldb-options-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('maps the settings onto LevelDB options', () => {
    const o = leveldbOptions({
      leveldbWriteBufferSize: 1 << 20,
      leveldbCacheSize: 3 << 20,
      leveldbMaxFileSize: 5 << 20,
      leveldbWalPreallocateBytes: 7 << 20,
      fsync: 'always',
    })
    expect(o).to.include({
      writeBufferSize: 1 << 20,
      cacheSize: 3 << 20,
      maxFileSize: 5 << 20,
      compression: false,
      walPreallocateBytes: 7 << 20,
    })
  })

  it('a 64 KiB write buffer makes table files from 1 MiB of writes', async () => {
    expect(await tablesAfterWrites(dir, 64 * 1024, 5000)).to.be.greaterThan(0)
  })

  it('the default write buffer (32 MiB) holds the same writes in memory', async () => {
    expect(DEFAULT_LEVEL_LOG_OPTIONS.leveldbWriteBufferSize).to.equal(32 * 1024 * 1024)
    // The wait ends early only once a table file exists; none should within a second.
    expect(await tablesAfterWrites(dir, DEFAULT_LEVEL_LOG_OPTIONS.leveldbWriteBufferSize, 1000)).to.equal(0)
  })
})
