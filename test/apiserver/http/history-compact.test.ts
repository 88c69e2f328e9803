/**
 * GET /v1/history and POST /v1/compact against a real `kvlog serve` process with tiny segments
 * (`--segment-max-entries 5`): ordered events with commit times, from/to/limit/prevKv, paging by
 * nextRevision without splitting a revision, then compaction: 410 COMPACTED below the floor, the floor
 * never going down, FUTURE_REVISION above the head, and the status/segment table after it.
 */
import { expect } from 'chai'
import { expectError, ok, useServer, type EventJson, type HistoryBody } from './helpers.js'

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('native HTTP API: /v1/history and /v1/compact (real process)', function () {
  this.timeout(30_000)
  const server = useServer(['--segment-max-entries', '5'])
  const api = () => server().api

  /** Revision of each step of the scripted writes below. */
  const rev: Record<string, number> = {}
  let startedAt = 0

  before(async () => {
    startedAt = Date.now()
    rev.a1 = (await api().mustPut('h/a', 'a1')).header.revision
    rev.x1 = (await api().mustPut('other/x', 'x1')).header.revision
    rev.b1 = (await api().mustPut('h/b', 'b1')).header.revision
    rev.a2 = (await api().mustPut('h/a', 'a2')).header.revision
    // One revision with three events, in op order.
    rev.multi = (
      await api().mustTxn({
        success: [
          { type: 'put', key: 'h/c', value: 'c1' },
          { type: 'put', key: 'h/a', value: 'a3' },
          { type: 'delete', key: 'h/b' },
        ],
      })
    ).header.revision
    rev.x2 = (await api().mustPut('other/x', 'x2')).header.revision
    rev.aDel = ok(await api().delete({ key: 'h/a' })).header.revision
    rev.a4 = (await api().mustPut('h/a', 'a4')).header.revision
    for (let i = 0; i < 6; i++) await api().mustPut(`h/d${i}`, `d${i}`)
    rev.last = await api().revision()
  })

  const summary = (events: EventJson[]) => events.map((e) => [e.revision, e.type, e.kv.key, e.kv.value])

  it('returns the history of one key in revision order with ISO 8601 commit times', async () => {
    const h = ok(await api().history({ key: 'h/a' }))
    expect(h.header).to.deep.equal({ revision: rev.last, compactRevision: 0 })
    expect(h.more).to.equal(false)
    expect(h.nextRevision).to.equal(rev.last + 1)
    expect(summary(h.events)).to.deep.equal([
      [rev.a1, 'PUT', 'h/a', 'a1'],
      [rev.a2, 'PUT', 'h/a', 'a2'],
      [rev.multi, 'PUT', 'h/a', 'a3'],
      [rev.aDel, 'DELETE', 'h/a', ''],
      [rev.a4, 'PUT', 'h/a', 'a4'],
    ])
    let previous = 0
    for (const e of h.events) {
      expect(e.time).to.match(ISO_8601)
      const t = Date.parse(e.time)
      expect(new Date(t).toISOString()).to.equal(e.time)
      expect(t).to.be.at.least(previous)
      expect(t).to.be.within(startedAt - 5_000, Date.now() + 5_000)
      previous = t
      expect(e).to.not.have.property('prevKv')
    }
    const del = h.events[3]
    expect(del.kv).to.include({ modRevision: rev.aDel, version: 0, createRevision: 0 })
    expect(h.events[4].kv).to.include({ createRevision: rev.a4, version: 1 })
  })

  it("returns the history of a prefix, a revision's events in op order, nothing from outside the prefix", async () => {
    const h = ok(await api().history({ key: 'h/', prefix: true }))
    const revisions = h.events.map((e) => e.revision)
    expect(revisions).to.deep.equal([...revisions].sort((x, y) => x - y))
    expect(h.events.some((e) => e.kv.key === 'other/x')).to.equal(false)
    expect(summary(h.events.filter((e) => e.revision === rev.multi))).to.deep.equal([
      [rev.multi, 'PUT', 'h/c', 'c1'],
      [rev.multi, 'PUT', 'h/a', 'a3'],
      [rev.multi, 'DELETE', 'h/b', ''],
    ])
    // Events of one revision share its commit time.
    expect(new Set(h.events.filter((e) => e.revision === rev.multi).map((e) => e.time)).size).to.equal(1)
    expect(h.events).to.have.length(14)
    const other = ok(await api().history({ key: 'other/x' }))
    expect(summary(other.events)).to.deep.equal([
      [rev.x1, 'PUT', 'other/x', 'x1'],
      [rev.x2, 'PUT', 'other/x', 'x2'],
    ])
  })

  it('limits the history to [from, to], inclusive', async () => {
    const h = ok(await api().history({ key: 'h/a', from: rev.a2, to: rev.aDel }))
    expect(summary(h.events).map((s) => s[0])).to.deep.equal([rev.a2, rev.multi, rev.aDel])
    expect(h.more).to.equal(false)
    expect(h.nextRevision).to.equal(rev.aDel + 1)
    const one = ok(await api().history({ key: 'h/', prefix: true, from: rev.multi, to: rev.multi }))
    expect(one.events).to.have.length(3)
    // Nothing new yet: polling from the next revision answers an empty page.
    const none = ok(await api().history({ key: 'h/', prefix: true, from: rev.last + 1 }))
    expect(none.events).to.deep.equal([])
    expect(none.more).to.equal(false)
    expectError(await api().history({ key: 'h/a', to: rev.last + 1 }), 400, 'FUTURE_REVISION')
  })

  it('includes prevKv when asked: the key as it was before each event', async () => {
    const h = ok(await api().history({ key: 'h/', prefix: true, prevKv: true, to: rev.a4 }))
    const byKeyRev = new Map(h.events.map((e) => [`${e.kv.key}@${e.revision}`, e]))
    expect(byKeyRev.get(`h/a@${rev.a1}`)).to.not.have.property('prevKv')
    expect(byKeyRev.get(`h/a@${rev.a2}`)!.prevKv).to.deep.equal({
      key: 'h/a',
      value: 'a1',
      createRevision: rev.a1,
      modRevision: rev.a1,
      version: 1,
    })
    expect(byKeyRev.get(`h/b@${rev.multi}`)!.prevKv).to.include({ value: 'b1', modRevision: rev.b1 })
    expect(byKeyRev.get(`h/a@${rev.aDel}`)!.prevKv).to.include({ value: 'a3', modRevision: rev.multi, version: 3 })
    expect(byKeyRev.get(`h/a@${rev.a4}`)).to.not.have.property('prevKv')
    expect(byKeyRev.get(`h/c@${rev.multi}`)).to.not.have.property('prevKv')
  })

  it('pages with limit and nextRevision: never splits a revision, covers everything exactly once', async () => {
    const all = ok(await api().history({ key: 'h/', prefix: true, prevKv: true }))
    for (const limit of [1, 2, 3, 5]) {
      const pages: HistoryBody[] = []
      let from: number | undefined
      while (true) {
        const p = ok(await api().history({ key: 'h/', prefix: true, prevKv: true, limit, from }))
        pages.push(p)
        expect(pages.length, 'too many pages').to.be.at.most(20)
        if (!p.more) break
        expect(p.events.length, `limit ${limit}: a page with more must hold at least limit events`).to.be.at.least(limit)
        from = p.nextRevision
      }
      const union = pages.flatMap((p) => p.events)
      expect(union, `limit ${limit}`).to.deep.equal(all.events)
      // No revision appears on two pages, and every page but the last ends where the next begins.
      const owner = new Map<number, number>()
      pages.forEach((p, i) => {
        for (const e of p.events) {
          expect(owner.get(e.revision) ?? i, `limit ${limit}: revision ${e.revision} split across pages`).to.equal(i)
          owner.set(e.revision, i)
        }
        if (i < pages.length - 1) expect(p.nextRevision).to.equal(p.events[p.events.length - 1].revision + 1)
      })
    }
    // limit 2 stops after the three-event revision in one piece.
    const atMulti = ok(await api().history({ key: 'h/', prefix: true, from: rev.multi, limit: 2 }))
    expect(atMulti.events.map((e) => e.revision)).to.deep.equal([rev.multi, rev.multi, rev.multi])
    expect(atMulti.more).to.equal(true)
    expect(atMulti.nextRevision).to.equal(rev.multi + 1)
  })

  describe('compaction', () => {
    it('shows an empty floor and several segments before compacting; compacting at 0 is COMPACTED', async () => {
      const s = ok(await api().status())
      expect(s.compactRevision).to.equal(0)
      expect(s.revision).to.equal(rev.last)
      expect(s.segments.length).to.be.at.least(3)
      expect(s.segments[0].firstRevision).to.equal(2)
      expect(s.segments[s.segments.length - 1].lastRevision).to.equal(rev.last)
      expect(s.segments.reduce((n, seg) => n + seg.entries, 0)).to.equal(rev.last - 1)
      for (let i = 1; i < s.segments.length; i++) expect(s.segments[i].firstRevision).to.equal(s.segments[i - 1].lastRevision + 1)
      expectError(await api().compact(0), 410, 'COMPACTED')
    })

    it('compacts: history and reads below the floor are 410 COMPACTED with details.compactRevision', async () => {
      const floor = rev.aDel
      const c = ok(await api().compact(floor))
      expect(c.compactRevision).to.equal(floor)
      expect(c.header.revision).to.equal(rev.last)
      expect(c.removedRevisions).to.equal(floor - 2)

      for (const reply of [
        await api().history({ key: 'h/a', from: floor - 1 }),
        await api().history({ key: 'h/', prefix: true, from: 1 }),
        await api().range({ key: 'h/a', revision: floor - 1 }),
        await api().range({ key: 'h/', prefix: true, revision: 2 }),
        await api().txn({ success: [{ type: 'range', key: 'h/a', revision: floor - 1 }] }),
      ]) {
        const e = expectError(reply, 410, 'COMPACTED')
        expect(e.details?.compactRevision).to.equal(floor)
        expect(e.details?.currentRevision).to.equal(rev.last)
      }

      // At the floor everything still reads: the state at the floor survives.
      const atFloor = ok(await api().range({ key: 'h/', prefix: true, revision: floor }))
      expect(atFloor.kvs.map((kv) => [kv.key, kv.value])).to.deep.equal([['h/c', 'c1']])
      const h = ok(await api().history({ key: 'h/a' }))
      expect(h.header.compactRevision).to.equal(floor)
      expect(h.events.map((e) => e.revision)).to.deep.equal([rev.aDel, rev.a4])
      expect(ok(await api().history({ key: 'h/a', from: floor })).events).to.have.length(2)
    })

    it('never lowers the floor: compacting at or below it is 410 COMPACTED; above the head is 400 FUTURE_REVISION', async () => {
      const floor = rev.aDel
      for (const r of [floor, floor - 1, 2]) {
        const e = expectError(await api().compact(r), 410, 'COMPACTED')
        expect(e.details?.compactRevision).to.equal(floor)
      }
      const future = expectError(await api().compact(rev.last + 1), 400, 'FUTURE_REVISION')
      expect(future.details?.currentRevision).to.equal(rev.last)
      expect(ok(await api().status()).compactRevision).to.equal(floor)
    })

    it('shows the compact revision and the trimmed segment table in status', async () => {
      const floor = rev.aDel
      const s = ok(await api().status())
      expect(s.compactRevision).to.equal(floor)
      expect(s.header.revision).to.equal(rev.last)
      expect(s.segments.length).to.be.at.least(1)
      expect(s.segments[0].firstRevision).to.equal(floor)
      for (const seg of s.segments) expect(seg.lastRevision).to.be.at.least(floor)
      expect(s.segments.reduce((n, seg) => n + seg.entries, 0)).to.equal(rev.last - floor + 1)
      expect(s.dbSize).to.be.greaterThan(0)
    })

    it('compacts up to the head; the head stays readable and writes go on', async () => {
      const c = ok(await api().compact(rev.last))
      expect(c.compactRevision).to.equal(rev.last)
      expectError(await api().range({ key: 'h/a', revision: rev.last - 1 }), 410, 'COMPACTED')
      expect(ok(await api().range({ key: 'h/a', revision: rev.last })).kvs[0].value).to.equal('a4')
      const s = ok(await api().status())
      expect(s.segments.reduce((n, seg) => n + seg.entries, 0)).to.equal(1)
      const next = (await api().mustPut('h/a', 'a5')).header.revision
      expect(next).to.equal(rev.last + 1)
      const h = ok(await api().history({ key: 'h/a' }))
      expect(h.events.map((e) => [e.revision, e.kv.value])).to.deep.equal([[rev.last + 1, 'a5']])
    })
  })
})
