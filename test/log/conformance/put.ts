/** put: versions, create/mod revisions, prevKv, ignoreValue/ignoreLease, leases, byte keys. */
import { expect } from 'chai'
import { expectCode, kvView, useLog, type SuiteContext } from './helpers.js'

export function putTests(ctx: SuiteContext): void {
  describe('put', () => {
    const h = useLog(ctx)

    it('creates with version 1, adds 1 per put, keeps createRevision, sets modRevision to the revision', async () => {
      const r1 = await h.log.put('k', 'v1')
      expect(kvView((await h.log.get('k'))!)).to.deep.equal({
        key: 'k',
        value: 'v1',
        createRevision: r1.revision,
        modRevision: r1.revision,
        version: 1,
        lease: '0',
      })
      await h.log.put('other', 'x')
      const r2 = await h.log.put('k', 'v2')
      const r3 = await h.log.put('k', 'v3')
      expect(kvView((await h.log.get('k'))!)).to.deep.equal({
        key: 'k',
        value: 'v3',
        createRevision: r1.revision,
        modRevision: r3.revision,
        version: 3,
        lease: '0',
      })
      expect(kvView((await h.log.get('k', { revision: r2.revision }))!)).to.deep.equal({
        key: 'k',
        value: 'v2',
        createRevision: r1.revision,
        modRevision: r2.revision,
        version: 2,
        lease: '0',
      })
    })

    it('restarts version at 1 with a new createRevision after delete and re-put', async () => {
      await h.log.put('k', 'a')
      await h.log.put('k', 'b')
      const del = await h.log.delete('k')
      expect(del.deleted).to.equal(1)
      expect(await h.log.get('k')).to.equal(undefined)
      const again = await h.log.put('k', 'c')
      expect(kvView((await h.log.get('k'))!)).to.deep.equal({
        key: 'k',
        value: 'c',
        createRevision: again.revision,
        modRevision: again.revision,
        version: 1,
        lease: '0',
      })
    })

    it('returns prevKv only when asked, and none for a new key', async () => {
      const fresh = await h.log.put('k', 'a', { prevKv: true })
      expect(fresh.prevKv).to.equal(undefined)
      const before = (await h.log.get('k'))!
      const second = await h.log.put('k', 'b', { prevKv: true })
      expect(kvView(second.prevKv!)).to.deep.equal(kvView(before))
      const third = await h.log.put('k', 'c')
      expect(third.prevKv).to.equal(undefined)
    })

    it('ignoreValue keeps the value and ignoreLease keeps the lease of an existing key', async () => {
      const r1 = await h.log.put('k', 'keep')
      const r2 = await h.log.put('k', '', { ignoreValue: true })
      expect(kvView((await h.log.get('k'))!)).to.deep.equal({
        key: 'k',
        value: 'keep',
        createRevision: r1.revision,
        modRevision: r2.revision,
        version: 2,
        lease: '0',
      })
      const r3 = await h.log.put('k', 'new', { ignoreLease: true })
      expect(kvView((await h.log.get('k'))!)).to.deep.equal({
        key: 'k',
        value: 'new',
        createRevision: r1.revision,
        modRevision: r3.revision,
        version: 3,
        lease: '0',
      })
    })

    it('rejects ignoreValue / ignoreLease on a missing key with KEY_NOT_FOUND and writes nothing', async () => {
      const rev = h.log.revision
      await expectCode(() => h.log.put('missing', '', { ignoreValue: true }), 'KEY_NOT_FOUND', 'ignoreValue')
      await expectCode(() => h.log.put('missing', 'v', { ignoreLease: true }), 'KEY_NOT_FOUND', 'ignoreLease')
      await expectCode(
        () => h.log.txn({ success: [{ type: 'put', key: 'missing', ignoreValue: true }] }),
        'KEY_NOT_FOUND',
        'ignoreValue in a txn',
      )
      expect(h.log.revision).to.equal(rev)
      expect(await h.log.get('missing')).to.equal(undefined)
      expect((await h.log.put('ok', 'v')).revision).to.equal(rev + 1)
    })

    it('rejects a lease that does not exist with LEASE_NOT_FOUND (bigint and number ids)', async () => {
      const rev = h.log.revision
      await expectCode(() => h.log.put('k', 'v', { lease: 12345n }), 'LEASE_NOT_FOUND', 'bigint lease')
      await expectCode(() => h.log.put('k', 'v', { lease: 7 }), 'LEASE_NOT_FOUND', 'number lease')
      await expectCode(() => h.log.put('k', 'v', { lease: 2n ** 63n - 1n }), 'LEASE_NOT_FOUND', 'lease above 2^53')
      expect(h.log.revision).to.equal(rev)
      expect(await h.log.get('k')).to.equal(undefined)
      const ok = await h.log.put('k', 'v', { lease: 0n })
      expect(ok.revision).to.equal(rev + 1)
      expect((await h.log.get('k'))!.lease).to.equal(0n)
    })

    it('round-trips arbitrary bytes in keys and values', async () => {
      const key = Buffer.from([0x00, 0xff, 0x80, 0x0a, 0xfe])
      const value = Buffer.from([0xff, 0x00, 0x00, 0xc3, 0x28])
      await h.log.put(key, value)
      const kv = (await h.log.get(key))!
      expect(kv.key.equals(key)).to.equal(true)
      expect(kv.value.equals(value)).to.equal(true)
      await h.log.put('empty-value', '')
      expect((await h.log.get('empty-value'))!.value.length).to.equal(0)
      expect((await h.log.get(Buffer.from('empty-value')))!.version).to.equal(1)
    })
  })
}
