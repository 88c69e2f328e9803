/**
 * log/level/compaction/compactor.ts + compact-batch.ts + the writer's copy, on disk: a surviving version below the floor is
 * stored once (in the kv record while it is live, else in its log entry), an entry goes once none of its
 * ops is needed, multi-op entries are rewritten without the ops they no longer need, deletes leave nothing
 * below the floor, a write that replaces a live version below the floor copies it into hist first, and
 * status().belowFloor counts exactly what is kept. The database is opened raw (between runs of the log)
 * to look at the log and hist tables.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LiveRevisions, planBatch, scanRows, SingleOpEntries } from '../../../../log/level/compaction/compact-batch.js'
import { compactionBatchSize } from '../../../../log/level/compaction/compactor.js'
import { prefixEnd } from '../../../../log/keys.js'
import { histKey, LOG_START, logKey, logKeyRevision } from '../../../../log/level/keyspace.js'
import { openLevelLog, type LevelLog } from '../../../../log/level/level-log.js'
import type { Db } from '../../../../log/level/latest-view.js'
import { encodeMaterialized, HIST_IN_LOG, HIST_MATERIALIZED, type LoggedEntry } from '../../../../log/level/records.js'
import { writeBatch } from '../../../../log/level/segments.js'
import type { KeyValue } from '../../../../log/types.js'
import { belowFloorOf, readRawTables as readRaw, withRawDb as withRaw, type RawTables as Raw } from '../raw-db.js'

const ZERO = Buffer.from([0])

const keysOf = (e: LoggedEntry | undefined): string[] | undefined => e?.ops.map((op) => op.key.toString())
const below = (raw: Raw, floor: number): number[] => [...raw.log.keys()].filter((rev) => rev < floor)
const view = (kv: KeyValue | undefined) =>
  kv && {
    key: kv.key.toString(),
    value: kv.value.toString(),
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
  }

describe('log/compactor: each surviving version is stored once', function () {
  this.timeout(60_000)
  let dir = ''
  let log: LevelLog
  const open = (batch = 5, duty = 50, perRead?: number) =>
    openLevelLog({
      dir,
      fsync: 'never',
      compactionMethod: 'scan',
      compactionBatchRevisions: batch,
      compactionMaxDutyPercent: duty,
      segmentMaxEntries: 40,
      ...(perRead === undefined ? {} : { compactionBatchesPerRead: perRead }),
    })

  /** Closes the log, runs fn on the raw database, reopens the log. */
  async function raw<T>(fn: (db: Db) => Promise<T>, batch?: number): Promise<T> {
    await log.close()
    try {
      return await withRaw(dir, fn)
    } finally {
      log = await open(batch)
    }
  }

  /** status().belowFloor equals the entries below the floor actually on disk. */
  async function expectBelowFloorCounted(): Promise<Raw> {
    const floor = log.compactRevision
    const counted = (await log.status()).belowFloor
    const r = await raw(readRaw)
    expect(counted, 'status().belowFloor').to.deep.equal(belowFloorOf(r, floor))
    return r
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-compactor-'))
    log = await open()
  })
  afterEach(async () => {
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** The first byte of the hist record of key@rev (IN_LOG, TOMBSTONE, MATERIALIZED), undefined if none. */
  const histKind = (key: string, rev: number) => raw(async (db) => (await db.get(histKey(Buffer.from(key), rev)))?.[0])

  it('rewrites a multi-op entry without the ops it no longer needs, and removes it once none is left', async () => {
    const txn = await log.txn({
      success: [
        { type: 'put', key: 'k1', value: 'one' },
        { type: 'put', key: 'k2', value: 'two' },
        { type: 'put', key: 'k3', value: 'three' },
      ],
    })
    const r = txn.revision
    await log.put('k1', 'one again') // k1@r is superseded below the floor
    for (let i = 0; i < 12; i++) await log.put(`other/${i % 3}`, `v${i}`)
    const floor = log.revision - 2
    await log.put('k3', 'three again') // k3@r survives, but is no longer live when compaction runs
    await log.compact(floor)

    const k2 = { key: 'k2', value: 'two', createRevision: r, modRevision: r, version: 1 }
    const k3 = { key: 'k3', value: 'three', createRevision: r, modRevision: r, version: 1 }
    for (const at of [floor, floor + 1]) {
      expect(view(await log.get('k2', { revision: at })), `k2 at ${at}`).to.deep.equal(k2)
      expect(view(await log.get('k3', { revision: at })), `k3 at ${at}`).to.deep.equal(k3)
    }
    let disk = await expectBelowFloorCounted()
    expect(keysOf(disk.log.get(r)), 'entry r keeps only k3: k2 is live, its kv record holds it').to.deep.equal(['k3'])
    expect(disk.hist).to.include(`k2@${r}`).and.include(`k3@${r}`).and.not.include(`k1@${r}`)

    // k2's live version below the floor is replaced: the writer copies it into hist first.
    const w = await log.put('k2', 'two again', { prevKv: true })
    expect(view(w.prevKv), 'prevKv of the put above the floor: the kept version').to.deep.equal(k2)
    expect(await histKind('k2', r), 'hist record of k2@r').to.equal(HIST_MATERIALIZED)
    expect(view(await log.get('k2', { revision: floor })), 'k2 at the floor, after the replace').to.deep.equal(k2)
    const history = await log.history('k2', { fromRevision: w.revision, prevKv: true })
    expect(view(history.entries[0].events[0].prevKv)).to.deep.equal(k2)

    await log.put('k3', 'three, third') // k3's newest version below the next floor is not live: nothing copied
    await log.put('other/0', 'later')
    await log.compact(log.revision)
    expect(view(await log.get('k2'))).to.deep.equal({
      key: 'k2',
      value: 'two again',
      createRevision: r,
      modRevision: w.revision,
      version: 2,
    })
    disk = await expectBelowFloorCounted()
    expect(disk.log.has(r), 'entry r is gone').to.equal(false)
    expect(
      disk.hist.filter((h) => h.startsWith('k2@')),
      'the copy went with the version',
    ).to.deep.equal([`k2@${w.revision}`])
    // other/0 was written at the floor itself, so its version below is needed and not live: kept in its entry.
    expect(
      below(disk, log.compactRevision).map((rev) => keysOf(disk.log.get(rev))),
      'entries kept below the floor',
    ).to.deep.equal([['other/0']])
  })

  for (const perRead of [1, 5])
    it(`plans a batch before the one before it is written, finding an entry that batch rewrites as it leaves it (${perRead} batches per read)`, async () => {
      // One revision per batch: the batch for x's put rewrites entry r to [y, z] (two ops: not remembered as
      // single), and the next batch, planned before that one is written (in the same read, or while it is
      // written), must see entry r as that batch leaves it. As read, it would be [x, y, z], and x's
      // superseded version would be written back.
      await log.close()
      log = await open(1, 100, perRead)
      const txn = await log.txn({ success: ['x', 'y', 'z'].map((key) => ({ type: 'put' as const, key, value: `${key}1` })) })
      const r = txn.revision
      for (const key of ['x', 'y', 'z']) await log.put(key, `${key}2`)
      for (const key of ['x', 'y']) await log.put(key, `${key}3`)
      await log.put('marker', 'm')
      const floor = log.revision
      const result = await log.compact(floor)
      expect(result.removedRevisions).to.equal(floor - r)
      for (const key of ['x', 'y', 'z']) {
        expect((await log.get(key))?.value.toString(), key).to.equal(key === 'z' ? 'z2' : `${key}3`)
      }
      const disk = await expectBelowFloorCounted()
      expect(disk.log.has(r), 'entry r is gone: each of its versions was superseded').to.equal(false)
      expect(
        below(disk, floor).map((rev) => keysOf(disk.log.get(rev))),
        'entries kept below the floor',
      ).to.deep.equal([])
      expect(disk.hist.filter((h) => /^[xyz]@/.test(h)).sort(), 'hist: the live versions only').to.deep.equal([
        `x@${r + 4}`,
        `y@${r + 5}`,
        `z@${r + 3}`,
      ])
    })

  it('a delete (also a delete range) of a live version below the floor copies it into hist first', async () => {
    const a = await log.put('d/a', 'a1')
    const b = await log.put('d/b', 'b1')
    const c = await log.put('solo', 'c1')
    await log.put('tail', 't')
    const floor = log.revision
    await log.compact(floor)
    expect(below(await expectBelowFloorCounted(), floor)).to.deep.equal([])
    const before = (await log.range(ZERO, { rangeEnd: ZERO, revision: floor })).kvs.map(view)
    const del = await log.delete('d/', { rangeEnd: prefixEnd('d/'), prevKv: true })
    expect(del.prevKvs?.map(view)).to.deep.equal([
      { key: 'd/a', value: 'a1', createRevision: a.revision, modRevision: a.revision, version: 1 },
      { key: 'd/b', value: 'b1', createRevision: b.revision, modRevision: b.revision, version: 1 },
    ])
    await log.delete('solo')
    expect((await log.range(ZERO, { rangeEnd: ZERO, revision: floor })).kvs.map(view), 'the state at the floor').to.deep.equal(before)
    expect([await histKind('d/a', a.revision), await histKind('d/b', b.revision), await histKind('solo', c.revision)]).to.deep.equal([
      HIST_MATERIALIZED,
      HIST_MATERIALIZED,
      HIST_MATERIALIZED,
    ])
    expect(await histKind('tail', floor), 'an untouched live version keeps its pointer').to.equal(HIST_IN_LOG)
    const history = await log.history(ZERO, { rangeEnd: ZERO, fromRevision: del.revision, prevKv: true })
    expect(history.entries[0].events.map((e) => e.prevKv?.value.toString())).to.deep.equal(['a1', 'b1'])
  })

  it('versions replaced while the compaction job runs are read correctly at every revision after', async () => {
    await log.close()
    log = await open(1, 10)
    for (let i = 0; i < 60; i++) await log.put(`k/${i % 20}`, `a${i}`)
    const floor = log.revision
    const states = new Map<number, unknown>()
    const snap = async () => states.set(log.revision, (await log.range(ZERO, { rangeEnd: ZERO })).kvs.map(view))
    await snap()
    // The job goes batch by batch through the writer's queue. Each live version is replaced right after
    // the job's progress passed it (its op has left its entry): the writer's copy is then its only one.
    const lives = (await log.range(ZERO, { rangeEnd: ZERO })).kvs.map((kv) => ({ key: kv.key.toString(), rev: kv.modRevision }))
    const job = log.compact(floor)
    let during = 0
    for (const [i, { key, rev }] of lives.sort((a, b) => a.rev - b.rev).entries()) {
      while (((await log.status()).compaction?.progress ?? Infinity) <= rev) await new Promise((r) => setTimeout(r, 1))
      if ((await log.status()).compaction !== undefined) during++
      if (i % 7 === 3) await log.delete(key)
      else await log.put(key, `b${i}`)
      await snap()
    }
    await job
    expect(during, 'writes while the job ran').to.be.greaterThan(5)
    for (const [rev, kvs] of states) {
      expect((await log.range(ZERO, { rangeEnd: ZERO, revision: rev })).kvs.map(view), `state at ${rev}`).to.deep.equal(kvs)
    }
    await expectBelowFloorCounted()
  })

  it('versions replaced after the job read their kv records, before it reached them, are read correctly', async () => {
    // The job reads each key's kv record once (LiveRevisions) at the key's first put it scans, and acts on
    // that answer when it reaches the key's live version much later. Here every live version is replaced
    // in between, so the answer "live" is stale when acted on: the writer's copy must make that safe.
    await log.close()
    log = await open(1, 10)
    for (let i = 0; i < 60; i++) await log.put(`k/${i % 20}`, `a${i}`)
    const floor = log.revision
    const firstLive = floor - 19
    const states = new Map<number, unknown>()
    const snap = async () => states.set(log.revision, (await log.range(ZERO, { rangeEnd: ZERO })).kvs.map(view))
    await snap()
    const job = log.compact(floor)
    const progress = async () => (await log.status()).compaction?.progress ?? Infinity
    while ((await progress()) <= firstLive - 20) await new Promise((r) => setTimeout(r, 1))
    for (let i = 0; i < 20; i++) {
      if (i % 7 === 3) await log.delete(`k/${i}`)
      else await log.put(`k/${i}`, `b${i}`)
      await snap()
    }
    expect(await progress(), 'the job had not reached the live versions when they were replaced').to.be.at.most(firstLive)
    await job
    for (const [rev, kvs] of states) {
      expect((await log.range(ZERO, { rangeEnd: ZERO, revision: rev })).kvs.map(view), `state at ${rev}`).to.deep.equal(kvs)
    }
    await expectBelowFloorCounted()
  })

  it('deletes below the floor leave no entry and no hist record', async () => {
    await log.put('gone', '1')
    await log.put('gone', '2')
    await log.txn({
      success: [
        { type: 'put', key: 'gone/a', value: 'a' },
        { type: 'put', key: 'stay', value: 's' },
      ],
    })
    await log.delete('gone', { rangeEnd: prefixEnd('gone') })
    const stay = await log.put('stay', 's2')
    await log.put('again', '1')
    await log.delete('again')
    await log.put('tail', 't')
    await log.compact(log.revision)
    const disk = await expectBelowFloorCounted()
    expect(
      disk.hist.filter((h) => h.startsWith('gone') || h.startsWith('again@')),
      'no hist of deleted keys',
    ).to.deep.equal([])
    expect(below(disk, log.compactRevision), 'stay is live: its kv record holds it').to.deep.equal([])
    expect(disk.hist).to.include(`stay@${stay.revision}`)
    expect(view(await log.get('stay', { revision: log.compactRevision }))).to.deep.include({ value: 's2', modRevision: stay.revision })
    expect(await log.get('gone', { revision: log.compactRevision })).to.equal(undefined)
    expect((await log.range(ZERO, { rangeEnd: ZERO })).kvs.map((kv) => kv.key.toString())).to.deep.equal(['stay', 'tail'])
  })

  it('a second compaction finds the survivors of the first, also after a reopen (entries read, not remembered)', async () => {
    for (let i = 0; i < 30; i++) await log.put(`k/${i % 6}`, `a${i}`)
    await log.txn({
      success: [
        { type: 'put', key: 'm/1', value: 'x' },
        { type: 'put', key: 'm/2', value: 'y' },
        { type: 'put', key: 'k/0', value: 'z' },
      ],
    })
    const first = log.revision
    const early = (await log.history(ZERO, { rangeEnd: ZERO, toRevision: first - 1 })).entries
    await log.compact(first)
    let disk = await expectBelowFloorCounted() // reopens: the compactor's memory of single-op entries is gone
    // k/0 is superseded at the floor itself, so its version below stays in its entry (a read at the floor
    // needs it); the other keys' survivors are live: their kv records hold them.
    expect(below(disk, first).length, 'kept entries below the floor').to.equal(1)

    const states = new Map<number, unknown>()
    for (let i = 0; i < 10; i++) {
      await log.put(i % 2 === 0 ? 'm/1' : `k/${i % 6}`, `b${i}`)
      states.set(log.revision, (await log.range(ZERO, { rangeEnd: ZERO })).kvs.map(view))
    }
    await log.delete('k/3')
    const second = log.revision - 5
    const late = (await log.history(ZERO, { rangeEnd: ZERO, fromRevision: first })).entries
    const historyAfter = await log.history(ZERO, { rangeEnd: ZERO, fromRevision: second, prevKv: true })
    await log.compact(second)
    for (const [rev, kvs] of states) {
      if (rev >= second)
        expect((await log.range(ZERO, { rangeEnd: ZERO, revision: rev })).kvs.map(view), `state at ${rev}`).to.deep.equal(kvs)
    }
    expect((await log.history(ZERO, { rangeEnd: ZERO, fromRevision: second, prevKv: true })).entries).to.deep.equal(historyAfter.entries)
    const live = new Set((await log.range(ZERO, { rangeEnd: ZERO })).kvs.map((kv) => `${kv.key.toString()}@${kv.modRevision}`))
    disk = await expectBelowFloorCounted()
    // What survives below the floor is exactly each key's newest version below it, unless that is a delete,
    // stored once: in the kv record (live), in its log entry, or copied into hist (replaced since the floor).
    const newest = new Map<string, string>()
    for (const e of [...early, ...late].filter((x) => x.revision < second)) {
      for (const ev of e.events) newest.set(ev.kv.key.toString(), ev.type === 'PUT' ? `${ev.kv.key.toString()}@${e.revision}` : '')
    }
    const expected = [...newest.values()].filter((v) => v !== '').sort()
    const kept = below(disk, second)
      .flatMap((rev) => disk.log.get(rev)!.ops.map((op) => `${op.key.toString()}@${rev}`))
      .sort()
    const places = (v: string) => [live.has(v), kept.includes(v), disk.histKinds.get(v) === HIST_MATERIALIZED]
    for (const v of expected) expect(places(v).filter(Boolean), `${v} is stored once`).to.have.length(1)
    for (const place of [0, 1, 2])
      expect(
        expected.some((v) => places(v)[place]),
        `a survivor in place ${place}`,
      ).to.equal(true)
    expect(
      kept.filter((v) => !expected.includes(v)),
      'no other op kept',
    ).to.deep.equal([])
    expect(disk.hist.filter((h) => Number(h.split('@')[1]) < second).sort(), 'hist below the floor').to.deep.equal(expected)
  })

  it('keeps one version per key below the floor, in its entry only if written since: 20,000 revisions over 100 keys', async () => {
    await log.close()
    log = await open(250)
    const value = 'v'.repeat(64)
    for (let i = 0; i < 20_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, j) => log.put(`key/${(i + j) % 100}`, `${value}${i + j}`)))
    }
    const floor = log.revision - 50
    const before = (await log.range(ZERO, { rangeEnd: ZERO, revision: floor })).kvs.map(view)
    const result = await log.compact(floor)
    expect(result.removedRevisions).to.equal(floor - 2)
    expect((await log.range(ZERO, { rangeEnd: ZERO, revision: floor })).kvs.map(view)).to.deep.equal(before)
    const status = await log.status()
    const writtenSince = new Set(
      (await log.history(ZERO, { rangeEnd: ZERO, fromRevision: floor })).entries.flatMap((e) => e.events.map((ev) => ev.kv.key.toString())),
    )
    expect(writtenSince.size).to.be.greaterThan(0).and.lessThan(100)
    expect(status.belowFloor.entries, 'entries below the floor: one per key written at or above it').to.equal(writtenSince.size)
    expect(
      status.segments.reduce((n, s) => n + s.entries, 0),
      'the segments count the readable log only',
    ).to.equal(log.revision - floor + 1)
    const disk = await expectBelowFloorCounted()
    expect(below(disk, floor).length).to.equal(status.belowFloor.entries)
    expect(disk.hist.filter((h) => Number(h.split('@')[1]) < floor).length, 'one hist record per key below the floor').to.equal(100)
  })

  it('still reads versions that earlier compactions copied into hist (MATERIALIZED), and compacts them away', async () => {
    await log.put('old', 'o1')
    await log.put('old', 'o2')
    const kept = await log.put('legacy', 'l1')
    for (let i = 0; i < 8; i++) await log.put('busy', `b${i}`)
    const floor = log.revision
    await log.compact(floor)
    // Turn the kept entry of `legacy` into what data directories from older compactions hold: no entry, the version in hist.
    const kv = (await log.get('legacy'))!
    await raw(async (db) => {
      await writeBatch(
        db,
        [
          { type: 'del', key: logKey(kept.revision) },
          { type: 'put', key: histKey(kv.key, kept.revision), value: encodeMaterialized(kv) },
        ],
        true,
      )
    })
    expect(view(await log.get('legacy', { revision: floor }))).to.deep.equal(view(kv))
    const next = await log.put('legacy', 'l2', { prevKv: true })
    expect(view(next.prevKv)).to.deep.equal(view(kv))
    await log.put('busy', 'last')
    await log.compact(log.revision)
    expect(view(await log.get('legacy'))).to.deep.include({ value: 'l2', version: 2, createRevision: kept.revision })
    const disk = await raw(readRaw)
    expect(disk.hist.filter((h) => h.startsWith('legacy@'))).to.deep.equal([`legacy@${next.revision}`])
    expect(disk.log.has(kept.revision)).to.equal(false)
  })
})

