/**
 * The membership record's changes (log/jetstream/membership.ts): MemberUpdate changes an added member's
 * peer URLs (the member that starts with a new one takes its id) or records a started member's; a member
 * that leaves takes its updated URLs with it.
 */
import { expect } from 'chai'
import { joined, left, NO_MEMBERSHIP, updated, type Membership } from '../../../log/jetstream/membership.js'

describe('cluster: the membership record', () => {
  const added: Membership = { ...NO_MEMBERSHIP, pending: [{ id: '5', peerUrls: ['http://old:1'], learner: false }] }

  it('gives an added member new peer URLs: the member that starts with one of them takes its id', () => {
    const m = updated(added, '', '5', ['http://new:1'])
    expect(m.pending).to.deep.equal([{ id: '5', peerUrls: ['http://new:1'], learner: false }])
    expect(joined(m, 'c', ['http://old:1'])).to.equal(m)
    expect(joined(m, 'c', ['http://new:1']).ids).to.deep.equal({ c: '5' })
  })

  it("records a started member's peer URLs, keeps them across joins and drops them when it leaves", () => {
    const m = updated(added, 'b', undefined, ['http://b:2'])
    expect(m.peerUrls).to.deep.equal({ b: ['http://b:2'] })
    expect(m.pending).to.equal(added.pending)
    const withC = joined(m, 'c', ['http://old:1'])
    expect(withC.peerUrls).to.deep.equal({ b: ['http://b:2'] })
    expect(left(withC, 'b').peerUrls).to.deep.equal({})
    expect(left(withC, 'c').peerUrls).to.deep.equal({ b: ['http://b:2'] })
    expect(left(added, 'b')).to.not.have.property('peerUrls')
  })
})
