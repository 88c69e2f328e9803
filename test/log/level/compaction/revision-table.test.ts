/**
 * log/level/compaction/revision-table.ts: the same answers as a Map under random sets and deletes (dense, strided and
 * large revisions, through several growths), and deletion by backward shift keeps every entry reachable.
 */
import { expect } from 'chai'
import { RevisionTable } from '../../../../log/level/compaction/revision-table.js'
import { rng } from '../../../support/random.js'

const SEED = 20261123

describe('log/revision-table: RevisionTable', () => {
  for (const [name, revisionOf] of [
    ['dense revisions', (r: () => number) => 1 + Math.floor(r() * 5000)],
    ['revisions 1,024 apart (one hash bucket pattern)', (r: () => number) => 1024 * (1 + Math.floor(r() * 3000))],
    ['revisions above 2^32', (r: () => number) => 2 ** 32 + Math.floor(r() * 5000) * 2 ** 20],
  ] as const) {
    it(`agrees with a Map over 60,000 random operations: ${name} (seed ${SEED})`, () => {
      const random = rng(SEED)
      const table = new RevisionTable()
      const model = new Map<number, number>()
      for (let i = 0; i < 60_000; i++) {
        const rev = revisionOf(random)
        const op = random()
        if (op < 0.55) {
          const value = Math.floor(random() * 2 ** 31)
          table.set(rev, value)
          model.set(rev, value)
        } else if (op < 0.9) {
          expect(table.delete(rev), `delete ${rev} at step ${i}`).to.equal(model.delete(rev))
        } else {
          expect(table.get(rev), `get ${rev} at step ${i}`).to.equal(model.get(rev))
        }
        expect(table.size).to.equal(model.size)
      }
      for (const [rev, value] of model) expect(table.get(rev), `${rev} at the end`).to.equal(value)
      for (let rev = 1; rev < 5000; rev++) expect(table.has(rev)).to.equal(model.has(rev))
    })
  }

  it('finds every entry after deleting from the middle of long probe runs', () => {
    const table = new RevisionTable()
    const revs = Array.from({ length: 20_000 }, (_, i) => i + 1)
    for (const rev of revs) table.set(rev, rev % 1000)
    for (const rev of revs) if (rev % 3 === 0) table.delete(rev)
    for (const rev of revs) expect(table.get(rev)).to.equal(rev % 3 === 0 ? undefined : rev % 1000)
    expect(table.size).to.equal(20_000 - Math.floor(20_000 / 3))
  })

  it('refuses revision 0 (it marks a free slot), and clear() forgets everything', () => {
    const table = new RevisionTable()
    expect(() => table.set(0, 1)).to.throw(RangeError)
    table.set(7, 1)
    table.clear()
    expect([table.size, table.get(7)]).to.deep.equal([0, undefined])
  })
})
