/**
 * leases: grant (store-chosen and client-chosen ids, minimum TTL, limits), attach by put, revoke deletes the
 * attached keys in one revision, keep-alive, time-to-live with keys, expiry, and leases across a reopen.
 * The backend is opened with leaseMinTtl 1 s and a fast expiry check (ConformanceLimits).
 */
import { expect } from 'chai'
import type { LogEntry } from '../../../log/types.js'
import { b, expectCode, useLog, type SuiteContext } from './helpers.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export function leaseTests(ctx: SuiteContext): void {
  describe('leases', () => {
    const h = useLog(ctx)
    const keysOf = (id: bigint) => (h.log.leaseTimeToLive(id, { keys: true })?.keys ?? []).map(String)

    it('grants with a store-chosen positive 63-bit id, or the id asked for', async () => {
      const a = await h.log.leaseGrant(60)
      expect(a.id > 0n && a.id < 1n << 63n).to.equal(true)
      expect(a.ttl).to.equal(60)
      const c = await h.log.leaseGrant(60, 0x7fff_ffff_ffff_fff0n)
      expect(c.id).to.equal(0x7fff_ffff_ffff_fff0n)
      expect(h.log.leases().sort()).to.deep.equal([a.id, c.id].sort())
      await expectCode(() => h.log.leaseGrant(60, c.id), 'LEASE_EXISTS')
      await expectCode(() => h.log.leaseGrant(9_000_000_001), 'LEASE_TTL_TOO_LARGE')
      await expectCode(() => h.log.leaseGrant(60, -1n), 'INVALID_ARGUMENT')
    })

    it('raises a TTL below the minimum to the minimum; a grant gets no revision', async () => {
      const rev = h.log.revision
      const g = await h.log.leaseGrant(0)
      expect(g.ttl).to.equal(ctx.limits.leaseMinTtl)
      expect(h.log.revision).to.equal(rev)
    })

    it('refuses a put with a lease that does not exist, and leaves no trace', async () => {
      const rev = h.log.revision
      await expectCode(() => h.log.put('k', 'v', { lease: 12345n }), 'LEASE_NOT_FOUND')
      expect(h.log.revision).to.equal(rev)
      expect(await h.log.get('k')).to.equal(undefined)
    })

    it('revoke deletes every attached key in one revision, with DELETE events', async () => {
      const { id } = await h.log.leaseGrant(60)
      await h.log.put('a', '1', { lease: id })
      await h.log.txn({
        success: [
          { type: 'put', key: 'b', value: '2', lease: id },
          { type: 'put', key: 'c', value: '3' },
        ],
      })
      expect(keysOf(id)).to.deep.equal(['a', 'b'])
      expect((await h.log.get('a'))!.lease).to.equal(id)
      const entries: LogEntry[] = []
      const unsubscribe = h.log.subscribe((e) => entries.push(...e))
      const rev = h.log.revision
      const r = await h.log.leaseRevoke(id)
      unsubscribe()
      expect(r.revision).to.equal(rev + 1)
      expect(entries.map((e) => e.revision)).to.deep.equal([rev + 1])
      expect(entries[0].events.map((e) => [e.type, String(e.kv.key)])).to.deep.equal([
        ['DELETE', 'a'],
        ['DELETE', 'b'],
      ])
      expect(await h.log.get('a')).to.equal(undefined)
      expect((await h.log.get('c'))!.value.toString()).to.equal('3')
      expect(h.log.leaseTimeToLive(id)).to.equal(undefined)
      await expectCode(() => h.log.leaseRevoke(id), 'LEASE_NOT_FOUND')
      await expectCode(() => h.log.put('a', 'again', { lease: id }), 'LEASE_NOT_FOUND')
    })

    it('revoke of a lease without keys writes no revision', async () => {
      const { id } = await h.log.leaseGrant(60)
      const rev = h.log.revision
      expect((await h.log.leaseRevoke(id)).revision).to.equal(rev)
    })

    it('follows keys that move to another lease, lose their lease or are deleted', async () => {
      const one = (await h.log.leaseGrant(60)).id
      const two = (await h.log.leaseGrant(60)).id
      await h.log.put('moved', 'x', { lease: one })
      await h.log.put('dropped', 'x', { lease: one })
      await h.log.put('deleted', 'x', { lease: one })
      await h.log.put('kept', 'x', { lease: one })
      await h.log.put('moved', 'y', { lease: two })
      await h.log.put('dropped', 'y')
      await h.log.delete('deleted')
      await h.log.put('kept', 'y', { ignoreLease: true })
      expect(keysOf(one)).to.deep.equal(['kept'])
      expect(keysOf(two)).to.deep.equal(['moved'])
      await h.log.leaseRevoke(one)
      expect((await h.log.range('a', { rangeEnd: '~' })).kvs.map((kv) => String(kv.key))).to.deep.equal(['dropped', 'moved'])
    })

    it('a revoke queued right behind the put that attaches a key deletes that key too', async () => {
      const { id } = await h.log.leaseGrant(60)
      const put = h.log.put('late', 'v', { lease: id })
      const revoke = h.log.leaseRevoke(id)
      const putAfter = h.log.put('after', 'v', { lease: id })
      const [p, r] = await Promise.all([put, revoke])
      expect(r.revision).to.equal(p.revision + 1)
      expect(await h.log.get('late')).to.equal(undefined)
      await expectCode(() => putAfter, 'LEASE_NOT_FOUND')
    })

    it('keep-alive restarts the deadline; time-to-live counts down', async () => {
      const { id } = await h.log.leaseGrant(5)
      const t = h.log.leaseTimeToLive(id)!
      expect(t.grantedTtl).to.equal(5)
      expect(t.ttl).to.be.within(4, 5)
      await sleep(1100)
      expect(h.log.leaseTimeToLive(id)!.ttl).to.be.within(3, 4)
      expect(await h.log.leaseKeepAlive(id)).to.deep.equal({ id, ttl: 5 })
      expect(h.log.leaseTimeToLive(id)!.ttl).to.be.within(4, 5)
      await expectCode(() => h.log.leaseKeepAlive(999n), 'LEASE_NOT_FOUND')
    })

    it('an expired lease is revoked by the store: its keys are deleted', async () => {
      const { id } = await h.log.leaseGrant(ctx.limits.leaseMinTtl)
      await h.log.put('short', 'v', { lease: id })
      const deadline = Date.now() + ctx.limits.leaseMinTtl * 1000 + 3000
      while ((await h.log.get('short')) !== undefined) {
        expect(Date.now()).to.be.below(deadline, 'the lease did not expire')
        await sleep(50)
      }
      expect(h.log.leases()).to.not.include(id)
    })

    it('leases, their deadlines and attached keys survive a reopen; one that expired meanwhile is revoked', async () => {
      const long = (await h.log.leaseGrant(60)).id
      const short = (await h.log.leaseGrant(ctx.limits.leaseMinTtl)).id
      await h.log.put('l1', 'v', { lease: long })
      await h.log.put('l2', 'v', { lease: long })
      await h.log.put('s', 'v', { lease: short })
      const before = h.log.leaseTimeToLive(long)!
      await h.log.close()
      await sleep(ctx.limits.leaseMinTtl * 1000 + 100)
      const log = await h.reopen()
      const after = log.leaseTimeToLive(long, { keys: true })!
      expect(after.grantedTtl).to.equal(60)
      expect(after.ttl).to.be.at.most(before.ttl)
      expect(after.keys!.map(String)).to.deep.equal(['l1', 'l2'])
      const deadline = Date.now() + 3000
      while ((await log.get('s')) !== undefined) {
        expect(Date.now()).to.be.below(deadline, 'the lease that expired while closed was not revoked')
        await sleep(50)
      }
      await log.leaseRevoke(long)
      expect((await log.range('a', { rangeEnd: '~' })).count).to.equal(0)
    })

    it('a revoke of a lease with more keys than maxTxnOps still deletes them all in one revision', async () => {
      const { id } = await h.log.leaseGrant(60)
      const n = ctx.limits.maxTxnOps * 2 + 1
      for (let i = 0; i < n; i++) await h.log.put(`k${String(i).padStart(3, '0')}`, 'v', { lease: id })
      const rev = h.log.revision
      expect((await h.log.leaseRevoke(id)).revision).to.equal(rev + 1)
      expect((await h.log.range(b('k'), { rangeEnd: b('l') })).count).to.equal(0)
    })
  })
}
