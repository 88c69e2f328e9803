import { expect } from 'chai'
import { pacedLatency, sleepUntil } from '../../../bench/lib/pacing.js'

describe('bench/lib/pacing', () => {
  it('counts from the schedule when the op was issued late, so a stall counts', () => {
    expect(pacedLatency(100, 130, 131)).to.equal(31)
  })

  it('counts from the issue when the op was issued early, never below the time the op took', () => {
    expect(pacedLatency(100, 99.2, 99.7)).to.be.closeTo(0.5, 1e-9)
    expect(pacedLatency(100, 99.2, 99.7)).to.be.greaterThan(0)
  })

  it('sleeps until about the scheduled time and says when it woke', async () => {
    const at = performance.now() + 20
    const issued = await sleepUntil(at)
    // A timer may fire up to ~1 ms early (whole-millisecond loop time); it never fires much earlier.
    expect(issued).to.be.greaterThan(at - 2)
    // The time it woke, not the time asked for.
    expect(issued).to.be.at.most(performance.now())
  })

  it('does not sleep for a time already past: it answers before any timer', async () => {
    const before = performance.now()
    const first = await Promise.race([
      sleepUntil(before - 50).then(() => 'answered'),
      new Promise((r) => setTimeout(() => r('a timer'), 0)),
    ])
    expect(first).to.equal('answered')
  })
})
