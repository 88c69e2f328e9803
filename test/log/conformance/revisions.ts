/** Revisions: where they start, one per writing transaction, none for reads, gapless under load, durable. */
import { expect } from 'chai'
import { b, entryViews, historyAll, kvViews, rangeAll, useLog, type SuiteContext } from './helpers.js'

export function revisionTests(ctx: SuiteContext): void {
  describe('revisions', () => {
    const h = useLog(ctx)

    it('an empty store is at revision 1 and the first write gets 2', async () => {
      expect(h.log.revision).to.equal(1)
      expect((await h.log.status()).revision).to.equal(1)
      const empty = await rangeAll(h.log)
      expect(empty.kvs).to.deep.equal([])
      expect(empty.count).to.equal(0)
      expect(empty.revision).to.equal(1)
      const put = await h.log.put('a', '1')
      expect(put.revision).to.equal(2)
      expect(put.wrote).to.equal(true)
      expect(h.log.revision).to.equal(2)
    })

    it('gives a writing txn exactly one revision, shared by all its writes in op order', async () => {
      await h.log.put('c', 'old')
      const before = h.log.revision
      const r = await h.log.txn({
        success: [
          { type: 'put', key: 'b', value: '1' },
          { type: 'put', key: 'a', value: '2' },
          { type: 'delete', key: 'c' },
          { type: 'put', key: 'd', value: '3' },
        ],
      })
      expect(r.succeeded).to.equal(true)
      expect(r.wrote).to.equal(true)
      expect(r.revision).to.equal(before + 1)
      expect(h.log.revision).to.equal(before + 1)
      const hist = await h.log.history('a', { rangeEnd: 'e', fromRevision: r.revision, toRevision: r.revision })
      expect(hist.entries).to.have.length(1)
      const entry = hist.entries[0]!
      expect(entry.revision).to.equal(r.revision)
      expect(entry.events.map((e) => [e.type, e.kv.key.toString(), e.kv.modRevision])).to.deep.equal([
        ['PUT', 'b', r.revision],
        ['PUT', 'a', r.revision],
        ['DELETE', 'c', r.revision],
        ['PUT', 'd', r.revision],
      ])
      const all = await rangeAll(h.log)
      expect(all.kvs.map((kv) => kv.modRevision)).to.deep.equal([r.revision, r.revision, r.revision])
    })

    it('gives read-only txns, failed txns without writes and deletes of nothing no revision', async () => {
      await h.log.put('a', '1')
      const rev = h.log.revision
      const ro = await h.log.txn({ success: [{ type: 'range', key: 'a' }] })
      expect(ro.wrote).to.equal(false)
      expect(ro.revision).to.equal(rev)
      const failed = await h.log.txn({
        compare: [{ key: 'a', target: 'VALUE', result: 'EQUAL', value: 'nope' }],
        success: [{ type: 'put', key: 'a', value: '2' }],
      })
      expect(failed.succeeded).to.equal(false)
      expect(failed.wrote).to.equal(false)
      expect(failed.revision).to.equal(rev)
      const del = await h.log.delete('missing')
      expect(del.wrote).to.equal(false)
      expect(del.deleted).to.equal(0)
      expect(del.revision).to.equal(rev)
      const delRange = await h.log.delete('x', { rangeEnd: 'z' })
      expect(delRange.wrote).to.equal(false)
      expect(delRange.deleted).to.equal(0)
      const txnDel = await h.log.txn({ success: [{ type: 'delete', key: 'missing' }] })
      expect(txnDel.wrote).to.equal(false)
      expect(txnDel.revision).to.equal(rev)
      expect(h.log.revision).to.equal(rev)
      expect((await h.log.put('b', '1')).revision).to.equal(rev + 1)
    })

    it('stays gapless and strictly increasing under 200 concurrent puts', async () => {
      const start = h.log.revision
      const n = 200
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) => h.log.put(`k${i % 50}`, `v${i}`).then((r) => ({ i, rev: r.revision }))),
      )
      const revs = results.map((r) => r.rev).sort((x, y) => x - y)
      expect(revs).to.deep.equal(Array.from({ length: n }, (_, i) => start + 1 + i))
      expect(h.log.revision).to.equal(start + n)
      const entries = await historyAll(h.log, start + 1)
      expect(entries.map((e) => e.revision)).to.deep.equal(revs)
      for (const { i, rev } of results) {
        const kv = await h.log.get(`k${i % 50}`, { revision: rev })
        expect(kv?.value.toString(), `put #${i} at ${rev}`).to.equal(`v${i}`)
        expect(kv?.modRevision).to.equal(rev)
      }
      const all = await rangeAll(h.log)
      expect(all.count).to.equal(50)
      for (const kv of all.kvs) expect(kv.version).to.equal(4)
    })

    it('survives reopen: same revision and data, the next write continues without reuse', async () => {
      await h.log.put('a', '1')
      await h.log.txn({
        success: [
          { type: 'put', key: 'b', value: '2' },
          { type: 'put', key: b('c\u00ff'), value: '3' },
        ],
      })
      await h.log.put('a', '4')
      await h.log.delete('b')
      const rev = h.log.revision
      const state = kvViews((await rangeAll(h.log)).kvs)
      const past = kvViews((await rangeAll(h.log, 3)).kvs)
      const hist = entryViews(await historyAll(h.log, 2))

      const log = await h.reopen()
      expect(log.revision).to.equal(rev)
      expect((await log.status()).revision).to.equal(rev)
      expect(kvViews((await rangeAll(log)).kvs)).to.deep.equal(state)
      expect(kvViews((await rangeAll(log, 3)).kvs)).to.deep.equal(past)
      expect(entryViews(await historyAll(log, 2))).to.deep.equal(hist)
      const next = await log.put('d', '5')
      expect(next.revision).to.equal(rev + 1)

      const again = await h.reopen()
      expect(again.revision).to.equal(rev + 1)
      expect((await again.get('d'))?.modRevision).to.equal(rev + 1)
    })
  })
}
