/**
 * The relist diff: added, updated (a different resourceVersion), unchanged (the same), and deleted as
 * DeletedFinalStateUnknown tombstones carrying the last state seen; Store.replace makes the cache equal to
 * the list.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { DeletedFinalStateUnknown, Store, diffList, objectKey, type KubeObject } from '../../../clients/index.js'

const o = (name: string, rv: string, namespace = 'ns'): KubeObject => ({ metadata: { namespace, name, resourceVersion: rv } })

describe('diffList and Store.replace (relist)', () => {
  it('sorts a relist into added, updated, unchanged and deleted-with-final-state-unknown', () => {
    const cached = new Map([o('keep', '3'), o('change', '4'), o('gone', '5'), o('gone2', '6', 'other')].map((x) => [objectKey(x), x]))
    const d = diffList(cached, [o('keep', '3'), o('change', '9'), o('new', '10')])
    expect(d.added.map(objectKey)).to.deep.equal(['ns/new'])
    expect(d.updated.map((u) => [u.old.metadata.resourceVersion, u.object.metadata.resourceVersion])).to.deep.equal([['4', '9']])
    expect(d.unchanged).to.equal(1)
    expect(d.deleted.map((t) => t.key)).to.deep.equal(['ns/gone', 'other/gone2'])
    for (const t of d.deleted) {
      expect(t).to.be.instanceOf(DeletedFinalStateUnknown)
      expect(t.finalStateUnknown).to.equal(true)
      expect(t.object).to.equal(cached.get(t.key))
    }
  })

  it('compares objects without a resourceVersion by content', () => {
    const a: KubeObject = { metadata: { name: 'a' }, data: { x: '1' } }
    const d = diffList(new Map([['a', a]]), [{ metadata: { name: 'a' }, data: { x: '1' } }, { metadata: { name: 'b' } }])
    expect(d.unchanged).to.equal(1)
    const d2 = diffList(new Map([['a', a]]), [{ metadata: { name: 'a' }, data: { x: '2' } }])
    expect(d2.updated).to.have.length(1)
  })

  it('Store.replace: the cache equals the list afterwards, and applying the diff to the old cache gives the same', () => {
    const item = fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd', 'e'), rv: fc.constantFrom('1', '2', '3') })
    const uniqueList = fc.uniqueArray(item, { selector: (x) => x.name, maxLength: 5 })
    fc.assert(
      fc.property(uniqueList, uniqueList, (before, after) => {
        const s = new Store()
        s.replace(before.map((x) => o(x.name, x.rv)))
        const snapshot = new Map(s.list().map((x) => [objectKey(x), x]))
        const d = s.replace(after.map((x) => o(x.name, x.rv)))
        const expected = after.map((x) => `ns/${x.name}@${x.rv}`).sort()
        expect(s.list().map((x) => `${objectKey(x)}@${x.metadata.resourceVersion}`)).to.deep.equal(expected)
        // Replaying the diff's events on the old cache reaches the same state.
        for (const t of d.deleted) snapshot.delete(t.key)
        for (const x of d.added) snapshot.set(objectKey(x), x)
        for (const u of d.updated) snapshot.set(objectKey(u.object), u.object)
        expect([...snapshot.values()].map((x) => `${objectKey(x)}@${x.metadata.resourceVersion}`).sort()).to.deep.equal(expected)
        expect(d.added.length + d.updated.length + d.unchanged).to.equal(after.length)
        expect(s.indexKeys('namespace', 'ns')).to.deep.equal(after.map((x) => `ns/${x.name}`).sort())
      }),
      { numRuns: 200 },
    )
  })
})
