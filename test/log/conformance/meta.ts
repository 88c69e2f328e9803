/**
 * meta records: written and read back, announced to onMeta listeners, and written on condition
 * (meta-condition.ts): only over the record with the expected `revision` field, else CONFLICT with the
 * record left as it was; of writes racing from the same revision exactly one wins. Alarms (kept with
 * them) are raised and cleared, and setting one to the state it is in writes nothing.
 */
import { expect } from 'chai'
import { expectCode, useLog, type SuiteContext } from './helpers.js'

export function metaTests(ctx: SuiteContext): void {
  describe('meta records', () => {
    const h = useLog(ctx)

    it('reads back what was written, tells onMeta listeners, and leaves the revision alone', async () => {
      const seen: Array<[string, unknown]> = []
      const off = h.log.onMeta?.((name, value) => seen.push([name, value]))
      const before = h.log.revision
      expect(await h.log.readMeta('conformance.m')).to.equal(undefined)
      await h.log.writeMeta('conformance.m', { revision: 1, a: [1, 2] })
      expect(await h.log.readMeta('conformance.m')).to.deep.equal({ revision: 1, a: [1, 2] })
      expect(h.log.revision).to.equal(before)
      if (off !== undefined) {
        expect(seen).to.deep.include(['conformance.m', { revision: 1, a: [1, 2] }])
        off()
      }
    })

    it('writes on condition only over the expected revision (a missing record counts as 0), else CONFLICT', async () => {
      await expectCode(() => h.log.writeMeta('conformance.c', { revision: 2 }, { ifRevision: 1 }), 'CONFLICT', 'absent is 0')
      expect(await h.log.readMeta('conformance.c')).to.equal(undefined)
      await h.log.writeMeta('conformance.c', { revision: 1, v: 'a' }, { ifRevision: 0 })
      await h.log.writeMeta('conformance.c', { revision: 2, v: 'b' }, { ifRevision: 1 })
      await expectCode(() => h.log.writeMeta('conformance.c', { revision: 2, v: 'stale' }, { ifRevision: 1 }), 'CONFLICT', 'stale')
      expect(await h.log.readMeta('conformance.c')).to.deep.equal({ revision: 2, v: 'b' })
    })

    it('raises and clears an alarm; setting it to the state it is in writes nothing (no stream message in a cluster)', async () => {
      /** The cluster's applied stream sequence, when there is one: a message would move it. */
      const applied = async () => (await h.log.status()).cluster?.applied
      // A cluster just opened may still be applying its members' joins: wait for this member's, then
      // until nothing moves.
      const joined = async () => {
        const c = (await h.log.status()).cluster
        return c === undefined || c.roster.includes(c.member)
      }
      for (let i = 0; i < 100 && !(await joined()); i++) await new Promise((r) => setTimeout(r, 100))
      for (let same = 0, last = await applied(); same < 5;) {
        await new Promise((r) => setTimeout(r, 100))
        const now = await applied()
        same = now === last ? same + 1 : 0
        last = now
      }
      expect(h.log.alarms()).to.deep.equal([])
      let before = await applied()
      await h.log.setAlarm('NOSPACE', false)
      expect(await applied()).to.equal(before)
      await h.log.setAlarm('NOSPACE', true)
      expect(h.log.alarms()).to.deep.equal(['NOSPACE'])
      before = await applied()
      await h.log.setAlarm('NOSPACE', true)
      expect(await applied()).to.equal(before)
      await h.log.setAlarm('NOSPACE', false)
      expect(h.log.alarms()).to.deep.equal([])
    })

    it('of writes racing from the same revision, exactly one is written', async () => {
      await h.log.writeMeta('conformance.r', { revision: 5 })
      const outcomes = await Promise.allSettled(
        ['x', 'y', 'z', 'w'].map((v) => h.log.writeMeta('conformance.r', { revision: 6, v }, { ifRevision: 5 })),
      )
      const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [['x', 'y', 'z', 'w'][i]] : []))
      expect(won).to.have.length(1)
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as { code?: string }).code).to.equal('CONFLICT')
      expect(await h.log.readMeta('conformance.r')).to.deep.equal({ revision: 6, v: won[0] })
    })
  })
}
