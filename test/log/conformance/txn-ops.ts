/**
 * txn operations: branches, nested txns, reads that see the txn's own writes, and the request checks
 * DUPLICATE_KEY, TOO_MANY_OPS and REQUEST_TOO_LARGE (which write nothing and leave the store usable).
 */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import type { Op, RangeOpResult, TxnOpResult, TxnRequest } from '../../../log/types.js'
import { expectCode, kvView, kvViews, rangeAll, useLog, type SuiteContext } from './helpers.js'

export function txnOpTests(ctx: SuiteContext): void {
  describe('txn operations', () => {
    const h = useLog(ctx)
    /** Asserts the request fails with `code`, consumed no revision, changed nothing, and the store still writes. */
    const rejects = async (
      request: TxnRequest,
      code: 'DUPLICATE_KEY' | 'TOO_MANY_OPS' | 'REQUEST_TOO_LARGE',
      what: string,
    ): Promise<void> => {
      const rev = h.log.revision
      const before = kvViews((await rangeAll(h.log)).kvs)
      await expectCode(() => h.log.txn(request), code, what)
      expect(h.log.revision, `${what}: revision`).to.equal(rev)
      expect(kvViews((await rangeAll(h.log)).kvs), `${what}: state`).to.deep.equal(before)
    }
    const afterwardsWrites = async (): Promise<void> => {
      const rev = h.log.revision
      expect((await h.log.put('after', 'ok')).revision).to.equal(rev + 1)
    }

    it('runs success when the compares hold and failure otherwise (kube-style create and update)', async () => {
      const create = (value: string): TxnRequest => ({
        compare: [{ key: 'obj', target: 'MOD', result: 'EQUAL', value: 0 }],
        success: [{ type: 'put', key: 'obj', value }],
        failure: [{ type: 'range', key: 'obj' }],
      })
      const first = await h.log.txn(create('v1'))
      expect(first.succeeded).to.equal(true)
      expect(first.wrote).to.equal(true)
      expect(first.results.map((x) => x.type)).to.deep.equal(['put'])
      expect((first.results[0] as { prevKv?: unknown }).prevKv).to.equal(undefined)
      const second = await h.log.txn(create('v2'))
      expect(second.succeeded).to.equal(false)
      expect(second.wrote).to.equal(false)
      expect(second.revision).to.equal(first.revision)
      const range = second.results[0] as RangeOpResult
      expect(range.type).to.equal('range')
      expect(kvViews(range.kvs)).to.deep.equal([
        { key: 'obj', value: 'v1', createRevision: first.revision, modRevision: first.revision, version: 1, lease: '0' },
      ])
      const update = await h.log.txn({
        compare: [{ key: 'obj', target: 'MOD', result: 'EQUAL', value: first.revision }],
        success: [{ type: 'put', key: 'obj', value: 'v3', prevKv: true }],
        failure: [{ type: 'range', key: 'obj' }],
      })
      expect(update.succeeded).to.equal(true)
      expect(update.revision).to.equal(first.revision + 1)
      const put = update.results[0]!
      expect(put.type).to.equal('put')
      expect(put.type === 'put' && put.prevKv !== undefined ? kvView(put.prevKv).value : undefined).to.equal('v1')
      const stale = await h.log.txn({
        compare: [{ key: 'obj', target: 'MOD', result: 'EQUAL', value: first.revision }],
        success: [{ type: 'delete', key: 'obj' }],
        failure: [{ type: 'range', key: 'obj' }],
      })
      expect(stale.succeeded).to.equal(false)
      expect((await h.log.get('obj'))!.value.toString()).to.equal('v3')
    })

    it('runs nested txns with their own compares, writing at the outer revision', async () => {
      await h.log.put('flag', 'on')
      const rev = h.log.revision
      const nested = (value: string): Op => ({
        type: 'txn',
        compare: [{ key: 'flag', target: 'VALUE', result: 'EQUAL', value }],
        success: [{ type: 'put', key: 'then', value: 'T' }],
        failure: [
          { type: 'put', key: 'else', value: 'E' },
          { type: 'range', key: 'flag' },
        ],
      })
      const r = await h.log.txn({ success: [{ type: 'put', key: 'outer', value: 'O' }, nested('on')] })
      expect(r.succeeded).to.equal(true)
      expect(r.revision).to.equal(rev + 1)
      expect(r.results.map((x) => x.type)).to.deep.equal(['put', 'txn'])
      const inner = r.results[1] as TxnOpResult
      expect(inner.succeeded).to.equal(true)
      expect(inner.results.map((x) => x.type)).to.deep.equal(['put'])
      expect((await h.log.get('then'))!.modRevision).to.equal(rev + 1)
      expect((await h.log.get('outer'))!.modRevision).to.equal(rev + 1)
      expect(await h.log.get('else')).to.equal(undefined)

      const r2 = await h.log.txn({ success: [nested('off')] })
      expect(r2.revision).to.equal(rev + 2)
      const inner2 = r2.results[0] as TxnOpResult
      expect(inner2.succeeded).to.equal(false)
      expect(inner2.results.map((x) => x.type)).to.deep.equal(['put', 'range'])
      expect((inner2.results[1] as RangeOpResult).kvs.map((kv) => kv.value.toString())).to.deep.equal(['on'])
      expect((await h.log.get('else'))!.modRevision).to.equal(rev + 2)
      const hist = await h.log.history('a', { rangeEnd: 'z', fromRevision: rev + 1 })
      expect(hist.entries.map((e) => [e.revision, e.events.map((ev) => ev.kv.key.toString())])).to.deep.equal([
        [rev + 1, ['outer', 'then']],
        [rev + 2, ['else']],
      ])
    })

    it('lets a range inside a txn see the earlier writes of the same txn', async () => {
      await h.log.put('a', 'old')
      await h.log.put('b', 'gone-soon')
      const rev = h.log.revision
      const r = await h.log.txn({
        success: [
          { type: 'range', key: 'a' },
          { type: 'put', key: 'a', value: 'new' },
          { type: 'range', key: 'a' },
          { type: 'delete', key: 'b' },
          { type: 'range', key: 'b' },
          { type: 'put', key: 'c', value: 'fresh' },
          { type: 'range', key: 'a', rangeEnd: 'z', countOnly: true },
        ],
      })
      const ranges = r.results.filter((x): x is RangeOpResult => x.type === 'range')
      expect(ranges).to.have.length(4)
      expect(ranges[0]!.kvs.map((kv) => kv.value.toString())).to.deep.equal(['old'])
      expect(kvViews(ranges[1]!.kvs)).to.deep.equal([
        { key: 'a', value: 'new', createRevision: 2, modRevision: rev + 1, version: 2, lease: '0' },
      ])
      expect(ranges[2]!.kvs).to.deep.equal([])
      expect(ranges[2]!.count).to.equal(0)
      expect(ranges[3]!.count).to.equal(2)
      expect(r.results[3]).to.include({ type: 'delete', deleted: 1 })
    })

    it('allows the same key in the success and the failure branch, and overlapping deletes', async () => {
      await h.log.put('a', '0')
      await h.log.put('a/1', '0')
      const both: TxnRequest = {
        compare: [{ key: 'a', target: 'VALUE', result: 'EQUAL', value: '0' }],
        success: [{ type: 'put', key: 'a', value: 'S' }],
        failure: [{ type: 'put', key: 'a', value: 'F' }],
      }
      expect((await h.log.txn(both)).succeeded).to.equal(true)
      expect((await h.log.txn(both)).succeeded).to.equal(false)
      expect((await h.log.get('a'))!.value.toString()).to.equal('F')
      const dels = await h.log.txn({
        success: [
          { type: 'delete', key: 'a' },
          { type: 'delete', key: 'a', rangeEnd: prefixEnd('a') },
        ],
      })
      expect(dels.wrote).to.equal(true)
      expect(dels.results.map((x) => [x.type, (x as { deleted?: number }).deleted])).to.deep.equal([
        ['delete', 1],
        ['delete', 1],
      ])
      expect((await rangeAll(h.log)).kvs).to.deep.equal([])
    })

    it('rejects writing a key twice with DUPLICATE_KEY', async () => {
      await h.log.put('p/1', 'x')
      const put = (key: string): Op => ({ type: 'put', key, value: 'v' })
      await rejects({ success: [put('a'), put('a')] }, 'DUPLICATE_KEY', 'two puts')
      await rejects({ success: [put('a'), put('b'), put('a')] }, 'DUPLICATE_KEY', 'two puts apart')
      await rejects(
        { success: [{ type: 'delete', key: 'p/', rangeEnd: prefixEnd('p/') }, put('p/2')] },
        'DUPLICATE_KEY',
        'put inside an earlier delete range',
      )
      await rejects(
        { success: [put('p/1'), { type: 'delete', key: 'p/', rangeEnd: prefixEnd('p/') }] },
        'DUPLICATE_KEY',
        'put inside a later delete range',
      )
      await rejects({ success: [put('p/1'), { type: 'delete', key: 'p/1' }] }, 'DUPLICATE_KEY', 'put and delete of one key')
      await rejects({ success: [put('a'), { type: 'txn', success: [put('a')] }] }, 'DUPLICATE_KEY', 'across a nested txn')
      await rejects(
        {
          success: [
            { type: 'txn', success: [put('a')] },
            { type: 'txn', success: [put('a')] },
          ],
        },
        'DUPLICATE_KEY',
        'across sibling nested txns',
      )
      await rejects(
        {
          success: [
            { type: 'delete', key: 'p/1' },
            { type: 'txn', success: [put('p/1')] },
          ],
        },
        'DUPLICATE_KEY',
        'nested put inside an outer delete',
      )
      await rejects(
        { compare: [{ key: 'zz', target: 'VERSION', result: 'GREATER', value: 0 }], failure: [put('q'), put('q')] },
        'DUPLICATE_KEY',
        'in the failure branch',
      )
      await afterwardsWrites()
    })

    it(`rejects more than maxTxnOps ops per branch or compares with TOO_MANY_OPS`, async () => {
      const max = ctx.limits.maxTxnOps
      const puts = (n: number): Op[] => Array.from({ length: n }, (_, i) => ({ type: 'put', key: `k${i}`, value: 'v' }))
      const never = [{ key: 'nope', target: 'VERSION' as const, result: 'GREATER' as const, value: 0 }]
      const ok = await h.log.txn({ success: puts(max) })
      expect(ok.wrote).to.equal(true)
      await rejects({ success: puts(max + 1) }, 'TOO_MANY_OPS', 'success branch')
      await rejects({ compare: never, failure: puts(max + 1) }, 'TOO_MANY_OPS', 'failure branch')
      const compares = Array.from({ length: max + 1 }, (_, i) => ({
        key: `k${i}`,
        target: 'VERSION' as const,
        result: 'GREATER' as const,
        value: 0,
      }))
      await rejects({ compare: compares, success: puts(1) }, 'TOO_MANY_OPS', 'compares')
      await rejects({ success: [{ type: 'txn', success: puts(max + 1) }] }, 'TOO_MANY_OPS', 'nested branch')
      const okCompares = await h.log.txn({ compare: compares.slice(0, max), success: [{ type: 'range', key: 'k0' }] })
      expect(okCompares.succeeded).to.equal(true)
      await afterwardsWrites()
    })

    it('rejects keys + values over maxRequestBytes with REQUEST_TOO_LARGE', async () => {
      const max = ctx.limits.maxRequestBytes
      const big = 'x'.repeat(max + 1)
      const third = 'y'.repeat(Math.ceil(max / 3) + 16)
      const rev = h.log.revision
      await expectCode(() => h.log.put('big', big), 'REQUEST_TOO_LARGE', 'one put')
      expect(h.log.revision).to.equal(rev)
      await rejects({ success: [1, 2, 3].map((i) => ({ type: 'put', key: `t${i}`, value: third })) }, 'REQUEST_TOO_LARGE', 'three puts')
      await rejects({ success: [{ type: 'put', key: Buffer.alloc(max + 1, 0x61), value: '' }] }, 'REQUEST_TOO_LARGE', 'a large key')
      const half = await h.log.put('half', 'z'.repeat(Math.floor(max / 2)))
      expect(half.revision).to.equal(rev + 1)
      expect(await h.log.get('big')).to.equal(undefined)
      await afterwardsWrites()
    })
  })
}
