/**
 * Indexes over the cache: namespace, labels ("k=v"), a label's value, custom functions; every change moves
 * the key between values; a late index files the objects already cached; checked against a brute-force
 * scan over random changes.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { Indexer, LABEL_INDEX, NAMESPACE_INDEX, Store, labelValueIndexFunc, type KubeObject } from '../../../clients/index.js'

function obj(
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
  rv = '1',
  extra: Record<string, unknown> = {},
): KubeObject {
  return { metadata: { namespace, name, labels, resourceVersion: rv }, ...extra }
}

describe('Indexer and Store indexes', () => {
  it('files objects by namespace and by each label, and moves them on update and delete', () => {
    const s = new Store()
    s.upsert(obj('a', 'x', { app: 'web', tier: 'front' }))
    s.upsert(obj('a', 'y', { app: 'db' }))
    s.upsert(obj('b', 'x', { app: 'web' }))
    expect(s.indexKeys(NAMESPACE_INDEX, 'a')).to.deep.equal(['a/x', 'a/y'])
    expect(s.indexKeys(LABEL_INDEX, 'app=web')).to.deep.equal(['a/x', 'b/x'])
    expect(s.indexValues(LABEL_INDEX)).to.deep.equal(['app=db', 'app=web', 'tier=front'])

    s.upsert(obj('a', 'x', { app: 'db' }, '2'))
    expect(s.indexKeys(LABEL_INDEX, 'app=web')).to.deep.equal(['b/x'])
    expect(s.indexKeys(LABEL_INDEX, 'app=db')).to.deep.equal(['a/x', 'a/y'])
    expect(s.indexValues(LABEL_INDEX)).to.deep.equal(['app=db', 'app=web'])

    expect(s.remove('a/y')?.metadata.name).to.equal('y')
    expect(s.remove('a/y')).to.equal(undefined)
    expect(s.byIndex(LABEL_INDEX, 'app=db').map((o) => o.metadata.name)).to.deep.equal(['x'])
    expect(s.indexKeys(NAMESPACE_INDEX, 'nope')).to.deep.equal([])
  })

  it('supports custom indexes, several values per object, and an index added after objects are cached', () => {
    const byNode = (o: KubeObject) => [String((o.spec as { node?: string } | undefined)?.node ?? '')].filter((v) => v !== '')
    const s = new Store<KubeObject>({ node: byNode })
    s.upsert(obj('a', 'p1', {}, '1', { spec: { node: 'n1' } }))
    s.upsert(obj('a', 'p2', {}, '1', { spec: { node: 'n2' } }))
    s.upsert(obj('a', 'p3', { app: 'web' }, '1', {}))
    expect(s.indexKeys('node', 'n1')).to.deep.equal(['a/p1'])
    expect(s.indexValues('node')).to.deep.equal(['n1', 'n2'])
    s.addIndex('app', labelValueIndexFunc('app'))
    expect(s.indexKeys('app', 'web')).to.deep.equal(['a/p3'])
    expect(() => s.addIndex('app', labelValueIndexFunc('app'))).to.throw(TypeError)
    expect(() => s.indexKeys('missing', 'x')).to.throw(TypeError)

    const multi = new Indexer<string[]>({ tags: (tags) => tags })
    multi.update('k', undefined, ['a', 'b', 'b'])
    multi.update('k', ['a', 'b', 'b'], ['b', 'c'])
    expect(multi.values('tags')).to.deep.equal(['b', 'c'])
    expect(multi.keys('tags', 'b')).to.deep.equal(['k'])
  })

  it('always equals a brute-force scan of the cache (random upserts and removes)', () => {
    const names = ['p', 'q', 'r', 's']
    const op = fc.record({
      del: fc.boolean(),
      ns: fc.constantFrom('a', 'b'),
      name: fc.constantFrom(...names),
      labels: fc.dictionary(fc.constantFrom('app', 'tier', 'env'), fc.constantFrom('1', '2')),
    })
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const s = new Store()
        for (const o of ops) {
          if (o.del) s.remove(`${o.ns}/${o.name}`)
          else s.upsert(obj(o.ns, o.name, o.labels))
        }
        const all = s.list()
        for (const v of ['app=1', 'app=2', 'tier=1', 'tier=2', 'env=1', 'env=2']) {
          const [k, val] = v.split('=')
          const expected = all.filter((o) => o.metadata.labels?.[k] === val).map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
          expect(s.indexKeys(LABEL_INDEX, v)).to.deep.equal(expected)
        }
        for (const ns of ['a', 'b'])
          expect(s.indexKeys(NAMESPACE_INDEX, ns)).to.deep.equal(
            all.filter((o) => o.metadata.namespace === ns).map((o) => `${ns}/${o.metadata.name}`),
          )
      }),
      { numRuns: 200 },
    )
  })
})
