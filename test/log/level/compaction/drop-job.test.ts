/**
 * log/level/compaction/drop-job.ts (compactionMethod 'drop'): after compact(R) no log entry below R is
 * left, most of them gone as whole table files; each key keeps exactly its newest version below R (none
 * if that is a delete), copied into hist when the key has been written since and read from the kv record
 * when not; and the drop waits for readers of views from before it, so a snapshot export that was under
 * way when the compaction started is a consistent copy. (semantics.test.ts checks every read at and above
 * R through the compaction; crash.test.ts kills it.)
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Packr } from 'msgpackr'
import { metaKey } from '../../../../log/level/keyspace.js'
import { openLevelLog, type LevelLog } from '../../../../log/level/level-log.js'
import { restoreSnapshot } from '../../../../log/level/snapshot.js'
import { HIST_IN_LOG, HIST_MATERIALIZED } from '../../../../log/level/records.js'
import { belowFloorOf, readRawTables, withRawDb } from '../raw-db.js'

const KEYS = 50
const VALUE = 'x'.repeat(400)

async function writeRevisions(log: LevelLog, revisions: number, tag: string): Promise<void> {
  for (let i = 0; i < revisions; i += 100) {
    await Promise.all(Array.from({ length: 100 }, (_, j) => log.put(`k/${(i + j) % KEYS}`, `${tag}${i + j}:${VALUE}`)))
  }
}

describe('log/compactor: method drop', function () {
  this.timeout(120_000)
  let dir = ''

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-drop-job-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('removes every log entry below the floor, most as whole table files, and keeps one version per key', async () => {
    // Small table files and memtable: the log below the floor spans many files.
    const log = await openLevelLog({
      dir,
      fsync: 'never',
      compactionMethod: 'drop',
      leveldbMaxFileSize: 256 * 1024,
      leveldbWriteBufferSize: 512 * 1024,
    })
    let R = 0
    try {
      await writeRevisions(log, 20_000, 'a')
      await log.delete('k/0')
      R = log.revision + 1
      // Written since: k/0 comes back at R; k/1..k/9 (their versions below R are copied into hist).
      for (let k = 0; k < 10; k++) await log.put(`k/${k}`, `after:${k}`)
      await log.reclaimSpace()
      const result = await log.compact(R)
      expect(result.removedRevisions, 'every entry below R (the first write is revision 2)').to.equal(R - 2)
      expect(result.droppedFiles, 'table files dropped').to.be.greaterThan(5)
      expect(result.droppedBytes, 'most of the log').to.be.greaterThan(5_000_000)
      expect((await log.status()).belowFloor).to.deep.equal({ entries: 0, bytes: 0 })
      const at = await log.range('k/', { rangeEnd: 'k0', revision: R })
      expect(at.kvs).to.have.length(KEYS)
      const k0 = at.kvs.find((kv) => kv.key.toString() === 'k/0')
      expect(k0 && [k0.createRevision, k0.version], 'k/0 written anew at R after its delete').to.deep.equal([R, 1])
      expect(at.kvs.find((kv) => kv.key.toString() === 'k/1')?.value.toString()).to.match(/^a\d+:x/)
    } finally {
      await log.close()
    }

    const tables = await withRawDb(dir, readRawTables)
    expect(belowFloorOf(tables, R), 'log entries below the floor on disk').to.deep.equal({ entries: 0, bytes: 0 })
    const below = tables.hist.filter((name) => Number(name.split('@')[1]) < R)
    expect(below, 'one version below R per key but the deleted one').to.have.length(KEYS - 1)
    for (const name of below) {
      const k = Number(name.slice(2, name.indexOf('@')))
      expect(tables.histKinds.get(name), name).to.equal(k < 10 ? HIST_MATERIALIZED : HIST_IN_LOG)
    }
  })

  it('waits for a snapshot export begun before it: the export is a consistent copy', async () => {
    const log = await openLevelLog({ dir, fsync: 'never', compactionMethod: 'drop' })
    const copy = join(dir, 'copy')
    try {
      await writeRevisions(log, 3_000, 'a')
      const V = log.revision
      const stream = await log.snapshot(4096)
      const chunks: Buffer[] = []
      const it = stream.chunks[Symbol.asyncIterator]()
      const first = await it.next()
      if (first.done !== true) chunks.push(first.value)

      let finished = false
      const compaction = log.compact(V - 100).then((r) => ((finished = true), r))
      await new Promise((r) => setTimeout(r, 500))
      expect(finished, 'the compaction waits for the export').to.equal(false)
      expect(log.compactRevision, 'the floor is raised at once').to.equal(V - 100)

      for (let next = await it.next(); next.done !== true; next = await it.next()) chunks.push(next.value)
      const result = await compaction
      expect(result.removedRevisions).to.equal(V - 102)

      await restoreSnapshot(
        (async function* () {
          yield* chunks
        })(),
        copy,
      )
    } finally {
      await log.close()
    }
    const restored = await openLevelLog({ dir: copy, fsync: 'never' })
    try {
      expect(restored.revision).to.equal(log.revision)
      expect(restored.compactRevision, 'the copy was taken before the compaction').to.equal(0)
      const history = await restored.history('k/', { rangeEnd: 'k0', fromRevision: 2 })
      expect(history.entries, 'every revision of the copy').to.have.length(3_000)
    } finally {
      await restored.close()
    }
  })

  it('a job whose walk is done ends with the drop when the store is opened again with method scan', async () => {
    const log = await openLevelLog({ dir, fsync: 'never', compactionMethod: 'drop' })
    await writeRevisions(log, 2_000, 'a')
    // A key of its own at R: every other key's newest version is below R and live, so a walk would copy
    // nothing, and a job recorded as walked is what a walk would have left.
    await log.put('z', 'at R')
    const R = log.revision
    await log.close()
    await withRawDb(dir, (db) =>
      db.put(metaKey('compact'), new Packr({ useRecords: false }).pack({ floor: R, job: { to: R, next: R, walked: true } })),
    )

    const again = await openLevelLog({ dir, fsync: 'never', compactionMethod: 'scan' })
    try {
      await again.compactionIdle()
      const status = await again.status()
      expect(status.compaction, 'the job finished').to.equal(undefined)
      expect(status.segments[0].firstRevision).to.equal(R)
      const at = await again.range(Buffer.from([0]), { rangeEnd: Buffer.from([0]), revision: R })
      expect(at.kvs).to.have.length(KEYS + 1)
    } finally {
      await again.close()
    }
    const tables = await withRawDb(dir, readRawTables)
    expect(belowFloorOf(tables, R), 'log entries below the floor').to.deep.equal({ entries: 0, bytes: 0 })
  })
})
