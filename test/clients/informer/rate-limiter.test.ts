/**
 * Rate limiters: exponential per item (capped, reset by forget), a token bucket over all items (burst,
 * then 1/qps apart, refilled by time), and the max of several.
 */
import { expect } from 'chai'
import { ExponentialBackoffRateLimiter, MaxOfRateLimiter, TokenBucketRateLimiter, defaultRateLimiter } from '../../../clients/index.js'

describe('rate limiters', () => {
  it('exponential: base * 2^failures per item, capped, forget starts over', () => {
    const r = new ExponentialBackoffRateLimiter<string>(10, 100)
    expect([1, 2, 3, 4, 5].map(() => r.when('a'))).to.deep.equal([10, 20, 40, 80, 100])
    expect(r.when('b')).to.equal(10)
    expect(r.numRequeues('a')).to.equal(5)
    r.forget('a')
    expect(r.numRequeues('a')).to.equal(0)
    expect(r.when('a')).to.equal(10)
    for (let i = 0; i < 2000; i++) r.when('c')
    expect(r.when('c')).to.equal(100)
    expect(() => new ExponentialBackoffRateLimiter(0, 1)).to.throw(TypeError)
  })

  it('token bucket: a burst is free, then one token per 1/qps, refilled with time', () => {
    let now = 0
    const r = new TokenBucketRateLimiter<string>(10, 3, () => now)
    expect([r.when('a'), r.when('b'), r.when('c')]).to.deep.equal([0, 0, 0])
    expect(r.when('d')).to.be.closeTo(100, 1e-9)
    expect(r.when('e')).to.be.closeTo(200, 1e-9)
    now = 1000 // 10 tokens' worth of time: back to a full bucket of 3 (minus the 2 owed)
    expect(r.when('f')).to.equal(0)
    expect(r.numRequeues('a')).to.equal(0)
  })

  it('max-of: the longest delay, every limiter counts the failure', () => {
    let now = 0
    const r = new MaxOfRateLimiter<string>(new ExponentialBackoffRateLimiter(1, 1000), new TokenBucketRateLimiter(1, 1, () => now))
    expect(r.when('a')).to.equal(1)
    expect(r.when('a')).to.equal(1000) // the bucket is empty: 1 s for the next token
    now = 10_000
    expect(r.when('a')).to.equal(4)
    expect(r.numRequeues('a')).to.equal(3)
    r.forget('a')
    expect(r.numRequeues('a')).to.equal(0)
    expect(defaultRateLimiter<string>().when('x')).to.equal(5)
  })
})
