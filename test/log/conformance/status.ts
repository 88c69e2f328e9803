/** status: revision, compact revision, database size and the segment table (tiny segments roll over). */
import { expect } from 'chai'
import type { LogStatus } from '../../../log/types.js'
import { useLog, type SuiteContext } from './helpers.js'

/** Segments are ordered, contiguous, within the entry limit, and cover firstRevision..revision one entry each. */
function checkSegments(st: LogStatus, maxEntries: number, firstRevision: number): void {
  const segs = [...st.segments]
  expect(segs.length).to.be.greaterThan(0)
  expect(segs[0]!.firstRevision, 'first segment starts at the first entry').to.equal(firstRevision)
  expect(segs[segs.length - 1]!.lastRevision, 'last segment ends at the current revision').to.equal(st.revision)
  let total = 0
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!
    expect(s.lastRevision, `segment ${s.id}`).to.be.at.least(s.firstRevision)
    expect(s.entries, `entries of segment ${s.id}`).to.equal(s.lastRevision - s.firstRevision + 1)
    expect(s.entries, `segment ${s.id} within segmentMaxEntries`).to.be.at.most(maxEntries)
    expect(s.bytes, `bytes of segment ${s.id}`).to.be.greaterThan(0)
    expect(s.lastTimestamp, `timestamps of segment ${s.id}`).to.be.at.least(s.firstTimestamp)
    if (i > 0) {
      const prev = segs[i - 1]!
      expect(s.firstRevision, `segment ${s.id} follows ${prev.id}`).to.equal(prev.lastRevision + 1)
      expect(s.id, 'segment ids increase').to.be.greaterThan(prev.id)
      expect(s.firstTimestamp).to.be.at.least(prev.lastTimestamp)
    }
    total += s.entries
  }
  expect(total, 'entries sum to the revisions covered').to.equal(st.revision - firstRevision + 1)
}

export function statusTests(ctx: SuiteContext): void {
  describe('status', () => {
    const h = useLog(ctx)

    it('reports revision, compact revision, a positive dbSize and a format version', async () => {
      const empty = await h.log.status()
      expect(empty.revision).to.equal(1)
      expect(empty.compactRevision).to.equal(h.log.compactRevision)
      for (let i = 0; i < 6; i++) await h.log.put(`k${i}`, 'v'.repeat(100))
      const st = await h.log.status()
      expect(st.revision).to.equal(7)
      expect(st.revision).to.equal(h.log.revision)
      expect(st.dbSize).to.be.greaterThan(0)
      expect(st.formatVersion).to.be.a('number')
      await h.log.compact(4)
      const after = await h.log.status()
      expect(after.compactRevision).to.equal(4)
      expect(after.compaction, 'no compaction left in progress').to.equal(undefined)
    })

    it('rolls the log over into segments of at most segmentMaxEntries that are contiguous', async () => {
      const max = ctx.limits.segmentMaxEntries
      const n = max * 3 + 2
      for (let i = 0; i < n; i++) await h.log.put(`k${i % 4}`, `${i}`)
      const st = await h.log.status()
      expect(st.segments.length).to.be.at.least(Math.ceil(n / max))
      checkSegments(st, max, 2)
      await Promise.all(Array.from({ length: max * 2 }, (_, i) => h.log.put(`c${i}`, 'x')))
      checkSegments(await h.log.status(), max, 2)
      const log = await h.reopen()
      const reopened = await log.status()
      checkSegments(reopened, max, 2)
      for (let i = 0; i < max + 1; i++) await log.put('after', `${i}`)
      checkSegments(await log.status(), max, 2)
    })
  })
}