describe('log/compact-batch', function () {
  this.timeout(30_000)
  let dir = ''
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-compact-batch-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('a batch that runs again after a crash tolerates superseded versions already removed from their entries', async () => {
    const log = await openLevelLog({ dir, fsync: 'never', compactionMethod: 'scan' })
    const t = await log.txn({
      success: [
        { type: 'put', key: 'a', value: '1' },
        { type: 'put', key: 'b', value: '1' },
      ],
    })
    const single = await log.put('c', '1')
    await log.put('x', 'filler')
    const from = log.revision + 1
    await log.put('a', '2')
    await log.put('c', '2')
    await log.delete('b')
    const to = log.revision + 1
    await log.close()

    await withRaw(dir, async (db) => {
      const rows = await db.iterator({ gte: logKey(from), lt: logKey(to) }).all()
      const known = new SingleOpEntries()
      known.apply(new Map([[single.revision, (await db.get(logKey(single.revision)))!.length]]))
      const first = await planBatch(db, scanRows(db, rows, new LiveRevisions()), known)
      const isLog = (op: { key: Buffer }) => op.key[0] === LOG_START[0]
      // Part of the batch landed: the superseded versions are gone, the scanned entries are untouched.
      await writeBatch(
        db,
        first.ops.filter((op) => !isLog(op) || logKeyRevision(op.key) < from),
        true,
      )
      const once = await readRaw(db)
      expect(once.log.has(t.revision), 'entry of a, b gone').to.equal(false)
      expect(once.log.has(single.revision), 'entry of c gone').to.equal(false)

      // Run the same batch again, as after a restart: the same result.
      const again = await planBatch(db, scanRows(db, rows, new LiveRevisions()), new SingleOpEntries())
      expect(
        again.ops.filter((op) => isLog(op) && logKeyRevision(op.key) < from),
        'no writes to entries already settled',
      ).to.deep.equal([])
      await writeBatch(db, again.ops, true)
      const twice = await readRaw(db)
      await writeBatch(db, first.ops, true)
      expect(twice).to.deep.equal(await readRaw(db))
      const scanned = [...twice.log.entries()].filter(([rev]) => rev >= from && rev < to).map(([rev, e]) => [rev, keysOf(e)])
      expect(scanned, 'the puts of a and c are live (their kv records hold them), the delete of b goes').to.deep.equal([])
      expect(twice.hist.filter((h) => /^[abc]@/.test(h)).sort()).to.deep.equal([`a@${from}`, `c@${from + 1}`])
    })
  })

  it("a job reads each key's kv record once, and finds the same live versions as reading it every batch", async () => {
    const log = await openLevelLog({ dir, fsync: 'never', compactionMethod: 'scan' })
    const from = log.revision + 1
    for (let i = 0; i < 40; i++) await log.put(`k/${i % 4}`, `v${i}`)
    await log.delete('k/3')
    await log.put('solo', 's')
    const to = log.revision + 1
    await log.close()

    await withRaw(dir, async (raw) => {
      let kvReads = 0
      const db = Object.create(raw) as Db
      db.getMany = (keys: Buffer[]) => {
        kvReads += keys.length
        return raw.getMany(keys)
      }
      const rows = await raw.iterator({ gte: logKey(from), lt: logKey(to) }).all()
      const spans = Array.from({ length: Math.ceil(rows.length / 5) }, (_, i) => rows.slice(5 * i, 5 * i + 5))
      const liveOf = async (known: () => LiveRevisions) => {
        const found: string[] = []
        for (const span of spans) found.push(...(await scanRows(db, span, known()).live).map((l) => `${l.key.toString()}@${l.rev}`))
        return found.sort()
      }
      const job = new LiveRevisions()
      const once = await liveOf(() => job)
      expect(kvReads, 'one read per key: k/0..k/3 and solo').to.equal(5)
      kvReads = 0
      const everyBatch = await liveOf(() => new LiveRevisions())
      expect(kvReads, 'a read per key per span: 4 keys in each of the 8 spans of puts, solo in the last').to.equal(8 * 4 + 1)
      expect(once).to.deep.equal(everyBatch)
      expect(once).to.deep.equal([`k/0@${to - 6}`, `k/1@${to - 5}`, `k/2@${to - 4}`, `solo@${to - 1}`])
    })
  })
})

