/**
 * etcd's strict reconfiguration check for taking a member off (reconfig-check.ts): a member that is down
 * may go; a live one only while the live members left are as many as etcd's mayRemoveMember requires.
 */
import { expect } from 'chai'
import { isKvlogError } from '../../../log/errors.js'
import { checkRemoval } from '../../../log/jetstream/reconfig-check.js'

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
})
