/**
 * Password checks run on two threads: at the process's priority while their budget lasts, then at the
 * low one. A flood is split between them (so it takes at most the budget from the requests being served),
 * every check still gives the right answer, and with no budget every check runs at the low priority.
 */
import { expect } from 'chai'
import { NormalBudget, PasswordHasher } from '../../../apiserver/auth/passwords.js'
import { waitFor } from '../../support/wait.js'

describe('apiserver/auth/passwords', function () {
  this.timeout(120_000)

  it('NormalBudget: so many checks a second, the bucket refilled as time passes', async () => {
    const b = new NormalBudget(3)
    expect([b.take(), b.take(), b.take(), b.take()]).to.deep.equal([true, true, true, false])
    await waitFor('the budget to fill again', () => b.take(), 10_000)
    expect(new NormalBudget(0).take()).to.equal(false)
  })

  it('splits a flood of checks between the two threads, each with the right answer', async () => {
    const hasher = new PasswordHasher(12, 100, 19, 4)
    try {
      const stored = await hasher.hash('right')
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => hasher.verify(i % 3 === 0 ? 'right' : 'wrong', stored)))
      expect(answers).to.deep.equal(Array.from({ length: 30 }, (_, i) => i % 3 === 0))
      expect(hasher.checks.normal + hasher.checks.low).to.equal(31)
      // The first checks find the budget full; the flood spends it and goes on at the low priority.
      expect(hasher.checks.normal, 'checks at the process priority').to.be.at.least(4)
      expect(hasher.checks.low, 'checks at the low priority').to.be.at.least(1)
    } finally {
      hasher.close()
    }
  })

  it('runs every check at the low priority with no budget', async () => {
    const hasher = new PasswordHasher(12, 10, 19, 0)
    try {
      const stored = await hasher.hash('pw')
      expect(await hasher.verify('pw', stored)).to.equal(true)
      expect(hasher.checks).to.deep.equal({ normal: 0, low: 2 })
    } finally {
      hasher.close()
    }
  })
})
