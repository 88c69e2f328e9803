/**
 * A hole in the stream filled once the member that keeps the messages answers again, with two in-process
 * members over real nats-servers: messages b never applied are deleted from the stream while the only
 * other member, a, is closed; b, started again, finds the hole, keeps trying while a does not answer
 * (instead of stopping for good), and applies the messages from a's kept tail once a is back.
 */
import { expect } from 'chai'
import { connect } from 'nats'
import { clusterNames } from '../../../log/jetstream/options.js'
import { inProcessMembers } from '../../support/cluster-members.js'
import { waitFor } from '../../support/wait.js'

describe('JetStreamLog: a hole fill while the members that keep it are unreachable', function () {
  this.timeout(120_000)
  const members = inProcessMembers('holes')

  it('is tried again, and applied once a member that keeps the messages answers', async () => {
    const lines: string[] = []
    const extra = { natsReplicas: 1, clusterRequestTimeout: 1000, log: (line: string) => void lines.push(line) }
    let a = await members.start('a', extra)
    await waitFor('a to lead', () => a.isLeading, 20_000)
    let b = await members.start('b', extra)
    await members.waitRoster([a, b])
    await a.put('/k/0', 'v')
    const names = clusterNames('holes')
    const nc = await connect({ servers: members.nats().urls.split(',') })
    const jsm = await nc.jetstreamManager()
    const applied = (l: typeof a) => (l as unknown as { applier: { applied: number } }).applier.applied
    const before = (await jsm.streams.info(names.stream)).state.last_seq
    await waitFor('b to apply the stream', () => applied(b) >= before, 20_000)
    await b.close()
    // Without b no write is acknowledged (a majority of two), but each is published, one message each.
    for (let i = 1; i <= 4; i++) await a.put(`/k/${i}`, 'v').catch(() => undefined)
    const last = (await jsm.streams.info(names.stream)).state.last_seq
    expect(last).to.equal(before + 4)
    for (let seq = before + 1; seq < last; seq++) expect(await jsm.streams.deleteMessage(names.stream, seq)).to.equal(true)
    await a.close()

    b = await members.start('b', extra)
    await waitFor('b to find the hole and try again', () => lines.some((l) => l.includes('did not answer')), 15_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${lines.join('\n')}`)
    })
    expect((b as unknown as { applier: { failure?: Error } }).applier.failure).to.equal(undefined)
    a = await members.start('a', extra)
    await waitFor('b to apply past the hole', () => applied(b) >= last, 30_000)
    expect((b as unknown as { applier: { failure?: Error } }).applier.failure).to.equal(undefined)
    expect((await b.range('/k/', { rangeEnd: '/k0', serializable: true })).kvs).to.have.length(5)
    await nc.close()
  })
})
