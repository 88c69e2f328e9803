/**
 * JSON merge patch (RFC 7386), strategic merge patch as merge patch, and JSON patch (RFC 6902): unit
 * tests of apiserver/resources/patch.ts, including the RFC 6902 appendix examples that matter.
 */
import { expect } from 'chai'
import { isKvlogError } from '../../../log/errors.js'
import { applyPatch, jsonPatch, mergePatch, patchType } from '../../../apiserver/resources/patch.js'

describe('resource patches', () => {
  it('merge patch: objects merge, null deletes, arrays and scalars replace', () => {
    expect(mergePatch({ a: 'b', c: { d: 'e', f: 'g' } }, { a: 'z', c: { f: null } })).to.deep.equal({ a: 'z', c: { d: 'e' } })
    expect(mergePatch({ a: [1, 2] }, { a: [3] })).to.deep.equal({ a: [3] })
    expect(mergePatch({ a: 'x' }, { a: { b: 'c' } })).to.deep.equal({ a: { b: 'c' } })
    expect(mergePatch({ a: { b: 1 } }, { a: { c: null } })).to.deep.equal({ a: { b: 1 } })
  })

  it('strategic merge patch drops $-directives and merges like a merge patch', () => {
    const out = applyPatch(
      'application/strategic-merge-patch+json',
      { spec: { x: 1, list: [1] } },
      { spec: { list: [2], $retainKeys: ['x'], y: 2 }, '$setElementOrder/containers': [] },
    )
    expect(out).to.deep.equal({ spec: { x: 1, list: [2], y: 2 } })
  })

  it('JSON patch: add, remove, replace, move, copy, test; arrays by index and "-"; escaped pointers', () => {
    const doc = { a: { b: [1, 2] }, 'x/y': { '~z': 1 } }
    const out = jsonPatch(doc, [
      { op: 'add', path: '/a/b/1', value: 9 },
      { op: 'add', path: '/a/b/-', value: 3 },
      { op: 'remove', path: '/a/b/0' },
      { op: 'replace', path: '/x~1y/~0z', value: 2 },
      { op: 'copy', from: '/a/b', path: '/c' },
      { op: 'move', from: '/c', path: '/d' },
      { op: 'test', path: '/d', value: [9, 2, 3] },
    ])
    expect(out).to.deep.equal({ a: { b: [9, 2, 3] }, 'x/y': { '~z': 2 }, d: [9, 2, 3] })
    expect(doc.a.b, 'the input is not changed').to.deep.equal([1, 2])
  })

  it('JSON patch errors are INVALID_ARGUMENT and leave the document alone', () => {
    const bad: unknown[] = [
      {},
      [{ op: 'nope', path: '/a' }],
      [{ op: 'remove', path: '/missing' }],
      [{ op: 'add', path: 'no-slash', value: 1 }],
      [{ op: 'add', path: '/a/b/7', value: 1 }],
      [{ op: 'test', path: '/a', value: 2 }],
      [{ op: 'move', from: '/a', path: '/a/b' }],
      [{ op: 'add', path: '/x' }],
      [{ op: 'replace', path: '/zzz', value: 1 }],
    ]
    for (const patch of bad) {
      let err: unknown
      try {
        jsonPatch({ a: { b: [1] } }, patch)
      } catch (e) {
        err = e
      }
      expect(isKvlogError(err, 'INVALID_ARGUMENT'), JSON.stringify(patch)).to.equal(true)
    }
  })

  it('patch types: the three JSON ones; anything else (server-side apply) is UNSUPPORTED_MEDIA_TYPE', () => {
    expect(patchType('application/merge-patch+json; charset=utf-8')).to.equal('application/merge-patch+json')
    expect(patchType('application/json-patch+json')).to.equal('application/json-patch+json')
    expect(() => patchType('application/apply-patch+yaml'))
      .to.throw()
      .that.satisfies((e: unknown) => isKvlogError(e, 'UNSUPPORTED_MEDIA_TYPE'))
  })
})
