/**
 * range: latest and past revisions, limit/more/count (count ignores limit and filters, as in etcd), keysOnly,
 * countOnly, every sort target and order, min/max revision filters, paging over one snapshot.
 */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import type { KeyValue, SortTarget } from '../../../log/types.js'
import { b, kvViews, rangeAll, useLog, type KvView, type SuiteContext } from './helpers.js'

/** Sort keys for each target; VALUE compares bytes. */
const TARGET_OF: Record<SortTarget, (kv: KeyValue) => number | Buffer> = {
  KEY: (kv) => kv.key,
  VERSION: (kv) => kv.version,
  CREATE: (kv) => kv.createRevision,
  MOD: (kv) => kv.modRevision,
  VALUE: (kv) => kv.value,
}

function cmp(x: number | Buffer, y: number | Buffer): number {
  return typeof x === 'number' && typeof y === 'number' ? x - y : Buffer.compare(x as Buffer, y as Buffer)
}

/**
 * Writes s/a..s/e so that every sort target gives a different, tie-free order:
 * create order c a e b d; versions d5 b4 e3 a2 c1; values chosen against key order.
 */
async function sortFixture(put: (k: string, v: string) => Promise<unknown>): Promise<void> {
  const values: Record<string, string> = { a: 'm', b: 'z', c: 'a', d: 'q', e: 'c' }
  for (const k of ['c', 'a', 'e', 'b', 'd']) await put(`s/${k}`, `${values[k]}0`)
  const extra: Array<[string, number]> = [
    ['e', 2],
    ['a', 1],
    ['d', 4],
    ['b', 3],
  ]
  for (const [k, n] of extra) for (let i = 1; i <= n; i++) await put(`s/${k}`, `${values[k]}${i}`)
}

