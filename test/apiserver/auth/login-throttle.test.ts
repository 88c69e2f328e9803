/**
 * The login throttle's rules on their own, with a clock the test moves: failures expire with their
 * window, a success counts nothing and resets nothing, and only AUTH_FAILED counts as a failure.
 */
import { expect } from 'chai'
import { authError } from '../../../apiserver/auth/errors.js'
import { LoginThrottle } from '../../../apiserver/auth/login-throttle.js'
import { isKvlogError } from '../../../log/errors.js'

const WINDOW = 1000

describe('auth: login throttle', () => {
  let now = 0
  const throttle = () =>
    new LoginThrottle({ maxFailuresPerSource: 2, maxFailuresPerUser: 3, maxPendingPerSource: 1, windowMs: WINDOW }, () => now)
  const fail = () => Promise.reject(authError('AUTH_FAILED'))
  const pass = () => Promise.resolve('token')
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (err: unknown) => (isKvlogError(err) ? String(err.details.reason ?? err.code) : 'other'),
    )

  beforeEach(() => (now = 0))

  it('refuses an address after its failures until the window ends, then lets it try again', async () => {
    const t = throttle()
    expect(await outcome(t.attempt('a', 'u', fail))).to.equal('AUTH_FAILED')
    expect(await outcome(t.attempt('a', 'u', fail))).to.equal('AUTH_FAILED')
    expect(await outcome(t.attempt('a', 'u', pass))).to.equal('TOO_MANY_ATTEMPTS')
    expect(await outcome(t.attempt('b', 'u', pass))).to.equal('ok')
    now = WINDOW
    expect(await outcome(t.attempt('a', 'u', pass))).to.equal('ok')
  })

  it('counts only wrong names or passwords, and a success clears nothing', async () => {
    const t = throttle()
    for (let i = 0; i < 5; i++)
      expect(await outcome(t.attempt('a', 'u', () => Promise.reject(authError('AUTH_NOT_ENABLED'))))).to.equal('AUTH_NOT_ENABLED')
    expect(await outcome(t.attempt('a', 'u', fail))).to.equal('AUTH_FAILED')
    expect(await outcome(t.attempt('a', 'v', pass))).to.equal('ok')
    expect(await outcome(t.attempt('a', 'u', fail))).to.equal('AUTH_FAILED')
    expect(await outcome(t.attempt('a', 'v', pass))).to.equal('TOO_MANY_ATTEMPTS')
  })

  it('lets a second check from one address wait for the first, and one from elsewhere go at once', async () => {
    const t = throttle()
    let release: () => void = () => undefined
    const order: string[] = []
    const slow = t.attempt('a', 'u', () => new Promise<string>((resolve) => (release = () => resolve('token'))))
    const second = t.attempt('a', 'u', () => (order.push('second checked'), pass()))
    expect(await outcome(t.attempt('b', 'u', pass))).to.equal('ok')
    expect(order).to.deep.equal([])
    release()
    expect(await slow).to.equal('token')
    expect(await outcome(second)).to.equal('ok')
    expect(order).to.deep.equal(['second checked'])
  })

  it('runs one check at a time for addresses that failed, and refuses unchecked a waiter whose address reached its limit', async () => {
    const t = throttle()
    expect(await outcome(t.attempt('a', 'u', fail))).to.equal('AUTH_FAILED')
    expect(await outcome(t.attempt('c', 'u', fail))).to.equal('AUTH_FAILED')
    let release: () => void = () => undefined
    const slow = t.attempt('a', 'u', () => new Promise<string>((_, reject) => (release = () => reject(authError('AUTH_FAILED')))))
    let checked = false
    const waiting = t.attempt('c', 'v', () => ((checked = true), pass()))
    await new Promise((r) => setImmediate(r))
    expect(checked).to.equal(false)
    release()
    expect(await outcome(slow)).to.equal('AUTH_FAILED')
    expect(await outcome(waiting)).to.equal('ok')
    expect(checked).to.equal(true)
    // 'a' is now at its limit: a login waiting behind it is refused without a check.
    const more = [t.attempt('a', 'u', pass), t.attempt('a', 'u', pass)]
    expect(await Promise.all(more.map(outcome))).to.deep.equal(['TOO_MANY_ATTEMPTS', 'TOO_MANY_ATTEMPTS'])
  })
})
