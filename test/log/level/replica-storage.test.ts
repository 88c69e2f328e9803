/**
 * log/level/replica-storage.ts: a replicator's copy applies runs of messages unsynced (group commit), so
 * its write-ahead log is appended, never allocated ahead of its writes, even with fsync 'always' (which
 * preallocates for a store of its own).
 */
import { expect } from 'chai'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Log } from '../../../log/backend.js'
import { openLevelLog } from '../../../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../../log/level/options.js'
import { levelReplicaStorage } from '../../../log/level/replica-storage.js'

/** The largest of LevelDB's write-ahead log files (NNNNNN.log) in `dir`. */
async function largestWal(dir: string): Promise<number> {
  const names = (await readdir(dir)).filter((f) => /^\d+\.log$/.test(f))
  const sizes = await Promise.all(names.map(async (f) => (await stat(join(dir, f))).size))
  return Math.max(0, ...sizes)
}

describe('log/level levelReplicaStorage', function () {
  this.timeout(30_000)
  let dir = ''
  const open: Log[] = []
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-replica-storage-'))
  })
  afterEach(async () => {
    for (const log of open.splice(0)) await log.close().catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
  })

  it("a copy's write-ahead log is not preallocated, with fsync 'always' and the default preallocation", async () => {
    const chunk = DEFAULT_LEVEL_LOG_OPTIONS.leveldbWalPreallocateBytes
    expect(chunk).to.be.greaterThan(0)
    // The same settings for a store of its own preallocate: the measure below sees preallocation.
    const own = await openLevelLog({ dir: join(dir, 'own'), fsync: 'always', deferFileDeletes: false })
    open.push(own)
    await own.put('/k', Buffer.from('v'))
    expect(await largestWal(join(dir, 'own'))).to.be.at.least(chunk)

    const storage = levelReplicaStorage({ dir: join(dir, 'copy'), fsync: 'always', deferFileDeletes: false })
    const copy = await storage.open(storage.dir)
    open.push(copy)
    for (let i = 0; i < 20; i++) {
      const put = { type: 'txn' as const, request: { success: [{ type: 'put' as const, key: `/k/${i}`, value: 'v' }] } }
      await copy.applyReplicated(Date.now(), [put], { name: 'test.applied', value: i }, i === 19)
    }
    const wal = await largestWal(join(dir, 'copy'))
    expect(wal).to.be.greaterThan(0)
    expect(wal).to.be.lessThan(chunk)
  })
})
