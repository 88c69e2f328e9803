/** txn compares: every target with every result, missing keys, compares over a range, ANDing. */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import type { Compare, CompareResult, CompareTarget } from '../../../log/types.js'
import { useLog, type SuiteContext } from './helpers.js'

type CompareValue = Compare['value']

export function txnCompareTests(ctx: SuiteContext): void {
  describe('txn compares', () => {
    const h = useLog(ctx)
    /** Evaluates compares in a read-only txn and returns whether they held; asserts nothing was written. */
    const holds = async (compare: Compare[]): Promise<boolean> => {
      const rev = h.log.revision
      const r = await h.log.txn({ compare, success: [{ type: 'range', key: 'x' }], failure: [] })
      expect(r.wrote).to.equal(false)
      expect(h.log.revision).to.equal(rev)
      expect(r.results).to.have.length(r.succeeded ? 1 : 0)
      return r.succeeded
    }

    it('compares VALUE, VERSION, CREATE, MOD and LEASE with EQUAL, NOT_EQUAL, LESS and GREATER', async () => {
      const c = (await h.log.put('x', 'm1')).revision
      await h.log.put('y', 'other')
      const m = (await h.log.put('x', 'm')).revision
      expect(m).to.be.greaterThan(c + 1)
      // target → result → [a value that holds, a value that does not]
      const table: Record<CompareTarget, Record<CompareResult, [CompareValue | undefined, CompareValue]>> = {
        VALUE: { EQUAL: ['m', 'm1'], NOT_EQUAL: ['n', Buffer.from('m')], LESS: ['n', 'm'], GREATER: ['l', 'm'] },
        VERSION: { EQUAL: [2, 3], NOT_EQUAL: [1, 2], LESS: [3, 2], GREATER: [1, 2] },
        CREATE: { EQUAL: [c, c + 1], NOT_EQUAL: [c + 1, c], LESS: [c + 1, c], GREATER: [c - 1, c] },
        MOD: { EQUAL: [m, c], NOT_EQUAL: [c, m], LESS: [m + 1, m], GREATER: [m - 1, m] },
        // leases are unsigned 64-bit ids here, so nothing is below 0: GREATER only has a failing case
        LEASE: { EQUAL: [0n, 5n], NOT_EQUAL: [5n, 0n], LESS: [1n, 0n], GREATER: [undefined, 0n] },
      }
      for (const [target, byResult] of Object.entries(table) as Array<
        [CompareTarget, Record<CompareResult, [CompareValue | undefined, CompareValue]>]
      >) {
        for (const [result, [yes, no]] of Object.entries(byResult) as Array<[CompareResult, [CompareValue | undefined, CompareValue]]>) {
          if (yes !== undefined)
            expect(await holds([{ key: 'x', target, result, value: yes }]), `${target} ${result} ${String(yes)}`).to.equal(true)
          expect(await holds([{ key: 'x', target, result, value: no }]), `${target} ${result} ${String(no)}`).to.equal(false)
        }
      }
      expect(await holds([{ key: 'x', target: 'LEASE', result: 'EQUAL', value: 0 }]), 'LEASE as a number').to.equal(true)
      expect(await holds([{ key: 'x', target: 'LEASE', result: 'GREATER', value: 0n }]), 'LEASE GREATER than none').to.equal(false)
      expect(await holds([{ key: 'x', target: 'VALUE', result: 'LESS', value: 'm\u0000' }]), 'byte order').to.equal(true)
    })

    it('compares a missing key as version/create/mod/lease 0, and a VALUE compare on it as false', async () => {
      await h.log.put('present', 'v')
      const missing = (target: CompareTarget, result: CompareResult, value: CompareValue): Promise<boolean> =>
        holds([{ key: 'missing', target, result, value }])
      expect(await missing('VERSION', 'EQUAL', 0)).to.equal(true)
      expect(await missing('CREATE', 'EQUAL', 0)).to.equal(true)
      expect(await missing('MOD', 'EQUAL', 0)).to.equal(true)
      expect(await missing('LEASE', 'EQUAL', 0n)).to.equal(true)
      expect(await missing('MOD', 'LESS', 1)).to.equal(true)
      expect(await missing('VERSION', 'GREATER', 0)).to.equal(false)
      expect(await missing('VALUE', 'EQUAL', '')).to.equal(false)
      expect(await missing('VALUE', 'NOT_EQUAL', 'x')).to.equal(false)
      expect(await missing('VALUE', 'LESS', 'zzz')).to.equal(false)
    })

    it('with rangeEnd, holds only if every key in the range satisfies the compare', async () => {
      await h.log.put('r/1', 'a')
      await h.log.put('r/2', 'b')
      await h.log.put('r/2', 'b')
      await h.log.put('r/3', 'c')
      await h.log.put('r/3', 'c')
      await h.log.put('r/3', 'c')
      await h.log.put('s', 'outside')
      const end = prefixEnd('r/')
      const over = (target: CompareTarget, result: CompareResult, value: CompareValue): Promise<boolean> =>
        holds([{ key: 'r/', rangeEnd: end, target, result, value }])
      expect(await over('VERSION', 'GREATER', 0)).to.equal(true)
      expect(await over('VERSION', 'LESS', 4)).to.equal(true)
      expect(await over('VERSION', 'LESS', 3)).to.equal(false)
      expect(await over('VERSION', 'EQUAL', 2)).to.equal(false)
      expect(await over('VALUE', 'NOT_EQUAL', 'outside')).to.equal(true)
      expect(await over('VALUE', 'LESS', 'c')).to.equal(false)
      expect(await over('VALUE', 'LESS', 'd')).to.equal(true)
      expect(await holds([{ key: 'r/2', rangeEnd: Buffer.from([0]), target: 'VERSION', result: 'GREATER', value: 1 }])).to.equal(false)
      expect(await holds([{ key: 'r/2', rangeEnd: 'r/4', target: 'VERSION', result: 'GREATER', value: 1 }])).to.equal(true)
      // an empty range compares like a missing key
      const none = prefixEnd('none/')
      expect(await holds([{ key: 'none/', rangeEnd: none, target: 'VERSION', result: 'EQUAL', value: 0 }])).to.equal(true)
      expect(await holds([{ key: 'none/', rangeEnd: none, target: 'VALUE', result: 'EQUAL', value: '' }])).to.equal(false)
    })

    it('ANDs compares: one false compare takes the failure branch', async () => {
      await h.log.put('x', 'v')
      const yes: Compare = { key: 'x', target: 'VERSION', result: 'EQUAL', value: 1 }
      const no: Compare = { key: 'x', target: 'VALUE', result: 'EQUAL', value: 'w' }
      expect(await holds([yes, yes])).to.equal(true)
      expect(await holds([yes, no])).to.equal(false)
      expect(await holds([no, yes])).to.equal(false)
      expect(await holds([])).to.equal(true)
    })
  })
}