describe("log/compactor: batch size follows the writers' groups", function () {
  this.timeout(30_000)

  it('is 10 revisions per transaction of the recent groups, between the minimum and the maximum', () => {
    expect(compactionBatchSize(0, 50, 250)).to.equal(50)
    expect(compactionBatchSize(2.2, 50, 250), 'light load: lone puts, ~2 per group').to.equal(50)
    expect(compactionBatchSize(12.04, 50, 250)).to.equal(120)
    expect(compactionBatchSize(40, 50, 250), 'heavy load').to.equal(250)
    expect(compactionBatchSize(3, 50, 7), 'a maximum below the minimum wins').to.equal(7)
  })

  it('the writer keeps the recent group size: ~1 for writes one at a time, more for writes that arrive together', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-compactor-size-'))
    const log = await openLevelLog({ dir, fsync: 'never' })
    try {
      expect(log.writerStats.recentGroupTxns).to.equal(0)
      for (let i = 0; i < 100; i++) await log.put(`one-${i}`, 'v')
      expect(log.writerStats.recentGroupTxns).to.be.within(0.99, 1)
      // 2,000 at once: the first group takes what is queued, the next ones what queued meanwhile.
      await Promise.all(Array.from({ length: 2000 }, (_, i) => log.put(`many-${i}`, 'v')))
      expect(log.writerStats.recentGroupTxns).to.be.greaterThan(10)
    } finally {
      await log.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
