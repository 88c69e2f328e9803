/** delete: one key, a prefix, [key, rangeEnd), [key, ∞) with rangeEnd [0x00]; deleted counts and prevKvs. */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import { b, kvViews, putMany, rangeAll, useLog, ZERO, type SuiteContext } from './helpers.js'

const KEYS = ['a', 'b', 'b/1', 'b/2', 'b/3', 'b0', 'c', 'd']

export function deleteTests(ctx: SuiteContext): void {
  describe('delete', () => {
    const h = useLog(ctx)
    beforeEach(async () => {
      await putMany(
        h.log,
        KEYS.map((k) => [k, `v-${k}`]),
      )
    })
    const remaining = async (): Promise<string[]> => (await rangeAll(h.log)).kvs.map((kv) => kv.key.toString())

    it('deletes one key, reporting deleted = 1 and its prevKv when asked', async () => {
      const before = (await h.log.get('b'))!
      const rev = h.log.revision
      const r = await h.log.delete('b', { prevKv: true })
      expect(r.deleted).to.equal(1)
      expect(r.wrote).to.equal(true)
      expect(r.revision).to.equal(rev + 1)
      expect(kvViews(r.prevKvs ?? [])).to.deep.equal(kvViews([before]))
      expect(await remaining()).to.deep.equal(KEYS.filter((k) => k !== 'b'))
      expect(await h.log.get('b')).to.equal(undefined)
      expect((await h.log.get('b', { revision: rev }))?.value.toString()).to.equal('v-b')
    })

    it('leaves prevKvs out unless asked', async () => {
      const r = await h.log.delete('a')
      expect(r.deleted).to.equal(1)
      expect(r.prevKvs === undefined || r.prevKvs.length === 0).to.equal(true)
    })

    it('deletes a prefix with rangeEnd = prefixEnd(prefix), in one revision', async () => {
      const before = (await h.log.range('b/', { rangeEnd: prefixEnd('b/') })).kvs
      const rev = h.log.revision
      const r = await h.log.delete('b/', { rangeEnd: prefixEnd('b/'), prevKv: true })
      expect(r.deleted).to.equal(3)
      expect(r.revision).to.equal(rev + 1)
      expect(kvViews(r.prevKvs ?? [])).to.deep.equal(kvViews(before))
      expect(await remaining()).to.deep.equal(['a', 'b', 'b0', 'c', 'd'])
      const hist = await h.log.history('b/', { rangeEnd: prefixEnd('b/'), fromRevision: rev + 1 })
      expect(hist.entries).to.have.length(1)
      expect(hist.entries[0]!.events.map((e) => [e.type, e.kv.key.toString()])).to.deep.equal([
        ['DELETE', 'b/1'],
        ['DELETE', 'b/2'],
        ['DELETE', 'b/3'],
      ])
    })

    it('deletes the half-open interval [key, rangeEnd)', async () => {
      const r = await h.log.delete('b/2', { rangeEnd: 'c' })
      expect(r.deleted).to.equal(3)
      expect(await remaining()).to.deep.equal(['a', 'b', 'b/1', 'c', 'd'])
    })

    it('deletes every key >= key with rangeEnd [0x00]', async () => {
      const r = await h.log.delete('b0', { rangeEnd: ZERO })
      expect(r.deleted).to.equal(3)
      expect(await remaining()).to.deep.equal(['a', 'b', 'b/1', 'b/2', 'b/3'])
    })

    it('deletes every key with key [0x00] and rangeEnd [0x00]', async () => {
      const rev = h.log.revision
      const r = await h.log.delete(ZERO, { rangeEnd: ZERO })
      expect(r.deleted).to.equal(KEYS.length)
      expect(r.revision).to.equal(rev + 1)
      expect(await remaining()).to.deep.equal([])
      expect((await rangeAll(h.log, rev)).count).to.equal(KEYS.length)
    })

    it('handles a prefix of 0xff bytes (prefixEnd = [0x00])', async () => {
      await h.log.put(Buffer.from([0xff, 0x01]), 'x')
      await h.log.put(Buffer.from([0xff, 0xff, 0x02]), 'y')
      const r = await h.log.delete(Buffer.from([0xff]), { rangeEnd: prefixEnd(Buffer.from([0xff])) })
      expect(r.deleted).to.equal(2)
      expect(await remaining()).to.deep.equal(KEYS)
      expect(Buffer.from(prefixEnd(b('b/'))).toString()).to.equal('b0')
    })
  })
}
