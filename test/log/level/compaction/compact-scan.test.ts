/**
 * log/level/compaction/compact-scan.ts: a job's scan reads several spans at a time and hands their batches to `write`
 * together, in revision order, each ending at its own last revision; planned ahead of the writes, the
 * batches leave the database exactly as batches read, planned and written one at a time do; the scan
 * stops after a read's batches when asked; writeInTurn writes batches one after another with the duty
 * cycle's pause after each. The scans here run on a raw database (no log open), written by `write` as
 * the compactor would write them, without its progress record.
 */
import { expect } from 'chai'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SingleOpEntries } from '../../../../log/level/compaction/compact-batch.js'
import { scanJob, writeInTurn, type PlannedBatch, type ScanResult } from '../../../../log/level/compaction/compact-scan.js'
import { openLevelLog } from '../../../../log/level/level-log.js'
import { readRawTables, withRawDb } from '../raw-db.js'

const SPAN = 5

describe('log/compact-scan: several batches per read', function () {
  this.timeout(60_000)
  let dir = ''
  let first = 0
  let to = 0

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-compact-scan-'))
    const log = await openLevelLog({ dir, fsync: 'never', compactionThread: false })
    first = log.revision + 1
    // Single puts over a few keys, transactions of puts to some of them (multi-op entries whose ops are
    // superseded one by one, in different batches: rewritten, then removed), and deletes: every kind of
    // change a batch makes, with superseded versions in the same span, the same read, and reads before.
    for (let i = 0; i < 160; i++) {
      const keys = [`k${(i + 1) % 7}`, `k${(i + 3) % 7}`, 't/x']
      if (i % 9 === 0) await log.txn({ success: keys.map((key) => ({ type: 'put' as const, key, value: `${i}` })) })
      else if (i % 13 === 0) await log.delete(`k${i % 7}`)
      else await log.put(`k${i % 7}`, `v${i}`)
    }
    to = log.revision - 3
    await log.close()
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  /** Scans a copy of the database, `perRead` spans at a time; returns what was written, and the tables after. */
  async function scanCopy(perRead: number, stopAfter = Infinity) {
    const copy = await mkdtemp(join(tmpdir(), 'kvlog-compact-scan-copy-'))
    try {
      await cp(dir, copy, { recursive: true })
      return await withRawDb(copy, async (db) => {
        const writes: PlannedBatch[][] = []
        const result: ScanResult = await scanJob(
          {
            db,
            batchRevisions: () => SPAN,
            batchesPerRead: perRead,
            singles: new SingleOpEntries(),
            stopping: () => writes.length >= stopAfter,
            write: async (batches) => {
              writes.push(batches)
              for (const b of batches) await db.batch(b.plan.ops)
            },
          },
          { to, next: first },
        )
        const tables = await readRawTables(db)
        const log = [...tables.log].map(([rev, e]) => `${rev}: ${e.ops.map((op) => op.key.toString()).join(' ')}`)
        return { writes, result, log, hist: tables.hist }
      })
    } finally {
      await rm(copy, { recursive: true, force: true })
    }
  }

  it("hands each read's batches to write together, in revision order, each ending at its last revision", async () => {
    const { writes, result } = await scanCopy(4)
    expect(writes.length).to.equal(Math.ceil((to - first) / (4 * SPAN)))
    expect(
      writes.slice(0, -1).every((w) => w.length === 4),
      writes.map((w) => w.length).join(' '),
    ).to.equal(true)
    const spans = writes.flat().map((b) => ({ last: b.last, revs: b.plan.scanned.map((s) => s.rev) }))
    expect(spans.every((s) => s.revs.length <= SPAN && s.last === s.revs[s.revs.length - 1])).to.equal(true)
    expect(spans.flatMap((s) => s.revs)).to.deep.equal(Array.from({ length: to - first }, (_, i) => first + i))
    expect(result.removedRevisions).to.equal(to - first)
  })

  it('leaves the database as batches read, planned and written one at a time do', async () => {
    const one = await scanCopy(1)
    const several = await scanCopy(4)
    expect(one.writes.every((w) => w.length === 1)).to.equal(true)
    expect(several.log).to.deep.equal(one.log)
    expect(several.hist).to.deep.equal(one.hist)
    expect(several.result).to.deep.equal(one.result)
    // The scan did remove things: most entries and hist records below the target are gone.
    expect(one.log.filter((e) => Number(e.split(':')[0]) < to).length).to.be.lessThan((to - first) / 4)
  })

  it("stops after a read's batches when asked", async () => {
    const { writes, result } = await scanCopy(3, 2)
    expect(writes).to.have.length(2)
    expect(result.removedRevisions).to.equal(2 * 3 * SPAN)
  })
})

describe('log/compact-scan: writeInTurn', () => {
  it('writes the batches one after another, in order, pausing pauseFactor times as long as each took', async () => {
    const events: string[] = []
    const started = performance.now()
    await writeInTurn(
      [1, 2, 3],
      async (n) => {
        events.push(`start ${n}`)
        await new Promise((r) => setTimeout(r, 20))
        events.push(`end ${n}`)
      },
      2,
    )
    const elapsed = performance.now() - started
    expect(events).to.deep.equal(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3'])
    // Three writes of ~20 ms, each followed by a pause of twice as long: ~180 ms, against ~60 ms without
    // the pauses. Node's timers may fire a millisecond early by performance.now(), so the bound has slack.
    expect(elapsed).to.be.at.least(150)
  })

  it('fails with the first write that fails, and writes nothing after it', async () => {
    const written: number[] = []
    let err: unknown
    await writeInTurn(
      [1, 2, 3],
      async (n) => {
        if (n === 2) throw new Error('no space')
        written.push(n)
      },
      0,
    ).catch((e: unknown) => (err = e))
    expect((err as Error).message).to.equal('no space')
    expect(written).to.deep.equal([1])
  })
})
