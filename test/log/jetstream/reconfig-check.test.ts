/**
 * The checks of a membership change (reconfig-check.ts). etcd's strict reconfiguration check: a member
 * that is down may go; a live one only while the live members left are as many as etcd's mayRemoveMember
 * requires; a voting member is added only while every voting member is alive, a learner only while there
 * is none. A peer URL names one member; only a learner that holds nine tenths of the log is promoted.
 */
import { expect } from 'chai'
import { isKvlogError } from '../../../log/errors.js'
import { NO_MEMBERSHIP, type Membership } from '../../../log/jetstream/membership.js'
import { checkAdd, checkAddStrict, checkPromote, checkRemoval } from '../../../log/jetstream/reconfig-check.js'

const refused = (roster: string[], live: string[], name: string, self = 'a'): boolean => {
  try {
    checkRemoval(roster, new Set(live), name, self)
    return false
  } catch (err) {
    expect(isKvlogError(err, 'MEMBERSHIP_UNHEALTHY'), String(err)).to.equal(true)
    return true
  }
}

describe('cluster: the strict reconfiguration check', () => {
  it('lets a member that is down go, whatever else is down', () => {
    expect(refused(['a', 'b', 'c'], ['a'], 'c')).to.equal(false)
    expect(refused(['a', 'b', 'c'], ['a', 'b'], 'c')).to.equal(false)
  })

  it('lets a live member go while the live members left are enough', () => {
    expect(refused(['a', 'b', 'c'], ['a', 'b', 'c'], 'b')).to.equal(false)
    expect(refused(['a', 'b'], ['a', 'b'], 'b')).to.equal(false)
    expect(refused(['a', 'b', 'c', 'd', 'e'], ['a', 'b', 'c', 'd'], 'b')).to.equal(false)
  })

  it('refuses a live member whose going would leave too few live ones', () => {
    expect(refused(['a', 'b', 'c'], ['a', 'b'], 'b')).to.equal(true)
    expect(refused(['a', 'b', 'c', 'd', 'e'], ['a', 'b', 'c'], 'b')).to.equal(true)
    expect(refused(['a'], ['a'], 'a')).to.equal(true)
  })

  it('counts the member asked as live, even when its own record is not seen', () => {
    expect(refused(['a', 'b', 'c'], ['b'], 'a', 'a')).to.equal(true)
  })

  const codeOf = (f: () => void): string => {
    try {
      f()
      return ''
    } catch (err) {
      return isKvlogError(err) ? err.code : String(err)
    }
  }
  const withLearner: Membership = { pending: [], learners: ['c'], ids: { c: '7' } }

  it('adds a member by unused peer URLs; a voter only with every voter alive, one learner at a time', () => {
    expect(codeOf(() => checkAdd([], NO_MEMBERSHIP, []))).to.equal('INVALID_ARGUMENT')
    expect(codeOf(() => checkAdd(['not a url'], NO_MEMBERSHIP, []))).to.equal('INVALID_ARGUMENT')
    expect(codeOf(() => checkAdd(['http://x:1'], NO_MEMBERSHIP, [{ peerUrls: ['http://x:1'] }]))).to.equal('PEER_URL_EXISTS')
    const pending: Membership = { pending: [{ id: '5', peerUrls: ['http://y:1'], learner: true }], learners: [], ids: {} }
    expect(codeOf(() => checkAdd(['http://y:1'], pending, []))).to.equal('PEER_URL_EXISTS')
    expect(codeOf(() => checkAdd(['http://z:1'], pending, [{ peerUrls: ['http://x:1'] }, {}]))).to.equal('')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a']), NO_MEMBERSHIP, false))).to.equal('MEMBERSHIP_UNHEALTHY')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a', 'b']), NO_MEMBERSHIP, false))).to.equal('')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a']), NO_MEMBERSHIP, true))).to.equal('')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a', 'b']), withLearner, true))).to.equal('TOO_MANY_LEARNERS')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a', 'b']), pending, true))).to.equal('TOO_MANY_LEARNERS')
  })

  it('promotes only a learner, and only once it holds nine tenths of the log durably', () => {
    expect(codeOf(() => checkPromote('a', withLearner, 100, 100))).to.equal('MEMBER_NOT_LEARNER')
    expect(codeOf(() => checkPromote('c', withLearner, 89, 100))).to.equal('LEARNER_NOT_READY')
    expect(codeOf(() => checkPromote('c', withLearner, 90, 100))).to.equal('')
  })
})
