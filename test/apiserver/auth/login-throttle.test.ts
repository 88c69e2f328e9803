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

  it('refuses a second check under way from one address', async () => {
    const t = throttle()
    let release: () => void = () => undefined
    const slow = t.attempt('a', 'u', () => new Promise<string>((resolve) => (release = () => resolve('token'))))
    expect(await outcome(t.attempt('a', 'u', pass))).to.equal('TOO_MANY_ATTEMPTS')
    expect(await outcome(t.attempt('b', 'u', pass))).to.equal('ok')
    release()
    expect(await slow).to.equal('token')
    expect(await outcome(t.attempt('a', 'u', pass))).to.equal('ok')
  })
})
