/** history: events per key or range between revisions, prevKv, timestamps, limit at revision boundaries, paging. */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import type { Log } from '../../../log/backend.js'
import type { HistoryOptions, LogEntry } from '../../../log/types.js'
import { entryViews, eventView, historyAll, kvView, useLog, type SuiteContext } from './helpers.js'

/** Writes a small, known history under h/ plus noise outside it. Returns the revision before the first write. */
async function writeHistory(log: Log): Promise<number> {
  const start = log.revision
  await log.put('h/a', 'a1') // +1
  await log.put('other', 'x') // +2
  await log.put('h/a', 'a2') // +3
  await log.txn({
    success: [
      { type: 'put', key: 'h/b', value: 'b1' },
      { type: 'put', key: 'h/c', value: 'c1' },
      { type: 'put', key: 'other', value: 'y' },
    ],
  }) // +4
  await log.delete('h/a') // +5
  await log.delete('h/', { rangeEnd: prefixEnd('h/') }) // +6: h/b, h/c
  await log.put('h/a', 'a3') // +7
  await log.put('other', 'z') // +8
  return start
}

export function historyTests(ctx: SuiteContext): void {
  describe('history', () => {
    const h = useLog(ctx)

    it('returns the events of one key with types, kvs, prevKvs and revisions', async () => {
      const s = await writeHistory(h.log)
      const r = await h.log.history('h/a', { prevKv: true })
      expect(r.more).to.equal(false)
      expect(r.revision).to.equal(h.log.revision)
      expect(r.compactRevision).to.equal(h.log.compactRevision)
      const put1 = { key: 'h/a', value: 'a1', createRevision: s + 1, modRevision: s + 1, version: 1, lease: '0' }
      const put2 = { key: 'h/a', value: 'a2', createRevision: s + 1, modRevision: s + 3, version: 2, lease: '0' }
      const del = { key: 'h/a', value: '', createRevision: 0, modRevision: s + 5, version: 0, lease: '0' }
      const put3 = { key: 'h/a', value: 'a3', createRevision: s + 7, modRevision: s + 7, version: 1, lease: '0' }
      expect(entryViews(r.entries)).to.deep.equal([
        { revision: s + 1, events: [{ type: 'PUT', kv: put1 }] },
        { revision: s + 3, events: [{ type: 'PUT', kv: put2, prevKv: put1 }] },
        { revision: s + 5, events: [{ type: 'DELETE', kv: del, prevKv: put2 }] },
        { revision: s + 7, events: [{ type: 'PUT', kv: put3 }] },
      ])
      const noPrev = await h.log.history('h/a')
      for (const e of noPrev.entries) for (const ev of e.events) expect(ev.prevKv, `prevKv not asked at ${e.revision}`).to.equal(undefined)
    })

    it('returns the events of a prefix, grouped by revision in op order, between from and to', async () => {
      const s = await writeHistory(h.log)
      const r = await h.log.history('h/', { rangeEnd: prefixEnd('h/'), fromRevision: s + 3, toRevision: s + 6 })
      expect(r.entries.map((e) => [e.revision, e.events.map((ev) => `${ev.type} ${ev.kv.key.toString()}`)])).to.deep.equal([
        [s + 3, ['PUT h/a']],
        [s + 4, ['PUT h/b', 'PUT h/c']],
        [s + 5, ['DELETE h/a']],
        [s + 6, ['DELETE h/b', 'DELETE h/c']],
      ])
      expect(r.more).to.equal(false)
      const one = await h.log.history('h/', { rangeEnd: prefixEnd('h/'), fromRevision: s + 4, toRevision: s + 4 })
      expect(one.entries.map((e) => e.revision)).to.deep.equal([s + 4])
      const all = await historyAll(h.log, 1)
      expect(all.map((e) => e.revision)).to.deep.equal(Array.from({ length: 8 }, (_, i) => s + 1 + i))
      expect(all[3]!.events.map((e) => e.kv.key.toString())).to.deep.equal(['h/b', 'h/c', 'other'])
      const otherAt4 = all[3]!.events[2]!
      expect(kvView(otherAt4.prevKv!).value).to.equal('x')
      expect(eventView(otherAt4).kv).to.include({ value: 'y', version: 2 })
    })

    it('stamps entries with commit times that never decrease', async () => {
      const t0 = Date.now()
      await writeHistory(h.log)
      for (let i = 0; i < 10; i++) await h.log.put(`t${i % 3}`, `${i}`)
      const t1 = Date.now()
      const all = await historyAll(h.log, 1)
      expect(all.length).to.equal(18)
      let last = 0
      for (const e of all) {
        expect(e.timestamp, `timestamp of ${e.revision}`).to.be.within(t0 - 1000, t1 + 1000)
        expect(e.timestamp, `timestamp of ${e.revision} is not before the previous one`).to.be.at.least(last)
        last = e.timestamp
      }
    })

    it('with a limit, stops at a revision boundary and pages with more / nextRevision', async () => {
      const s = await writeHistory(h.log)
      await h.log.txn({ success: ['p1', 'p2', 'p3', 'p4'].map((k) => ({ type: 'put' as const, key: `h/${k}`, value: 'v' })) }) // +9
      await h.log.put('h/z', 'last') // +10
      const opts: HistoryOptions = { rangeEnd: prefixEnd('h/'), prevKv: true }
      const full = await h.log.history('h/', opts)
      expect(full.more).to.equal(false)
      const fullByRev = new Map(full.entries.map((e) => [e.revision, e]))
      for (const limit of [1, 2, 3, 5]) {
        const pages: LogEntry[] = []
        let from = s + 1
        for (let i = 0; i < 50; i++) {
          const page = await h.log.history('h/', { ...opts, fromRevision: from, limit })
          const events = page.entries.reduce((n, e) => n + e.events.length, 0)
          for (const e of page.entries) {
            expect(e.revision).to.be.at.least(from)
            expect(e.events.length, `revision ${e.revision} is never split (limit ${limit})`).to.equal(
              fullByRev.get(e.revision)?.events.length,
            )
          }
          if (page.more) {
            expect(events, `a page with more holds at least the limit (${limit})`).to.be.at.least(limit)
            expect(page.nextRevision).to.be.greaterThan(page.entries[page.entries.length - 1]!.revision)
          }
          if (page.entries.length > 0) expect(page.nextRevision).to.be.greaterThan(page.entries[page.entries.length - 1]!.revision)
          pages.push(...page.entries)
          if (!page.more) break
          from = page.nextRevision
        }
        expect(entryViews(pages), `pages with limit ${limit}`).to.deep.equal(entryViews(full.entries))
      }
      const first = await h.log.history('h/', { ...opts, limit: 1, fromRevision: s + 9 })
      expect(first.entries.map((e) => [e.revision, e.events.length])).to.deep.equal([[s + 9, 4]])
    })

    it('returns nothing for a key that never existed, and an empty page at the head', async () => {
      await writeHistory(h.log)
      const none = await h.log.history('never')
      expect(none.entries).to.deep.equal([])
      expect(none.more).to.equal(false)
      const head = await h.log.history('h/', { rangeEnd: prefixEnd('h/'), fromRevision: h.log.revision })
      expect(head.entries.map((e) => e.revision)).to.deep.equal([])
    })

    it("records a put's, a delete's and a transaction's author with its entry (not in the op)", async () => {
      const s = h.log.revision
      await h.log.put('w/a', '1', { author: { door: 'etcd', agent: 'grpc-go/1.33.3' } })
      await h.log.delete('w/a', { author: { door: 'http', user: 'alice' } })
      await h.log.txn({ success: [{ type: 'put', key: 'w/a', value: '2' }], author: { door: 'resources', agent: 'kubectl' } })
      await h.log.put('w/a', '3')
      const r = await h.log.history('w/a', { fromRevision: s + 1 })
      expect(r.entries.map((e) => e.author)).to.deep.equal([
        { door: 'etcd', agent: 'grpc-go/1.33.3' },
        { door: 'http', user: 'alice' },
        { door: 'resources', agent: 'kubectl' },
        undefined,
      ])
    })
  })
}
