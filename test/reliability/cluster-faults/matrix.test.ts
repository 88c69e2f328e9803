/**
 * The short version of the cluster fault matrix (`npm run test:cluster-faults` runs every cell): the
 * nats-server serving a follower's log consumer SIGKILLed once, on real processes, held to the matrix's
 * rules: the writers on the surviving members see no gap beyond the bound, one leader after a lease, no
 * acknowledged write lost, one state digest on every member.
 */
import { expect } from 'chai'
import { runCell } from './matrix.js'

describe('cluster fault matrix (short): kill:follower-consumer', function () {
  this.timeout(300_000)

  it('keeps writes going within the bound, loses nothing and forks nothing', async () => {
    const r = await runCell({ signal: 'kill', target: 'follower-consumer' })
    expect(r.lost, JSON.stringify(r)).to.equal(0)
    expect(r.sameDigest, JSON.stringify(r)).to.equal(true)
    expect(r.oneLeader, JSON.stringify(r)).to.equal(true)
    expect(r.acknowledged).to.be.greaterThan(0)
    expect(r.gapMs, JSON.stringify(r)).to.be.at.most(r.boundMs)
  })
})
