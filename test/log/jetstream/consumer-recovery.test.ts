/**
 * A follower's log consumer lost with its nats-server, with two in-process members over three real
 * nats-servers (the stream with three replicas): the nats-server that serves the follower's consumer is
 * SIGKILLed while writes go on through the leader. The follower notices its consumer delivers nothing while
 * the stream holds more, makes it again on a server that is alive, and applies again (writes need both
 * members' copies, so each acknowledged write after the kill shows the follower applying). Without the
 * remade consumer the follower never applies again (the nats client does not remake it), so the test waits
 * with a deadline only a hang reaches and prints the time from the kill to the first write the follower
 * applied; the bound on that time is measured by the fault matrix (`npm run test:cluster-faults`, cell
 * kill:follower-consumer), not asserted on a shared machine.
 */
import { expect } from 'chai'
import { inProcessMembers } from '../../support/cluster-members.js'
import { waitFor } from '../../support/wait.js'

describe("JetStreamLog: a follower's consumer lost with its nats-server", function () {
  this.timeout(120_000)
  const members = inProcessMembers('consumer')

  it('is made again on a live server, and the follower applies again', async () => {
    const lines: string[] = []
    const start = (name: string) =>
      members.start(name, { natsReplicas: 3, log: (line) => void lines.push(`${Date.now() % 100000} ${name}: ${line}`) })
    const a = await start('a')
    await waitFor('a to lead', () => a.isLeading, 30_000)
    const b = await start('b')
    await members.waitRoster([a, b])
    await a.put('/warm', 'x')
    const holder = b.metrics.consumerServer
    const made = b.metrics.consumersMade
    const victim = members.nats().servers.findIndex((s) => s.name === holder)
    expect(victim, `the server of b's consumer (${holder})`).to.be.at.least(0)

    const killedAt = Date.now()
    await members.nats().kill(victim, 'SIGKILL')
    let appliedAt = 0
    for (let i = 0; appliedAt === 0 && Date.now() - killedAt < 60_000; i++) {
      const r = await a.put(`/after/${i}`, 'v').catch(() => undefined)
      // Acknowledged: a majority of two, so b applied it too.
      if (r !== undefined && b.revision >= r.revision) appliedAt = Date.now()
    }
    const gap = appliedAt - killedAt
    expect(appliedAt, lines.join('\n')).to.be.greaterThan(0)
    // b may apply before its new consumer is made: from the stream's leader while it is made, or from the
    // stream's acknowledgements once it leads (the killed server may have held the lease's bucket too).
    await waitFor('b to make its consumer again', () => b.metrics.consumersMade > made, 30_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${lines.join('\n')}`)
    })
    expect(b.metrics.consumerServer).to.not.equal(holder)
    console.log(`      b applied again ${gap} ms after its consumer's nats-server was killed`)
  })
})
