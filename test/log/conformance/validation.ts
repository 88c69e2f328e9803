/**
 * Bad input: future revisions (FUTURE_REVISION), malformed revisions, empty and non-bytes keys. Each is
 * rejected with its code, consumes no revision, and leaves the store usable.
 */
import { expect } from 'chai'
import type { ErrorCode } from '../../../log/errors.js'
import { expectCode, useLog, ZERO, type SuiteContext } from './helpers.js'

const BAD_REVISIONS = [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -0.5]
const KEY_CODES: ErrorCode[] = ['INVALID_ARGUMENT', 'EMPTY_KEY']

export function validationTests(ctx: SuiteContext): void {
  describe('validation', () => {
    const h = useLog(ctx)
    beforeEach(async () => {
      await h.log.put('a', '1')
      await h.log.put('b', '2')
    })
    /** After a rejected call: nothing was written and the next write gets the next revision. */
    const stillUsable = async (rev: number, what: string): Promise<void> => {
      expect(h.log.revision, `${what}: no revision consumed`).to.equal(rev)
      const w = await h.log.put('probe', what)
      expect(w.revision, `${what}: store still writes`).to.equal(rev + 1)
      expect((await h.log.get('probe'))!.value.toString()).to.equal(what)
    }

    it('rejects reads above the current revision with FUTURE_REVISION', async () => {
      const rev = h.log.revision
      const e = await expectCode(() => h.log.range('a', { revision: rev + 1 }), 'FUTURE_REVISION', 'range')
      if (e.details.currentRevision !== undefined) expect(e.details.currentRevision).to.equal(rev)
      await expectCode(() => h.log.get('a', { revision: rev + 1 }), 'FUTURE_REVISION', 'get')
      await expectCode(() => h.log.range(ZERO, { rangeEnd: ZERO, revision: rev + 100 }), 'FUTURE_REVISION', 'range all')
      await expectCode(() => h.log.txn({ success: [{ type: 'range', key: 'a', revision: rev + 1 }] }), 'FUTURE_REVISION', 'range in a txn')
      expect((await h.log.range('a', { revision: rev })).kvs).to.have.length(1)
      await stillUsable(rev, 'future')
    })

    it('rejects negative, fractional, NaN and infinite revisions with INVALID_ARGUMENT', async () => {
      for (const bad of BAD_REVISIONS) {
        const rev = h.log.revision
        await expectCode(() => h.log.range('a', { revision: bad }), 'INVALID_ARGUMENT', `range revision ${bad}`)
        await expectCode(() => h.log.get('a', { revision: bad }), 'INVALID_ARGUMENT', `get revision ${bad}`)
        await expectCode(() => h.log.history('a', { fromRevision: bad }), 'INVALID_ARGUMENT', `history from ${bad}`)
        await expectCode(() => h.log.compact(bad), 'INVALID_ARGUMENT', `compact ${bad}`)
        if (!Number.isInteger(bad)) {
          await expectCode(
            () =>
              h.log.txn({
                compare: [{ key: 'a', target: 'MOD', result: 'EQUAL', value: bad }],
                success: [{ type: 'put', key: 'a', value: 'x' }],
              }),
            'INVALID_ARGUMENT',
            `compare value ${bad}`,
          )
        }
        expect(h.log.compactRevision).to.be.at.most(1)
        await stillUsable(rev, `revision ${bad}`)
      }
    })

    it('rejects an empty key with EMPTY_KEY or INVALID_ARGUMENT', async () => {
      const empties = ['', Buffer.alloc(0), new Uint8Array(0)]
      for (const key of empties) {
        const rev = h.log.revision
        await expectCode(() => h.log.put(key, 'v'), KEY_CODES, 'put')
        await expectCode(() => h.log.get(key), KEY_CODES, 'get')
        await expectCode(() => h.log.range(key), KEY_CODES, 'range')
        await expectCode(() => h.log.delete(key), KEY_CODES, 'delete')
        await expectCode(() => h.log.history(key), KEY_CODES, 'history')
        await expectCode(() => h.log.txn({ success: [{ type: 'put', key, value: 'v' }] }), KEY_CODES, 'txn put')
        await expectCode(
          () => h.log.txn({ compare: [{ key, target: 'VERSION', result: 'EQUAL', value: 0 }], success: [] }),
          KEY_CODES,
          'txn compare',
        )
        await stillUsable(rev, `empty key ${typeof key}`)
      }
    })

    it('rejects keys and values that are not bytes with INVALID_ARGUMENT', async () => {
      const notBytes: unknown[] = [42, {}, null, undefined, ['a'], 7n, true]
      for (const bad of notBytes) {
        const rev = h.log.revision
        const key = bad as string
        await expectCode(() => h.log.put(key, 'v'), KEY_CODES, `put key ${String(bad)}`)
        await expectCode(() => h.log.get(key), KEY_CODES, `get key ${String(bad)}`)
        await expectCode(() => h.log.range(key), KEY_CODES, `range key ${String(bad)}`)
        await expectCode(() => h.log.delete(key), KEY_CODES, `delete key ${String(bad)}`)
        await expectCode(() => h.log.txn({ success: [{ type: 'put', key, value: 'v' }] }), KEY_CODES, `txn key ${String(bad)}`)
        if (bad !== undefined && bad !== null) {
          await expectCode(() => h.log.range('a', { rangeEnd: key }), 'INVALID_ARGUMENT', `rangeEnd ${String(bad)}`)
        }
        if (bad === 42 || (typeof bad === 'object' && bad !== null)) {
          await expectCode(() => h.log.put('k', key), 'INVALID_ARGUMENT', `put value ${String(bad)}`)
        }
        await stillUsable(rev, `not bytes ${String(bad)}`)
      }
    })

    it('rejects malformed txns without writing anything', async () => {
      const rev = h.log.revision
      const bad = (x: unknown): Parameters<typeof h.log.txn>[0] => x as Parameters<typeof h.log.txn>[0]
      const malformed: Array<[string, unknown]> = [
        ['unknown op type', { success: [{ type: 'bogus', key: 'a' }] }],
        [
          'unknown compare target',
          { compare: [{ key: 'a', target: 'BOGUS', result: 'EQUAL', value: 1 }], success: [{ type: 'put', key: 'a', value: 'x' }] },
        ],
        [
          'unknown compare result',
          { compare: [{ key: 'a', target: 'MOD', result: 'BOGUS', value: 1 }], success: [{ type: 'put', key: 'a', value: 'x' }] },
        ],
        ['branch not a list', { success: 'nope' }],
      ]
      for (const [what, request] of malformed) {
        let failed = false
        try {
          await h.log.txn(bad(request))
        } catch {
          failed = true
        }
        expect(failed, `${what} is rejected`).to.equal(true)
        expect(h.log.revision, `${what}: no revision consumed`).to.equal(rev)
      }
      expect((await h.log.get('a'))!.value.toString()).to.equal('1')
      await stillUsable(rev, 'txn')
    })
  })
}
