/** subscribe: listeners get committed entries in revision order, with events and prevKvs; unsubscribe stops them. */
import { expect } from 'chai'
import type { LogEntry } from '../../../log/types.js'
import { entryViews, historyAll, useLog, type SuiteContext } from './helpers.js'

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export function subscribeTests(ctx: SuiteContext): void {
  describe('subscribe', () => {
    const h = useLog(ctx)

    it('delivers every committed entry once, in revision order, after commit, with prevKvs', async () => {
      await h.log.put('pre', 'existing')
      const start = h.log.revision
      const seen: LogEntry[] = []
      const lagging: string[] = []
      const unsubscribe = h.log.subscribe((entries) => {
        for (const e of entries) {
          if (h.log.revision < e.revision) lagging.push(`entry ${e.revision} published while the log says ${h.log.revision}`)
          seen.push(e)
        }
      })
      await h.log.put('a', '1')
      await h.log.put('pre', 'changed')
      await h.log.txn({
        success: [
          { type: 'put', key: 'b', value: '2' },
          { type: 'delete', key: 'a' },
        ],
      })
      await h.log.delete('missing')
      await h.log.txn({ success: [{ type: 'range', key: 'b' }] })
      await Promise.all(Array.from({ length: 30 }, (_, i) => h.log.put(`c${i % 4}`, `${i}`)))
      await tick()
      expect(lagging).to.deep.equal([])
      expect(seen.map((e) => e.revision)).to.deep.equal(Array.from({ length: 33 }, (_, i) => start + 1 + i))
      expect(entryViews(seen)).to.deep.equal(entryViews(await historyAll(h.log, start + 1, undefined, true)))
      const prev = seen[1]!.events[0]!
      expect(prev.prevKv?.value.toString()).to.equal('existing')
      const txn = seen[2]!.events
      expect(txn.map((e) => e.type)).to.deep.equal(['PUT', 'DELETE'])
      expect(txn[1]!.prevKv?.value.toString()).to.equal('1')
      unsubscribe()
    })

    it('has delivered an acknowledged write by the time its caller resumes (or within a tick)', async () => {
      const seen: number[] = []
      h.log.subscribe((entries) => {
        for (const e of entries) seen.push(e.revision)
      })
      const w = await h.log.put('k', 'v')
      await tick()
      expect(seen).to.include(w.revision)
    })

    it('stops delivering after unsubscribe, without affecting other listeners', async () => {
      const a: number[] = []
      const b: number[] = []
      const stopA = h.log.subscribe((entries) => a.push(...entries.map((e) => e.revision)))
      const stopB = h.log.subscribe((entries) => b.push(...entries.map((e) => e.revision)))
      const r1 = await h.log.put('k', '1')
      await tick()
      stopA()
      const r2 = await h.log.put('k', '2')
      await tick()
      expect(a).to.deep.equal([r1.revision])
      expect(b).to.deep.equal([r1.revision, r2.revision])
      stopB()
      stopB()
      await h.log.put('k', '3')
      await tick()
      expect(b).to.deep.equal([r1.revision, r2.revision])
    })
  })
}
