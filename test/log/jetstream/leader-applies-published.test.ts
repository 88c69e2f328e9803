/**
 * The leader applies what the stream acknowledged to it, without waiting for its own consumer: one
 * in-process member over three real nats-servers (the stream with three replicas), whose log consumer is
 * deleted while it leads and is not made again (the stall timeout is far longer than the test). Its writes
 * still answer, each at the next revision, and its copy reads them back. A leader that applied only what
 * its consumer delivered would wait out every write (OUTCOME_UNKNOWN) until a consumer came back.
 *
 * A member started afterwards applies the same writes from the stream, at the same revisions.
 */
import { expect } from 'chai'
import { connect, type NatsConnection } from 'nats'
import { clusterNames } from '../../../log/jetstream/options.js'
import { inProcessMembers } from '../../support/cluster-members.js'
import { waitFor } from '../../support/wait.js'

describe('JetStreamLog: the leader applies what the stream acknowledged to it', function () {
  this.timeout(120_000)
  const members = inProcessMembers('own')
  let nc: NatsConnection | undefined
  after(async () => nc?.close())

  it('answers writes while it has no consumer; the stream holds what it applied', async () => {
    const lines: string[] = []
    const a = await members.start('a', {
      natsReplicas: 3,
      clusterConsumerStallTimeout: 600_000,
      log: (line) => void lines.push(line),
    })
    await waitFor('a to lead', () => a.isLeading, 30_000)
    const first = await a.put('/before', 'x')

    nc = await connect({ servers: members.nats().urls.split(',') })
    const jsm = await nc.jetstreamManager()
    const { stream } = clusterNames('own')
    const consumers = await jsm.consumers.list(stream).next()
    expect(consumers.length, 'the leader has a consumer').to.be.greaterThan(0)
    for (const c of consumers) await jsm.consumers.delete(stream, c.name)

    let revision = first.revision
    for (let i = 0; i < 20; i++) {
      const r = await a.put(`/without-consumer/${i}`, `v${i}`)
      expect(r.revision, lines.join('\n')).to.equal(revision + 1)
      revision = r.revision
    }
    expect((await a.get('/without-consumer/19'))?.value.toString()).to.equal('v19')

    // The stream holds exactly what the leader applied: a member started now applies it from the stream.
    const b = await members.start('b', { natsReplicas: 3 })
    await members.waitRoster([a, b])
    const last = await a.put('/after', 'y')

    expect(last.revision).to.equal(revision + 1)
    await waitFor('b to apply the last write', () => b.revision >= last.revision, 30_000)
    expect((await b.get('/without-consumer/19'))?.value.toString()).to.equal('v19')
    expect((await b.get('/without-consumer/19'))?.modRevision).to.equal((await a.get('/without-consumer/19'))?.modRevision)
  })
})
