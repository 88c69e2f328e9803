/**
 * etcd's corruption check in the cluster engine, with three in-process members over real nats-servers:
 * the leader asks every member for the hash of its copy at the leader's revision; with identical copies
 * nothing is reported, and after one member's copy is changed outside the log that member (and only it)
 * is reported to the listeners and counted.
 */
import { expect } from 'chai'
import type { CorruptReport } from '../../../log/backend.js'
import { inProcessMembers } from '../../support/cluster-members.js'
import { waitFor } from '../../support/wait.js'

describe('JetStreamLog: corruption check', function () {
  this.timeout(90_000)
  const members = inProcessMembers('corrupt')

  it("reports the member whose copy differs from the majority's, and no one while the copies agree", async () => {
    const a = await members.start('a', { natsReplicas: 1 })
    await waitFor('a to lead', () => a.isLeading, 20_000)
    const [b, c] = [await members.start('b', { natsReplicas: 1 }), await members.start('c', { natsReplicas: 1 })]
    await members.waitRoster([a, b, c])
    const reported: CorruptReport[] = []
    a.onCorrupt((r) => reported.push(r))

    for (let i = 0; i < 5; i++) await a.put(`/k/${i}`, `v${i}`)
    expect(await a.corruption.check()).to.deep.equal([])
    expect(a.corruption.figures).to.include({ checks: 1, mismatches: 0, inconclusive: 0 })

    // b's copy takes a write that never went through the log: from then on its revisions hold other data.
    const put = { type: 'txn' as const, request: { success: [{ type: 'put' as const, key: '/rogue', value: 'x' }] } }
    await b.view.applyReplicated(Date.now(), [put], [])
    await a.put('/after', 'y')
    const found = await a.corruption.check()
    expect(found.map((r) => r.member)).to.deep.equal(['b'])
    expect(found[0].revision).to.equal(a.revision)
    expect(found[0].hash).to.not.equal(found[0].majorityHash)
    expect(reported.map((r) => r.member)).to.deep.equal(['b'])
    expect(a.corruption.figures).to.include({ checks: 2, mismatches: 1 })
  })
})
