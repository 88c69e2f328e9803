/**
 * rangeInto: the kvs handed to the sink, in order, with more, count and revision, are exactly what range
 * answers for the same request (latest and past revisions, limits either way round, keys-only, count-only,
 * sorts, filters, single keys, leases), and a request range refuses is refused with the same code.
 */
import { expect } from 'chai'
import type { Log } from '../../../log/backend.js'
import { prefixEnd } from '../../../log/keys.js'
import type { BytesLike, KeyValue, RangeOptions } from '../../../log/types.js'
import { expectCode, kvViews, useLog, ZERO, type SuiteContext } from './helpers.js'

async function collected(log: Log, key: BytesLike, options: RangeOptions): Promise<unknown> {
  const kvs: KeyValue[] = []
  const summary = await log.rangeInto(key, options, (k, value, createRevision, modRevision, version, lease) =>
    // The sink copies what it keeps: the buffers are valid only during the call.
    kvs.push({ key: Buffer.from(k), value: Buffer.from(value), createRevision, modRevision, version, lease }),
  )
  return { kvs: kvViews(kvs), ...summary }
}

async function answered(log: Log, key: BytesLike, options: RangeOptions): Promise<unknown> {
  const { kvs, ...summary } = await log.range(key, options)
  return { kvs: kvViews(kvs), ...summary }
}

export function rangeIntoTests(ctx: SuiteContext): void {
  describe('rangeInto', () => {
    const h = useLog(ctx)

    it('hands the sink what range answers, for every kind of request', async () => {
      const lease = await h.log.leaseGrant(60)
      for (const k of ['c', 'a', 'e', 'b', 'd']) await h.log.put(`p/${k}`, `v-${k}`)
      await h.log.put('p/b', 'v-b2', { lease: lease.id })
      await h.log.put('p/d', '')
      const past = h.log.revision
      await h.log.delete('p/c')
      await h.log.put('p/f', 'v-f')
      await h.log.put('q', 'outside')
      const end = prefixEnd('p/')
      const requests: Array<[BytesLike, RangeOptions]> = [
        ['p/', { rangeEnd: end }],
        ['p/', { rangeEnd: end, limit: 2 }],
        ['p/', { rangeEnd: end, limit: 5 }],
        ['p/', { rangeEnd: end, limit: 6 }],
        ['p/', { rangeEnd: end, limit: 2, sortOrder: 'DESCEND' }],
        ['p/', { rangeEnd: end, limit: 2, sortTarget: 'KEY', sortOrder: 'DESCEND' }],
        ['p/', { rangeEnd: end, keysOnly: true }],
        ['p/', { rangeEnd: end, keysOnly: true, limit: 3 }],
        ['p/', { rangeEnd: end, countOnly: true }],
        ['p/', { rangeEnd: end, sortTarget: 'VERSION', sortOrder: 'DESCEND' }],
        ['p/', { rangeEnd: end, sortTarget: 'VALUE', limit: 2 }],
        ['p/', { rangeEnd: end, minModRevision: past }],
        ['p/', { rangeEnd: end, revision: past }],
        ['p/', { rangeEnd: end, revision: past, limit: 2 }],
        ['p/', { rangeEnd: end, revision: past, limit: 2, sortOrder: 'DESCEND' }],
        ['p/b', {}],
        ['p/b', { keysOnly: true }],
        ['p/c', {}],
        ['p/c', { revision: past }],
        ['p/', { rangeEnd: ZERO }],
        [ZERO, { rangeEnd: ZERO, limit: 4 }],
        ['x', { rangeEnd: 'y' }],
      ]
      for (const [key, options] of requests) {
        const what = JSON.stringify([key, options])
        expect(await collected(h.log, key, options), what).to.deep.equal(await answered(h.log, key, options))
      }
    })

    it('refuses what range refuses, with the same code', async () => {
      await h.log.put('a', '1')
      const future = { rangeEnd: ZERO, revision: h.log.revision + 1 }
      await expectCode(() => h.log.rangeInto('a', future, () => undefined), 'FUTURE_REVISION')
      await expectCode(() => h.log.rangeInto('a', { revision: -1 }, () => undefined), 'INVALID_ARGUMENT')
    })
  })
}