export function rangeTests(ctx: SuiteContext): void {
  describe('range', () => {
    const h = useLog(ctx)

    it('reads the state at every past revision exactly as it was', async () => {
      const snapshots = new Map<number, KvView[]>()
      snapshots.set(1, [])
      const ops: Array<() => Promise<unknown>> = [
        () => h.log.put('a', '1'),
        () => h.log.put('b', '1'),
        () => h.log.put('a', '2'),
        () => h.log.delete('b'),
        () =>
          h.log.txn({
            success: [
              { type: 'put', key: 'c', value: '1' },
              { type: 'put', key: 'b', value: '2' },
            ],
          }),
        () => h.log.delete('a', { rangeEnd: 'c' }),
        () => h.log.put('a', '3'),
      ]
      for (const op of ops) {
        await op()
        snapshots.set(h.log.revision, kvViews((await rangeAll(h.log)).kvs))
      }
      for (const [rev, want] of snapshots) {
        const r = await rangeAll(h.log, rev)
        expect(kvViews(r.kvs), `state at ${rev}`).to.deep.equal(want)
        expect(r.count).to.equal(want.length)
        expect(r.revision).to.equal(rev)
        for (const kv of want) {
          const got = await h.log.get(kv.key, { revision: rev })
          expect(got?.value.toString(), `get ${kv.key} at ${rev}`).to.equal(kv.value)
        }
      }
      expect(await h.log.get('b', { revision: 5 })).to.equal(undefined)
      const latest = await rangeAll(h.log, 0)
      expect(latest.revision).to.equal(h.log.revision)
      expect(kvViews(latest.kvs)).to.deep.equal(snapshots.get(h.log.revision))
    })

    it('reads a single key, a prefix and [key, rangeEnd)', async () => {
      for (const k of ['p', 'p/1', 'p/2', 'p0', 'q']) await h.log.put(k, k)
      const keys = (kvs: KeyValue[]): string[] => kvs.map((kv) => kv.key.toString())
      expect(keys((await h.log.range('p')).kvs)).to.deep.equal(['p'])
      expect(keys((await h.log.range('p/', { rangeEnd: prefixEnd('p/') })).kvs)).to.deep.equal(['p/1', 'p/2'])
      expect(keys((await h.log.range('p/2', { rangeEnd: 'q' })).kvs)).to.deep.equal(['p/2', 'p0'])
      expect(keys((await h.log.range('p0', { rangeEnd: Buffer.from([0]) })).kvs)).to.deep.equal(['p0', 'q'])
      expect((await h.log.range('nope')).kvs).to.deep.equal([])
      expect((await h.log.range('nope')).count).to.equal(0)
    })

    it('applies limit, sets more, and counts every key in the range regardless of limit', async () => {
      for (let i = 0; i < 7; i++) await h.log.put(`l/${i}`, `${i}`)
      const end = prefixEnd('l/')
      const r3 = await h.log.range('l/', { rangeEnd: end, limit: 3 })
      expect(r3.kvs.map((kv) => kv.key.toString())).to.deep.equal(['l/0', 'l/1', 'l/2'])
      expect(r3.more).to.equal(true)
      expect(r3.count).to.equal(7)
      const r7 = await h.log.range('l/', { rangeEnd: end, limit: 7 })
      expect(r7.kvs).to.have.length(7)
      expect(r7.more).to.equal(false)
      expect(r7.count).to.equal(7)
      const r0 = await h.log.range('l/', { rangeEnd: end, limit: 0 })
      expect(r0.kvs).to.have.length(7)
      expect(r0.more).to.equal(false)
      const past = await h.log.range('l/', { rangeEnd: end, limit: 2, revision: 5 })
      expect(past.kvs.map((kv) => kv.key.toString())).to.deep.equal(['l/0', 'l/1'])
      expect(past.count).to.equal(4)
      expect(past.more).to.equal(true)
    })

    it('keysOnly returns empty values with the other fields intact; countOnly returns no kvs and the count', async () => {
      for (let i = 0; i < 4; i++) await h.log.put(`k/${i}`, `value-${i}`)
      const end = prefixEnd('k/')
      const full = kvViews((await h.log.range('k/', { rangeEnd: end })).kvs)
      const keysOnly = await h.log.range('k/', { rangeEnd: end, keysOnly: true })
      expect(kvViews(keysOnly.kvs)).to.deep.equal(full.map((kv) => ({ ...kv, value: '' })))
      expect(keysOnly.count).to.equal(4)
      const countOnly = await h.log.range('k/', { rangeEnd: end, countOnly: true })
      expect(countOnly.kvs).to.deep.equal([])
      expect(countOnly.count).to.equal(4)
      const countLimited = await h.log.range('k/', { rangeEnd: end, countOnly: true, limit: 1 })
      expect(countLimited.count).to.equal(4)
    })

    describe('sorting', () => {
      const targets: SortTarget[] = ['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE']
      let all: KeyValue[] = []
      beforeEach(async () => {
        await sortFixture((k, v) => h.log.put(k, v))
        all = (await h.log.range('s/', { rangeEnd: prefixEnd('s/') })).kvs
        expect(all).to.have.length(5)
      })
      const expected = (target: SortTarget, descend: boolean): string[] => {
        const sorted = [...all].sort((x, y) => cmp(TARGET_OF[target](x), TARGET_OF[target](y)))
        for (let i = 1; i < sorted.length; i++) {
          expect(cmp(TARGET_OF[target](sorted[i - 1]!), TARGET_OF[target](sorted[i]!)), `fixture ties on ${target}`).to.not.equal(0)
        }
        if (descend) sorted.reverse()
        return sorted.map((kv) => kv.key.toString())
      }
      const read = async (opts: object): Promise<string[]> =>
        (await h.log.range('s/', { rangeEnd: prefixEnd('s/'), ...opts })).kvs.map((kv) => kv.key.toString())

      for (const target of targets) {
        it(`sorts by ${target} ascending and descending`, async () => {
          expect(await read({ sortTarget: target, sortOrder: 'ASCEND' })).to.deep.equal(expected(target, false))
          expect(await read({ sortTarget: target, sortOrder: 'DESCEND' })).to.deep.equal(expected(target, true))
        })
      }

      for (const target of targets.filter((t) => t !== 'KEY')) {
        it(`sorts ascending by ${target} when the order is NONE (etcd)`, async () => {
          expect(await read({ sortTarget: target, sortOrder: 'NONE' })).to.deep.equal(expected(target, false))
          expect(await read({ sortTarget: target })).to.deep.equal(expected(target, false))
        })
      }

      it('returns key order with NONE order and KEY target (or no sort at all)', async () => {
        expect(await read({ sortOrder: 'NONE', sortTarget: 'KEY' })).to.deep.equal(expected('KEY', false))
        expect(await read({})).to.deep.equal(expected('KEY', false))
      })

      it('applies the limit after sorting (the top N), with more and the full count', async () => {
        const r = await h.log.range('s/', { rangeEnd: prefixEnd('s/'), sortTarget: 'MOD', sortOrder: 'DESCEND', limit: 2 })
        expect(r.kvs.map((kv) => kv.key.toString())).to.deep.equal(expected('MOD', true).slice(0, 2))
        expect(r.more).to.equal(true)
        expect(r.count).to.equal(5)
        const v = await h.log.range('s/', { rangeEnd: prefixEnd('s/'), sortTarget: 'VERSION', sortOrder: 'ASCEND', limit: 3 })
        expect(v.kvs.map((kv) => kv.key.toString())).to.deep.equal(expected('VERSION', false).slice(0, 3))
      })
    })

    it('filters by min/max mod and create revision; count ignores the filters', async () => {
      await sortFixture((k, v) => h.log.put(k, v))
      const end = prefixEnd('s/')
      const all = (await h.log.range('s/', { rangeEnd: end })).kvs
      const keysWhere = (p: (kv: KeyValue) => boolean): string[] => all.filter(p).map((kv) => kv.key.toString())
      const read = async (opts: object): Promise<{ keys: string[]; count: number }> => {
        const r = await h.log.range('s/', { rangeEnd: end, ...opts })
        return { keys: r.kvs.map((kv) => kv.key.toString()), count: r.count }
      }
      const mods = all.map((kv) => kv.modRevision).sort((x, y) => x - y)
      const creates = all.map((kv) => kv.createRevision).sort((x, y) => x - y)
      const m = mods[2]!
      const c = creates[2]!
      expect(await read({ minModRevision: m })).to.deep.equal({ keys: keysWhere((kv) => kv.modRevision >= m), count: 5 })
      expect(await read({ maxModRevision: m })).to.deep.equal({ keys: keysWhere((kv) => kv.modRevision <= m), count: 5 })
      expect(await read({ minCreateRevision: c })).to.deep.equal({ keys: keysWhere((kv) => kv.createRevision >= c), count: 5 })
      expect(await read({ maxCreateRevision: c })).to.deep.equal({ keys: keysWhere((kv) => kv.createRevision <= c), count: 5 })
      expect(await read({ minModRevision: mods[1], maxModRevision: mods[3] })).to.deep.equal({
        keys: keysWhere((kv) => kv.modRevision >= mods[1]! && kv.modRevision <= mods[3]!),
        count: 5,
      })
      const limited = await h.log.range('s/', { rangeEnd: end, minModRevision: m, limit: 1 })
      expect(limited.kvs.map((kv) => kv.key.toString())).to.deep.equal(keysWhere((kv) => kv.modRevision >= m).slice(0, 1))
      expect(limited.more).to.equal(true)
      expect(limited.count).to.equal(5)
    })

    it('pages through one revision while writes continue: the pages form one snapshot', async () => {
      const end = prefixEnd('pg/')
      for (let i = 0; i < 20; i++) await h.log.put(`pg/${String(i).padStart(2, '0')}`, `v${i}`)
      const at = h.log.revision
      const snapshot = kvViews((await h.log.range('pg/', { rangeEnd: end })).kvs)
      let writing = true
      const writer = (async () => {
        let n = 0
        while (writing && n < 200) {
          const i = n % 20
          const key = `pg/${String(i).padStart(2, '0')}`
          if (n % 3 === 0) await h.log.delete(key)
          else if (n % 3 === 1) await h.log.put(key, `w${n}`)
          else await h.log.put(`pg/${String(i).padStart(2, '0')}x`, `new${n}`)
          n++
        }
        return n
      })()
      const pages: KvView[] = []
      let start: Buffer = b('pg/')
      for (let page = 0; page < 20; page++) {
        const r = await h.log.range(start, { rangeEnd: end, revision: at, limit: 3 })
        expect(r.revision).to.equal(at)
        expect(r.count, `count of page ${page}`).to.equal(snapshot.length - pages.length)
        pages.push(...kvViews(r.kvs))
        if (!r.more) break
        start = Buffer.concat([r.kvs[r.kvs.length - 1]!.key, Buffer.from([0])])
        await new Promise((resolve) => setImmediate(resolve))
      }
      writing = false
      const written = await writer
      expect(written, 'writes ran during paging').to.be.greaterThan(0)
      expect(h.log.revision).to.be.greaterThan(at)
      expect(pages).to.deep.equal(snapshot)
      expect(kvViews((await h.log.range('pg/', { rangeEnd: end, revision: at })).kvs)).to.deep.equal(snapshot)
    })
  })
}
