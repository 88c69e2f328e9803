import { expect } from 'chai'
import { mergeSamples, Reservoir, summarize } from '../../../bench/lib/latency-sample.js'

/** A deterministic generator (mulberry32), so a failure reproduces. */
function seeded(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('bench/lib/latency-sample', () => {
  it('samples the whole run: a slow end far past the sample size shows in the p99', () => {
    let clock = 0
    const r = new Reservoir(1000, seeded(1), () => clock)
    // 100,000 fast latencies, then 10,000 slow ones: the slow tenth of the run is 9% of it.
    for (let i = 0; i < 100_000; i++, clock++) r.add(1)
    for (let i = 0; i < 10_000; i++, clock++) r.add(100)
    const s = summarize(r.snapshot())
    expect(s.p99).to.equal(100)
    expect(s.p50).to.equal(1)
    expect(s.count).to.equal(110_000)
    expect(s.max).to.equal(100)
    expect(s.windowSeconds).to.equal(109.999)
    const slow = r.snapshot().values.filter((v) => v === 100).length
    expect(slow).to.be.within(50, 130)
  })

  it('only parses what it keeps: offer says which latencies to fill, and counts every one', () => {
    const r = new Reservoir(10, seeded(2), () => 0)
    let filled = 0
    for (let i = 0; i < 10_000; i++) {
      const slot = r.offer()
      if (slot >= 0) {
        r.fill(slot, i)
        filled++
      }
    }
    expect(r.count).to.equal(10_000)
    expect(r.snapshot().values).to.have.length(10)
    expect(filled).to.be.lessThan(200)
    // The kept ones come from the whole run, not its first ten.
    expect(Math.max(...r.snapshot().values)).to.be.greaterThan(1000)
  })

  it('merges processes in proportion to what each saw, not to how many values each sent', () => {
    const busy = new Reservoir(1000, seeded(3), () => 0)
    const quiet = new Reservoir(1000, seeded(4), () => 0)
    for (let i = 0; i < 200_000; i++) busy.add(1)
    for (let i = 0; i < 1000; i++) quiet.add(100)
    const merged = mergeSamples([busy.snapshot(), quiet.snapshot()], seeded(5))
    expect(merged.count).to.equal(201_000)
    // The quiet process's events are 0.5% of all: they do not reach the p99.
    expect(summarize(merged).p99).to.equal(1)
    expect(merged.values.filter((v) => v === 100).length).to.be.lessThan(merged.values.length / 100)
  })

  it('reports nothing measured as NaN, not as zero', () => {
    const s = summarize(new Reservoir().snapshot())
    expect(Number.isNaN(s.p99)).to.equal(true)
    expect(s.count).to.equal(0)
  })
})
