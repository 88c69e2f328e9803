/**
 * log/level/compaction/compactor.ts, compactionCompactsRange: a compaction compacts LevelDB's range of the log it scanned
 * (giving the space back at once) when asked, as by default; off, the deletion markers wait for LevelDB's
 * background compaction or reclaimSpace() (compactor.ts, "Giving space back").
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLevelLog, type LevelLog } from '../../../../log/level/level-log.js'
import { rng } from '../../../support/random.js'

describe('log/compactor: compactionCompactsRange', function () {
  this.timeout(60_000)
  let dir = ''
  let log: LevelLog | undefined

  afterEach(async () => {
    await log?.close()
    log = undefined
    await rm(dir, { recursive: true, force: true })
  })

  /** About 3,000 x 2 KiB of superseded values, in table files; returns the database size then. */
  async function fill(compactsRange: boolean): Promise<number> {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-compact-range-'))
    log = await openLevelLog({ dir, fsync: 'never', compactionCompactsRange: compactsRange })
    const random = rng(42)
    const chunk = Buffer.alloc(2048)
    for (let round = 0; round < 150; round++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          for (let j = 0; j < chunk.length; j++) chunk[j] = Math.floor(random() * 256)
          return log!.put(`big/${i}`, Buffer.from(chunk))
        }),
      )
    }
    await log.reclaimSpace()
    const before = (await log.status()).dbSize
    expect(before, 'about 3000 x 2 KiB written').to.be.greaterThan(5 * 1024 * 1024)
    return before
  }

  it('on (the default): the space of the removed log comes back when compact() resolves', async () => {
    const before = await fill(true)
    await log!.compact(log!.revision)
    const after = (await log!.status()).dbSize
    expect(after, `db size ${before} -> ${after}`).to.be.lessThan(before / 4)
  })

  it('off: compact() leaves the space to LevelDB, and reclaimSpace() gives it back', async () => {
    const before = await fill(false)
    const result = await log!.compact(log!.revision)
    expect(result.removedRevisions).to.be.greaterThan(2900)
    const after = (await log!.status()).dbSize
    expect(after, `db size ${before} -> ${after} before reclaimSpace`).to.be.greaterThan(before / 2)
    await log!.reclaimSpace()
    const reclaimed = (await log!.status()).dbSize
    expect(reclaimed, `db size ${before} -> ${reclaimed} after reclaimSpace`).to.be.lessThan(before / 4)
    expect((await log!.range('big/0')).kvs.length).to.equal(1)
  })
})
