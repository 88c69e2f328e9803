/**
 * Label and field selector parsing and matching (unit tests, no server).
 */
import { expect } from 'chai'
import { isKvlogError } from '../../../log/errors.js'
import type { K8sObject } from '../../../apiserver/resources/k8s-object.js'
import { parseFieldSelector, parseLabelSelector } from '../../../apiserver/resources/selectors.js'

const obj = (name: string, labels: Record<string, string>, namespace = 'ns'): K8sObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels },
})
const OBJECTS = [
  obj('a', { app: 'web', env: 'prod', n: '5' }),
  obj('b', { app: 'web', env: 'dev' }),
  obj('c', { app: 'db', 'example.com/tier': 'back', n: '-2' }),
  obj('d', {}, 'other'),
]
const select = (label: string) => OBJECTS.filter((o) => parseLabelSelector(label).matches(o)).map((o) => o.metadata.name)

describe('resource selectors', () => {
  it('match equality, set-based, existence and numeric requirements', () => {
    expect(select('')).to.deep.equal(['a', 'b', 'c', 'd'])
    expect(select('app=web')).to.deep.equal(['a', 'b'])
    expect(select(' app == web , env != dev ')).to.deep.equal(['a'])
    expect(select('env in (prod,dev),app notin (db)')).to.deep.equal(['a', 'b'])
    expect(select('example.com/tier')).to.deep.equal(['c'])
    expect(select('!app')).to.deep.equal(['d'])
    expect(select('n>0')).to.deep.equal(['a'])
    expect(select('n<0')).to.deep.equal(['c'])
    expect(select('app=')).to.deep.equal([])
    expect(select('app!=')).to.deep.equal(['a', 'b', 'c', 'd'])
  })

  it('reject malformed label selectors with INVALID_ARGUMENT', () => {
    for (const bad of [
      'app in',
      'app in (a',
      'app in ()',
      '(a)',
      'a b',
      'a=b c',
      ',',
      'a,',
      'a>b',
      'a in (x y)',
      'Bad Key',
      'a=' + 'v'.repeat(64),
      '-a=b',
    ]) {
      let err: unknown
      try {
        parseLabelSelector(bad)
      } catch (e) {
        err = e
      }
      expect(isKvlogError(err, 'INVALID_ARGUMENT'), bad).to.equal(true)
    }
  })

  it('field selectors support metadata.name and metadata.namespace only', () => {
    const pick = (s: string) => OBJECTS.filter((o) => parseFieldSelector(s).matches(o)).map((o) => o.metadata.name)
    expect(pick('metadata.name=b')).to.deep.equal(['b'])
    expect(pick('metadata.namespace!=ns')).to.deep.equal(['d'])
    expect(pick('metadata.namespace==ns,metadata.name!=a')).to.deep.equal(['b', 'c'])
    for (const bad of ['status.phase=Running', 'metadata.name', 'metadata.name~x']) {
      expect(() => parseFieldSelector(bad), bad).to.throw()
    }
  })
})
