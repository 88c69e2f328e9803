/**
 * Members added by their peer URLs (MemberAdd) and learners, with in-process members over three real
 * nats-servers: a learner added for `c` is taken by the member that starts with that peer URL (with the
 * id MemberAdd gave); it applies the log but counts toward no majority, so with one of the two voting
 * members down a write is not acknowledged although the learner has it; promoted once caught up, it
 * counts. etcd's checks: one learner at a time, no voting member added while a voting member is down, a
 * peer URL used once, only a learner promoted.
 */
import { expect } from 'chai'
import { isKvlogError, type ErrorCode } from '../../../log/errors.js'
import type { JetStreamLog } from '../../../log/jetstream/jetstream-log.js'
import { inProcessMembers } from '../../support/cluster-members.js'
import { waitFor } from '../../support/wait.js'

const C_URL = 'http://c.example:2380'

/** The code a call fails with ('' if it does not). */
async function codeOf(call: () => Promise<unknown>): Promise<string> {
  return call().then(
    () => '',
    (err: unknown) => (isKvlogError(err) ? err.code : String(err)),
  )
}

/** Runs a membership change, again while the previous one is not settled. */
async function settled<T>(call: () => Promise<T>, retryOn: ErrorCode[] = ['MEMBERSHIP_UNSETTLED']): Promise<T> {
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      return await call()
    } catch (err) {
      if (Date.now() > deadline || !retryOn.some((code) => isKvlogError(err, code))) throw err
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}

/** Waits for an asynchronous condition (a deadline only a hang reaches). */
async function until(what: string, cond: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('JetStreamLog: members added by peer URL, and learners', function () {
  this.timeout(180_000)
  const members = inProcessMembers('learners')

  it('a learner applies the log, counts toward no majority until promoted, and keeps the id it was added with', async () => {
    const options = { natsReplicas: 3, clusterRequestTimeout: 3000 }
    const a = await members.start('a', options)
    await waitFor('a to lead', () => a.isLeading, 30_000)
    let b: JetStreamLog = await members.start('b', options)
    await members.waitRoster([a, b])

    const id = await settled(() => a.addMember([C_URL], true))
    expect(a.pendingMembers.map((p) => p.id)).to.deep.equal([id])
    expect(await codeOf(() => settled(() => a.addMember(['http://d.example:2380'], true)))).to.equal('TOO_MANY_LEARNERS')

    const c = await members.start('c', { ...options, peerUrls: [C_URL] })
    await waitFor('c to join as a learner', () => a.learners.includes('c') && a.roster.includes('c'), 60_000)
    expect(a.addedIdOf('c')).to.equal(id)
    expect(a.pendingMembers).to.deep.equal([])
    expect(await codeOf(() => settled(() => a.addMember([C_URL], false)))).to.equal('PEER_URL_EXISTS')

    // b down: a and the learner c have every write, but the voting members are a and b.
    await b.close()
    await until("b's record to expire", async () => (await a.members()).every((m) => m.name !== 'b'))
    expect(await codeOf(() => settled(() => a.addMember(['http://e.example:2380'], false)))).to.equal('MEMBERSHIP_UNHEALTHY')
    const before = c.revision
    expect(await codeOf(() => a.put('/while-b-is-down', 'v'))).to.equal('OUTCOME_UNKNOWN')
    await waitFor('c to apply the write', () => c.revision > before, 30_000)

    b = await members.start('b', options)
    await waitFor('b to catch up', () => b.revision >= a.revision, 60_000)
    await a.put('/with-b', 'v')
    await settled(() => a.promoteMember('c'), ['MEMBERSHIP_UNSETTLED', 'LEARNER_NOT_READY'])
    await waitFor('c promoted everywhere', () => [a, b, c].every((m) => m.learners.length === 0), 30_000)
    expect(await codeOf(() => settled(() => a.promoteMember('c')))).to.equal('MEMBER_NOT_LEARNER')

    // Now c counts: with b down again, a and c are a majority of three.
    await b.close()
    await a.put('/counted', 'v')
    expect(c.addedIdOf('c')).to.equal(id)
  })
})
