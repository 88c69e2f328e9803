/**
 * The leader's lease against a scripted bucket (election.ts): a leader whose renewals hang, or fail at
 * once without saying why, steps down on the time since its last successful renewal, and gives the
 * entry up; one whose renewals succeed keeps leading; one whose process was paused for a lease or more
 * steps down when it wakes, before it renews (the entry has expired in the bucket meanwhile); one whose
 * renewal was lost with its connection renews as soon as the connection is back.
 */
import { expect } from 'chai'
import type { KV, NatsConnection } from 'nats'
import { Election } from '../../../log/jetstream/election.js'
import { waitFor } from '../../support/wait.js'

type Renewal = 'ok' | 'hang' | 'fail'

function setUp(leaseMs: number, mayLead = true) {
  const state = {
    renewal: 'ok' as Renewal,
    revision: 1,
    renewals: 0,
    deleted: [] as number[],
    elected: 0,
    deposed: 0,
    looks: 0,
    creates: 0,
  }
  const kv = {
    get: () => {
      state.looks++
      return Promise.resolve(null)
    },
    create: () => {
      state.creates++
      return Promise.resolve(state.revision)
    },
    update: () => {
      state.renewals++
      if (state.renewal === 'hang') return new Promise(() => undefined)
      if (state.renewal === 'fail') return Promise.reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' }))
      return Promise.resolve(++state.revision)
    },
    put: () => Promise.resolve(1),
    delete: (_key: string, o: { previousSeq: number }) => {
      state.deleted.push(o.previousSeq)
      return Promise.resolve()
    },
  } as unknown as KV
  const nc = { subscribe: () => ({ unsubscribe: () => undefined }) } as unknown as NatsConnection
  const election = new Election(kv, nc, 'kvlog.t.alive', 'a', leaseMs, {
    elected: () => void state.elected++,
    deposed: () => void state.deposed++,
    member: () => ({ name: 'a', clientUrls: [], applied: 0 }),
    roster: () => [],
    mayLead: () => mayLead,
  })
  return { election, state }
}

/** A started election that leads and has renewed `renewals` times since. */
async function leading(renewals: number, leaseMs = 300) {
  const { election, state } = setUp(leaseMs)
  await election.start()
  await waitFor('a to lead', () => election.leading, 10_000)
  const renewed = state.renewals
  await waitFor('renewals', () => state.renewals >= renewed + renewals, 10_000)
  return { election, state }
}

describe('Election: the lease', () => {
  const run = async (renewal: Renewal) => {
    const { election, state } = await leading(2)
    try {
      const revision = state.revision
      state.renewal = renewal
      await waitFor('a to step down', () => !election.leading, 10_000)
      expect(state.deposed).to.equal(1)
      expect(state.deleted, 'the entry given up at its revision').to.deep.equal([revision])
      expect(election.stepDowns).to.equal(1)
    } finally {
      await election.stop()
    }
  }

  it('steps down when renewals hang', () => run('hang'))

  it('steps down when renewals fail at once', () => run('fail'))

  it('gives the entry up when it is made to step down (a group not stored in time, a fence rejection)', async () => {
    const { election, state } = await leading(1)
    try {
      const revision = state.revision
      await election.stepDown('a test')
      expect(election.leading).to.equal(false)
      expect(state.deleted, 'the entry deleted at its revision, for the next leader').to.deep.equal([revision])
    } finally {
      await election.stop()
    }
  })

  it('renews at once when its connection comes back, beside a renewal that waits on the lost one', async () => {
    // Renewed every 500 ms; a renewal that waits deposes it 750 ms after the last success.
    const { election, state } = await leading(2, 1_500)
    try {
      // One renewal is lost with the connection (it never answers); the next ones answer.
      state.renewal = 'hang'
      const hung = state.renewals
      await waitFor('a renewal to hang', () => state.renewals > hung, 10_000)
      state.renewal = 'ok'
      election.reconnected()
      // Several leases later it still leads, and renewed all along.
      const renewed = state.renewals
      await new Promise((r) => setTimeout(r, 4_000))
      expect(election.leading, 'still leading').to.equal(true)
      expect(state.deposed).to.equal(0)
      expect(state.renewals).to.be.at.least(renewed + 5)
    } finally {
      await election.stop()
    }
  })

  it('steps down at once when it wakes from a pause of a lease or more, without a renewal first', async () => {
    const { election, state } = await leading(2)
    try {
      const renewals = state.renewals
      // The process paused (SIGSTOP, a long stall): nothing runs for longer than the lease (300 ms).
      const until = Date.now() + 450
      while (Date.now() < until) {
        // paused
      }
      expect(election.renewedAgo()).to.be.at.least(300)
      await waitFor('a to step down', () => !election.leading, 10_000)
      expect(state.renewals, 'renewals tried after the pause').to.equal(renewals)
      expect(election.renewedAgo()).to.equal(undefined)
    } finally {
      await election.stop()
    }
  })

  it('never takes the lease while it may not lead (a learner)', async () => {
    const { election, state } = setUp(300, false)
    await election.start()
    try {
      await waitFor('three looks at the lease', () => state.looks >= 3, 10_000)
      expect(state.creates).to.equal(0)
      expect(election.leading).to.equal(false)
    } finally {
      await election.stop()
    }
  })

  it('keeps leading while renewals succeed', async () => {
    const { election, state } = await leading(6)
    try {
      expect(election.leading).to.equal(true)
      expect(state.deposed).to.equal(0)
    } finally {
      await election.stop()
    }
  })
})
