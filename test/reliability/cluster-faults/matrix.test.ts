/**
 * The short version of the cluster fault matrix (`npm run test:cluster-faults` runs every cell and holds
 * each run to its time bound): the nats-server serving a follower's log consumer SIGKILLed once, on real
 * processes: writes on the surviving members are acknowledged again within the watched window, one leader
 * after a lease, no acknowledged write lost, one state digest on every member. The gap and its bound are
 * printed (a timing figure on a shared machine, recorded in docs/benchmarks.md rather than asserted here).
 */
import { expect } from 'chai'
import { runCell, WINDOW_MS } from './matrix.js'

describe('cluster fault matrix (short): kill:follower-consumer', function () {
  this.timeout(300_000)

  it('acknowledges writes again, loses nothing and forks nothing', async () => {
    const r = await runCell({ signal: 'kill', target: 'follower-consumer' })
    expect(r.lost, JSON.stringify(r)).to.equal(0)
    expect(r.sameDigest, JSON.stringify(r)).to.equal(true)
    expect(r.stopped, JSON.stringify(r)).to.deep.equal([])
    expect(r.oneLeader, JSON.stringify(r)).to.equal(true)
    expect(r.acknowledged).to.be.greaterThan(0)
    expect(r.gapMs, JSON.stringify(r)).to.be.lessThan(WINDOW_MS)
    console.log(`      longest gap ${r.gapMs} ms (bound ${r.boundMs} ms), victim ${r.victim}`)
  })
})
