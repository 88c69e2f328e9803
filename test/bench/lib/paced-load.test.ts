import { expect } from 'chai'
import { LatencySamples, pacedLoad } from '../../../bench/lib/paced-load.js'
import { waitFor } from '../../support/wait.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('bench/lib/paced-load', () => {
  it('issues ops at the rate asked for, across its writers, each op once', async () => {
    const seen: number[] = []
    const t0 = performance.now()
    const load = pacedLoad(10, 1000, async (i) => {
      seen.push(i)
    })
    await waitFor('200 ops', () => seen.length >= 200)
    const elapsed = performance.now() - t0
    const samples = await load.stop()
    // Op i is due i ms after the start at 1,000 ops/s: 200 ops never come sooner than ~199 ms (a timer
    // fires at most ~1 ms early); a busy machine only makes them later.
    expect(elapsed).to.be.at.least(197)
    expect(new Set(seen).size).to.equal(seen.length)
    expect(seen).to.deep.equal([...seen].sort((a, b) => a - b))
    expect(samples.length).to.equal(seen.length)
  })

  it('keeps at most one op in flight per writer and counts a delayed op from when it was due', async () => {
    let inFlight = 0
    let most = 0
    const load = pacedLoad(4, 1000, async () => {
      most = Math.max(most, ++inFlight)
      await sleep(30)
      inFlight--
    })
    await sleep(300)
    const t1 = performance.now()
    const samples = await load.stop()
    expect(most).to.equal(4)
    // Each writer can do one op per ~30 ms but is asked for one per 4 ms: later ops wait, and it shows.
    const late = samples.between(0, t1)
    expect(Math.max(...late)).to.be.greaterThan(100)
    expect(Math.min(...late)).to.be.at.least(29)
  })

  it('stop() waits for the ops in flight', async () => {
    let done = 0
    const load = pacedLoad(2, 500, async () => {
      await sleep(40)
      done++
    })
    await sleep(50)
    const samples = await load.stop()
    expect(done).to.be.greaterThan(0)
    expect(samples.length).to.equal(done)
  })

  it('stop() rejects with the failure of an op, and issues no more after it', async () => {
    let calls = 0
    const load = pacedLoad(3, 1000, async () => {
      calls++
      if (calls === 5) throw new Error('disk on fire')
    })
    await sleep(100)
    const before = calls
    await sleep(50)
    expect(calls).to.equal(before)
    let caught: unknown
    await load.stop().catch((err: unknown) => (caught = err))
    expect(String(caught)).to.contain('disk on fire')
  })
})

describe('bench/lib/paced-load LatencySamples', () => {
  it('grows past its capacity and selects by scheduled time', () => {
    const s = new LatencySamples(4)
    for (let i = 0; i < 10; i++) s.add(i * 10, i)
    expect(s.length).to.equal(10)
    expect(s.between(20, 50)).to.deep.equal([2, 3, 4])
    expect(s.toJSON()[9]).to.deep.equal({ at: 90, ms: 9 })
  })
})
