/** close: waits for queued writes, then every call fails with CLOSED. */
import { expect } from 'chai'
import { expectCode, rangeAll, useLog, type SuiteContext } from './helpers.js'

export function closeTests(ctx: SuiteContext): void {
  describe('close', () => {
    const h = useLog(ctx)

    it('rejects every later call with CLOSED', async () => {
      await h.log.put('a', '1')
      const log = h.log
      await log.close()
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['put', () => log.put('a', '2')],
        ['delete', () => log.delete('a')],
        ['get', () => log.get('a')],
        ['range', () => log.range('a')],
        ['txn', () => log.txn({ success: [{ type: 'range', key: 'a' }] })],
        ['history', () => log.history('a')],
        ['compact', () => log.compact(1)],
        ['status', () => log.status()],
      ]
      for (const [what, call] of calls) await expectCode(call, 'CLOSED', what)
    })

    it('finishes writes queued before close, which are then durable', async () => {
      const pending = Array.from({ length: 25 }, (_, i) => h.log.put(`q${i}`, `${i}`))
      const closing = h.log.close()
      const results = await Promise.allSettled(pending)
      await closing
      const failed = results.filter((r) => r.status === 'rejected')
      expect(failed, 'writes queued before close all succeed').to.deep.equal([])
      const log = await h.reopen()
      expect(log.revision).to.equal(26)
      expect((await rangeAll(log)).count).to.equal(25)
    })
  })
}
