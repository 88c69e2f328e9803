/**
 * Concurrency: the single writer evaluates each txn's compares against everything committed or queued before
 * it (group commit), reads are snapshots of one revision, and compaction running between writes leaves every
 * read at or above its revision intact.
 */
import { expect } from 'chai'
import type { Log } from '../../../log/backend.js'
import { kvViews, rangeAll, useLog, type KvView, type SuiteContext } from './helpers.js'

/** Compare-and-swap increment of a decimal counter, retried until it wins. Returns the attempts it took. */
async function increment(log: Log, key: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const kv = await log.get(key)
    const next = String(Number(kv?.value.toString() ?? '0') + 1)
    const r = await log.txn({
      compare: [{ key, target: 'MOD', result: 'EQUAL', value: kv?.modRevision ?? 0 }],
      success: [{ type: 'put', key, value: next }],
    })
    if (r.succeeded) return attempt
    if (attempt > 500) throw new Error('increment did not win in 500 attempts')
  }
}

export function concurrencyTests(ctx: SuiteContext): void {
  describe('concurrency', () => {
    const h = useLog(ctx)

    it('lets exactly one of many concurrent creates (MOD == 0) win', async () => {
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          h.log.txn({
            compare: [{ key: 'lock', target: 'MOD', result: 'EQUAL', value: 0 }],
            success: [{ type: 'put', key: 'lock', value: `owner-${i}` }],
            failure: [{ type: 'range', key: 'lock' }],
          }),
        ),
      )
      const winners = results.filter((r) => r.succeeded)
      expect(winners).to.have.length(1)
      const kv = (await h.log.get('lock'))!
      expect(kv.version).to.equal(1)
      expect(kv.modRevision).to.equal(winners[0]!.revision)
      expect(h.log.revision).to.equal(2)
      for (const r of results.filter((x) => !x.succeeded)) {
        expect(r.wrote).to.equal(false)
        const seen = r.results[0]
        expect(seen?.type === 'range' ? seen.kvs.map((x) => x.value.toString()) : undefined).to.deep.equal([kv.value.toString()])
      }
    })

    it('loses no update under concurrent compare-and-swap increments', async () => {
      const workers = 8
      const each = 10
      await Promise.all(
        Array.from({ length: workers }, async () => {
          for (let i = 0; i < each; i++) await increment(h.log, 'counter')
        }),
      )
      const kv = (await h.log.get('counter'))!
      expect(kv.value.toString()).to.equal(String(workers * each))
      expect(kv.version).to.equal(workers * each)
      expect(h.log.revision).to.equal(1 + workers * each)
    })

    it('serves latest reads as snapshots of the revision they report, while writes run', async () => {
      const reads: Array<{ revision: number; kvs: KvView[] }> = []
      const writes = Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          i % 5 === 4
            ? h.log.delete(`s${i % 7}`)
            : h.log.txn({
                success: [
                  { type: 'put', key: `s${i % 7}`, value: `${i}` },
                  { type: 'put', key: `t${i % 3}`, value: `${i}` },
                ],
              }),
        ),
      )
      for (let i = 0; i < 30; i++) {
        const r = await rangeAll(h.log)
        reads.push({ revision: r.revision, kvs: kvViews(r.kvs) })
        for (const kv of r.kvs) expect(kv.modRevision, 'no kv newer than the read revision').to.be.at.most(r.revision)
      }
      await writes
      for (const read of reads) {
        expect(kvViews((await rangeAll(h.log, read.revision)).kvs), `re-read at ${read.revision}`).to.deep.equal(read.kvs)
      }
    })

    it('keeps reads at and above the compact revision intact while compaction runs between writes', async () => {
      for (let i = 0; i < 40; i++) await h.log.put(`c${i % 6}`, `${i}`)
      await h.log.delete('c0')
      const target = h.log.revision
      const atTarget = kvViews((await rangeAll(h.log, target)).kvs)
      const byKey = new Map(atTarget.map((kv) => [kv.key, kv]))
      const writes = Promise.all(Array.from({ length: 40 }, (_, i) => h.log.put(`c${i % 6}`, `late-${i}`)))
      const compaction = h.log.compact(target)
      const readsDuring: Array<Promise<void>> = []
      for (let i = 0; i < 10; i++) {
        readsDuring.push(
          rangeAll(h.log, target).then((r) => {
            expect(kvViews(r.kvs), 'range at the target during compaction').to.deep.equal(atTarget)
          }),
        )
        readsDuring.push(
          h.log.get('c3', { revision: target }).then((kv) => {
            expect(kv === undefined ? undefined : kvViews([kv])[0]).to.deep.equal(byKey.get('c3'))
          }),
        )
      }
      const [res] = await Promise.all([compaction, writes, ...readsDuring])
      expect(res.compactRevision).to.equal(target)
      expect(kvViews((await rangeAll(h.log, target)).kvs)).to.deep.equal(atTarget)
      const latest = await rangeAll(h.log)
      expect(latest.revision).to.equal(target + 40)
      for (const kv of latest.kvs) expect(kv.value.toString()).to.match(/^late-/)
      const c1 = (await h.log.get('c1'))!
      expect(c1.version, 'versions continue across compaction').to.equal(byKey.get('c1')!.version + 7)
    })
  })
}
