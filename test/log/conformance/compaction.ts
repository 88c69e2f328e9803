/**
 * compact(R): reads below R fail COMPACTED (details.compactRevision = R); reads at and above R are unchanged;
 * the compact revision never goes down, never passes the current revision, and survives reopen.
 */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import type { Log } from '../../../log/backend.js'
import {
  entryViews,
  expectCode,
  historyAll,
  kvViews,
  rangeAll,
  useLog,
  ZERO,
  type EntryView,
  type KvView,
  type SuiteContext,
} from './helpers.js'

interface Recorded {
  states: Map<number, KvView[]>
  /** The revision compacted to: a txn that puts `x` and deletes `y` at once. */
  target: number
  history: EntryView[]
}

/** Writes versions, deletes and re-creates around a target revision, recording the state at every revision. */
async function record(log: Log): Promise<Recorded> {
  const states = new Map<number, KvView[]>()
  const snap = async (): Promise<void> => {
    states.set(log.revision, kvViews((await rangeAll(log)).kvs))
  }
  await snap()
  const early: Array<() => Promise<unknown>> = [
    () => log.put('a', 'a1'),
    () => log.put('b', 'b1'),
    () => log.put('a', 'a2'),
    () => log.put('gone', 'g1'),
    () => log.put('y', 'y1'),
    () => log.delete('gone'),
    () => log.put('c/1', 'c1'),
    () => log.put('a', 'a3'),
  ]
  for (const op of early) {
    await op()
    await snap()
  }
  await log.txn({
    success: [
      { type: 'put', key: 'x', value: 'x1' },
      { type: 'delete', key: 'y' },
    ],
  })
  const target = log.revision
  await snap()
  const late: Array<() => Promise<unknown>> = [
    () => log.put('a', 'a4'),
    () => log.delete('b'),
    () => log.put('c/2', 'c2'),
    () => log.put('y', 'y2'),
    () => log.delete('c/', { rangeEnd: prefixEnd('c/') }),
  ]
  for (const op of late) {
    await op()
    await snap()
  }
  return { states, target, history: entryViews(await historyAll(log, 1)) }
}

/** Everything a reader at or above `from` can see is as recorded; everything below fails COMPACTED. */
async function verify(log: Log, rec: Recorded, from: number): Promise<void> {
  expect(log.compactRevision).to.equal(from)
  expect((await log.status()).compactRevision).to.equal(from)
  for (const [rev, want] of rec.states) {
    if (rev < from) {
      const e1 = await expectCode(() => log.range(ZERO, { rangeEnd: ZERO, revision: rev }), 'COMPACTED', `range at ${rev}`)
      expect(e1.details.compactRevision).to.equal(from)
      const e2 = await expectCode(() => log.get('a', { revision: rev }), 'COMPACTED', `get at ${rev}`)
      expect(e2.details.compactRevision).to.equal(from)
      const e3 = await expectCode(() => log.history('a', { fromRevision: rev }), 'COMPACTED', `history from ${rev}`)
      expect(e3.details.compactRevision).to.equal(from)
      continue
    }
    const r = await rangeAll(log, rev)
    expect(kvViews(r.kvs), `state at ${rev}`).to.deep.equal(want)
    expect(r.count).to.equal(want.length)
    for (const kv of want) {
      const got = await log.get(kv.key, { revision: rev })
      expect(got === undefined ? undefined : kvViews([got])[0], `get ${kv.key} at ${rev}`).to.deep.equal(kv)
    }
  }
  // history from the compact revision on: events equal (prevKvs of the entry at R may point below R);
  // from R + 1 on, prevKvs included.
  const fromR = entryViews(await historyAll(log, from, undefined, false), false)
  expect(fromR, `history from ${from}`).to.deep.equal(
    rec.history
      .filter((e) => e.revision >= from)
      .map((e) => ({
        revision: e.revision,
        events: e.events.map((ev) => ({ type: ev.type, kv: ev.kv })),
      })),
  )
  const after = entryViews(await historyAll(log, from + 1))
  expect(after, `history from ${from + 1} with prevKv`).to.deep.equal(rec.history.filter((e) => e.revision > from))
  const byDefault = await log.history('a')
  expect(byDefault.entries[0]?.revision ?? Infinity).to.be.at.least(from)
}

export function compactionTests(ctx: SuiteContext): void {
  describe('compaction', () => {
    const h = useLog(ctx)

    it('fails reads below R with COMPACTED and keeps every read at or above R unchanged', async () => {
      const rec = await record(h.log)
      const res = await h.log.compact(rec.target)
      expect(res.compactRevision).to.equal(rec.target)
      await verify(h.log, rec, rec.target)
      expect(await h.log.get('gone')).to.equal(undefined)
      expect(await h.log.get('gone', { revision: rec.target })).to.equal(undefined)
      expect(await h.log.get('y', { revision: rec.target })).to.equal(undefined)
      const a = (await h.log.get('a', { revision: rec.target }))!
      expect([a.version, a.createRevision]).to.deep.equal([3, 2])
      const next = await h.log.put('a', 'a5')
      expect(next.revision).to.equal(rec.states.size + 1)
      expect((await h.log.get('a'))!.version).to.equal(5)
    })

    it('compacts in steps and never lowers the compact revision', async () => {
      const rec = await record(h.log)
      await h.log.compact(4)
      await verify(h.log, rec, 4)
      await h.log.compact(rec.target)
      await verify(h.log, rec, rec.target)
      let lowered: number | undefined
      try {
        lowered = (await h.log.compact(4)).compactRevision
      } catch (err) {
        expect((err as { code?: string }).code, 'compacting lower fails with a code').to.be.a('string')
      }
      if (lowered !== undefined) expect(lowered).to.equal(rec.target)
      expect(h.log.compactRevision).to.equal(rec.target)
      await verify(h.log, rec, rec.target)
    })

    it('compacts up to the current revision, and rejects a future one with FUTURE_REVISION', async () => {
      const rec = await record(h.log)
      const current = h.log.revision
      await expectCode(() => h.log.compact(current + 1), 'FUTURE_REVISION', 'compact beyond current')
      expect(h.log.compactRevision).to.be.below(current)
      await h.log.compact(current)
      expect(h.log.compactRevision).to.equal(current)
      expect(kvViews((await rangeAll(h.log)).kvs)).to.deep.equal(rec.states.get(current))
      expect(kvViews((await rangeAll(h.log, current)).kvs)).to.deep.equal(rec.states.get(current))
      await expectCode(() => rangeAll(h.log, current - 1), 'COMPACTED', 'range below')
      const w = await h.log.put('new', 'v')
      expect(w.revision).to.equal(current + 1)
      expect((await h.log.history('new')).entries.map((e) => e.revision)).to.deep.equal([current + 1])
    })

    it('keeps the compaction across reopen', async () => {
      const rec = await record(h.log)
      await h.log.compact(rec.target)
      const log = await h.reopen()
      await verify(log, rec, rec.target)
      expect(log.revision).to.equal(rec.states.size)
    })
  })
}
