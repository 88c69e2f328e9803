/**
 * bench/lib/recorded-deletes.ts: the deletions it records are a real compaction's (on a real LevelLog on
 * disk), and the replay writes them all, in batches of the size asked for, no faster than the pace.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RecordedDeletes, replayDeletes } from '../../../bench/lib/recorded-deletes.js'
import { LOG_END, LOG_START, logKey, TAG_HIST } from '../../../log/level/keyspace.js'
import type { Db } from '../../../log/level/latest-view.js'
import { openLevelLog, type LevelLog } from '../../../log/level/level-log.js'
import type { BatchOp } from '../../../log/level/segments.js'

const KEYS = 7

/** Every key of the log and hist tables, hex. */
async function logAndHistKeys(db: Db): Promise<Set<string>> {
  const out = new Set<string>()
  for (const range of [
    { gte: LOG_START, lt: LOG_END },
    { gte: Buffer.from([TAG_HIST]), lt: Buffer.from([TAG_HIST + 1]) },
  ]) {
    for await (const k of db.keys(range)) out.add(k.toString('hex'))
  }
  return out
}

const isLogKey = (hex: string) => Buffer.from(hex, 'hex')[0] === LOG_START[0]

describe('bench/lib/recorded-deletes', function () {
  this.timeout(30_000)
  let dir = ''
  let log: LevelLog
  const dbOf = (l: LevelLog) => (l as unknown as { db: Db }).db

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-recorded-deletes-'))
    log = await openLevelLog({ dir, fsync: 'never' })
    for (let i = 0; i < 300; i++) await log.put(`key-${i % KEYS}`, `value-${i}`)
  })

  afterEach(async () => {
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('records the hist records and log entries that compacting the same span deletes', async () => {
    const target = log.revision - 20
    // Small room at first, so that both buffers have to grow.
    const recorded = await RecordedDeletes.read(dbOf(log), target, { capacity: { bytes: 16, keys: 2 } })
    const keys = recorded.ops(0, recorded.versions).map((op) => op.key.toString('hex'))
    const before = await logAndHistKeys(dbOf(log))
    await log.compact(target)
    const after = await logAndHistKeys(dbOf(log))
    const removed = new Set([...before].filter((k) => !after.has(k)))

    // Every put below the target but each key's first superseded something.
    expect(recorded.versions).to.equal(target - 1 - 1 - KEYS)
    expect(new Set(keys).size).to.equal(keys.length)
    for (const k of keys) expect(removed.has(k), k).to.equal(true)
    // The compaction removed the same hist records, and besides the recorded log entries only those of
    // versions still live (at most one per key: the kv record holds them).
    expect([...removed].filter((k) => !isLogKey(k)).sort()).to.deep.equal(keys.filter((k) => !isLogKey(k)).sort())
    const recordedSet = new Set(keys)
    expect([...removed].filter((k) => !recordedSet.has(k)).length).to.be.at.most(KEYS)
  })

  it('replays every recorded deletion in batches of the size asked for, at most at the pace asked for', async () => {
    const recorded = await RecordedDeletes.read(dbOf(log), 12)
    expect(recorded.versions).to.equal(12 - 1 - 1 - KEYS)
    const batches: BatchOp[][] = []
    const started = performance.now()
    const versions = await replayDeletes(
      recorded,
      async (build) => {
        batches.push(build())
      },
      { revisionsPerBatch: 2, revisionsPerSec: 100 },
    )
    const ms = performance.now() - started

    expect(versions).to.equal(3)
    expect(batches.map((b) => b.length)).to.deep.equal([4, 2])
    expect(batches.flat().every((op) => op.type === 'del')).to.equal(true)
    expect(batches.flat().filter((op) => op.key.equals(logKey(2)))).to.have.length(1)
    // 3 versions at 100/s: the replay ends no sooner than 30 ms after it began.
    expect(ms).to.be.at.least(28)
  })
})
