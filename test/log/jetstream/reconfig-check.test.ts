/**
 * The checks of a membership change (reconfig-check.ts). etcd's strict reconfiguration check: a member
 * that is down may go; a live one only while the live members left are as many as etcd's mayRemoveMember
 * requires; a voting member is added only while every voting member is alive and the started ones stay
 * a majority with it (etcd's isReadyToAddVotingMember; the same rule for a removal or a promotion), a
 * learner only while there is none. A peer URL
 * names one member (also after MemberUpdate); only a learner that holds nine tenths of the log is
 * promoted.
 */
import { expect } from 'chai'
import { isKvlogError } from '../../../log/errors.js'
import { NO_MEMBERSHIP, type Membership } from '../../../log/jetstream/membership.js'
import { checkAddStrict, checkPeerUrls, checkPromote, checkRemoval } from '../../../log/jetstream/reconfig-check.js'

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
    expect(codeOf(() => checkPeerUrls([], NO_MEMBERSHIP, []))).to.equal('INVALID_ARGUMENT')
    expect(codeOf(() => checkPeerUrls(['not a url'], NO_MEMBERSHIP, []))).to.equal('INVALID_ARGUMENT')
    expect(codeOf(() => checkPeerUrls(['http://x:1'], NO_MEMBERSHIP, [{ peerUrls: ['http://x:1'] }]))).to.equal('PEER_URL_EXISTS')
    const pending: Membership = { pending: [{ id: '5', peerUrls: ['http://y:1'], learner: true }], learners: [], ids: {} }
    expect(codeOf(() => checkPeerUrls(['http://y:1'], pending, []))).to.equal('PEER_URL_EXISTS')
    expect(codeOf(() => checkPeerUrls(['http://z:1'], pending, [{ peerUrls: ['http://x:1'] }, {}]))).to.equal('')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a']), NO_MEMBERSHIP, false))).to.equal('MEMBERSHIP_UNHEALTHY')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a', 'b']), NO_MEMBERSHIP, false))).to.equal('')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a']), NO_MEMBERSHIP, true))).to.equal('')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a', 'b']), withLearner, true))).to.equal('TOO_MANY_LEARNERS')
    expect(codeOf(() => checkAddStrict(['a', 'b'], new Set(['a', 'b']), pending, true))).to.equal('TOO_MANY_LEARNERS')
  })

  it("updates a member's peer URLs to ones no other member has", () => {
    const m: Membership = {
      pending: [{ id: '5', peerUrls: ['http://p:1'], learner: false }],
      learners: [],
      ids: {},
      peerUrls: { b: ['http://b-new:1'] },
    }
    const records = [
      { name: 'a', peerUrls: ['http://a:1'] },
      { name: 'b', peerUrls: ['http://b:1'] },
    ]
    const update = (urls: string[], self: { name: string; id?: string }) => codeOf(() => checkPeerUrls(urls, m, records, self))
    // Its own URLs are no conflict; another's are, whether advertised, updated or added.
    expect(update(['http://a:1'], { name: 'a' })).to.equal('')
    expect(update(['http://b-new:1'], { name: 'a' })).to.equal('PEER_URL_EXISTS')
    expect(update(['http://p:1'], { name: 'a' })).to.equal('PEER_URL_EXISTS')
    expect(update(['http://p:1'], { name: '', id: '5' })).to.equal('')
    expect(update(['http://a:1'], { name: '', id: '5' })).to.equal('PEER_URL_EXISTS')
    // A started member's updated URLs replace the ones its record advertises.
    expect(update(['http://b:1'], { name: 'a' })).to.equal('')
    expect(update(['http://b-new:1'], { name: 'b' })).to.equal('')
    expect(update([], { name: 'a' })).to.equal('INVALID_ARGUMENT')
  })

  it("adds a voting member only while the started ones stay a majority, as etcd's isReadyToAddVotingMember", () => {
    const added = (...learner: boolean[]): Membership => ({
      pending: learner.map((l, i) => ({ id: String(i + 1), peerUrls: [`http://p${i}:1`], learner: l })),
      learners: [],
      ids: {},
    })
    const add = (voters: string[], m: Membership) => codeOf(() => checkAddStrict(voters, new Set(voters), m, false))
    // One member: a second is allowed (growing a cluster restored on one member), a third not before it starts.
    expect(add(['a'], NO_MEMBERSHIP)).to.equal('')
    expect(add(['a'], added(false))).to.equal('NOT_ENOUGH_STARTED_MEMBERS')
    expect(add(['a', 'b'], added(false))).to.equal('NOT_ENOUGH_STARTED_MEMBERS')
    // Three started, one added: three of five are a majority; a second added would make three of six.
    expect(add(['a', 'b', 'c'], added(false))).to.equal('')
    expect(add(['a', 'b', 'c'], added(false, false))).to.equal('NOT_ENOUGH_STARTED_MEMBERS')
    // A learner added is part of no majority.
    expect(add(['a', 'b'], added(true))).to.equal('')
    // Learners are added whatever the started count.
    expect(codeOf(() => checkAddStrict(['a'], new Set(['a']), added(false, false), true))).to.equal('')
  })

  it("takes a voting member off or promotes a learner only while the started ones stay a majority, as etcd's isReadyTo{Remove,Promote}Member", () => {
    const remove = (roster: string[], name: string, unstarted: number) =>
      codeOf(() => checkRemoval(roster, new Set(roster), name, 'z', unstarted))
    // The last member: no member would be left to make a majority.
    expect(remove(['a'], 'a', 0)).to.equal('NOT_ENOUGH_STARTED_MEMBERS')
    // Three started, two added: two started of four left; one added: two of three.
    expect(remove(['a', 'b', 'c'], 'c', 2)).to.equal('NOT_ENOUGH_STARTED_MEMBERS')
    expect(remove(['a', 'b', 'c'], 'c', 1)).to.equal('')
    // Also a member that is down: the rule is about those left, not about the one taken off.
    expect(codeOf(() => checkRemoval(['a', 'b', 'c'], new Set(['a', 'b']), 'c', 'a', 2))).to.equal('NOT_ENOUGH_STARTED_MEMBERS')

    const learner = (unstarted: number): Membership => ({
      pending: Array.from({ length: unstarted }, (_, i) => ({ id: String(i + 1), peerUrls: [`http://p${i}:1`], learner: false })),
      learners: ['l'],
      ids: {},
    })
    // One started voter and the learner, with two added: two started of four.
    expect(codeOf(() => checkPromote('l', learner(2), 100, 100, 1))).to.equal('NOT_ENOUGH_STARTED_MEMBERS')
    expect(codeOf(() => checkPromote('l', learner(1), 100, 100, 1))).to.equal('')
    // Without the strict check (no voter count), only readiness.
    expect(codeOf(() => checkPromote('l', learner(2), 100, 100))).to.equal('')
  })

  it('promotes only a learner, and only once it holds nine tenths of the log durably', () => {
    expect(codeOf(() => checkPromote('a', withLearner, 100, 100))).to.equal('MEMBER_NOT_LEARNER')
    expect(codeOf(() => checkPromote('c', withLearner, 89, 100))).to.equal('LEARNER_NOT_READY')
    expect(codeOf(() => checkPromote('c', withLearner, 90, 100))).to.equal('')
  })
})
