/**
 * A consumer whose nats-server holds another history than the stream's quorum (a replica that came back
 * from a pause holding a message the others never stored). The applier runs on a real copy (LevelDB on
 * disk) with a scripted stream: each consumer it makes delivers what the script gives it, and the
 * stream's leader answers look-ups from the quorum's history.
 *
 * - The copy applied the quorum's message at a sequence (from the publish acknowledgement, as a leader
 *   does) and a consumer delivers another one there: the leader holds the copy's, so the consumer is made
 *   again and the applier goes on.
 * - A consumer delivers a message that does not follow the copy while the leader holds one that does:
 *   made again, goes on.
 * - The leader holds neither (the copy is off the stream's history): the applier stops, as before.
 * - The consumer delivered a message first and the stream then acknowledges another one at that sequence
 *   to this member as leader: the copy took a message the quorum did not store; the applier stops.
 */
import { expect } from 'chai'
import { messageHash } from '../../../log/jetstream/messages.js'
import { chain, scriptedAppliers, type Script } from '../../support/scripted-stream.js'
import { waitFor } from '../../support/wait.js'

describe("Applier: a consumer on a server off the stream's history", function () {
  this.timeout(30_000)
  const { start, lines } = scriptedAppliers()

  it('makes the consumer again when it delivers another message at a sequence the copy holds from the quorum', async () => {
    const quorum = chain(6, 'q')
    const fork = chain(1, 'f', messageHash(quorum[2]))[0] // another message 4, after the same 3
    const script: Script = {
      quorum,
      deliveries: [
        // The first consumer: messages 1..3, then nothing until the leader's own 4 is applied (below).
        () => quorum.slice(0, 3).map((data, i) => ({ seq: i + 1, data })),
      ],
    }
    const { applier: a, made, metrics } = start(script)
    await a.start()
    await waitFor('1..3 applied', () => a.applied === 3, 10_000)
    // The leader's message 4, acknowledged by the quorum, is applied from its acknowledgement.
    await a.published(4, quorum[3], 'm.1.4.0')
    await waitFor('4 applied', () => a.applied === 4, 10_000)
    // A consumer on the forked replica delivers its own message 4; the next consumer delivers the quorum's 5..6.
    script.deliveries.push(
      () => [{ seq: 4, data: fork }],
      (from) => quorum.slice(from - 1).map((data, i) => ({ seq: from + i, data })),
    )
    await (a as unknown as { replaceConsumer(): Promise<void> }).replaceConsumer()
    // replaceConsumer() starts after what was submitted (5): the forked consumer is scripted from 4 anyway.
    await waitFor('6 applied', () => a.applied === 6 || a.failure !== undefined, 10_000)
    expect(a.failure, lines.join('\n')).to.equal(undefined)
    expect(a.applied).to.equal(6)
    expect(metrics.consumerForks).to.equal(1)
    expect(made()).to.equal(3)
    expect(lines.join('\n')).to.match(/delivered a message 4 the stream's leader does not hold/)
  })

  it("makes the consumer again when it delivers a message that does not follow the copy and the leader's does", async () => {
    const quorum = chain(5, 'q')
    const forkAfter = chain(2, 'f', messageHash(chain(1, 'x', messageHash(quorum[1]))[0])) // follows a message 3 the copy never had
    const script: Script = {
      quorum,
      deliveries: [
        () => [...quorum.slice(0, 2).map((data, i) => ({ seq: i + 1, data })), { seq: 3, data: forkAfter[0] }],
        (from) => quorum.slice(from - 1).map((data, i) => ({ seq: from + i, data })),
      ],
    }
    const { applier: a, made, metrics } = start(script)
    await a.start()
    await waitFor('5 applied', () => a.applied === 5 || a.failure !== undefined, 10_000)
    expect(a.failure, lines.join('\n')).to.equal(undefined)
    expect(metrics.consumerForks).to.equal(1)
    expect(made()).to.equal(2)
  })

  it("asks the stream's leader again while it does not answer (its leader being elected)", async () => {
    const quorum = chain(4, 'q')
    const forkAfter = chain(1, 'f', messageHash(chain(1, 'x', messageHash(quorum[1]))[0]))
    const script: Script = {
      quorum,
      unanswered: 3,
      deliveries: [
        () => [...quorum.slice(0, 2).map((data, i) => ({ seq: i + 1, data })), { seq: 3, data: forkAfter[0] }],
        (from) => quorum.slice(from - 1).map((data, i) => ({ seq: from + i, data })),
      ],
    }
    const { applier: a, metrics } = start(script)
    await a.start()
    await waitFor('4 applied', () => a.applied === 4 || a.failure !== undefined, 10_000)
    expect(a.failure, lines.join('\n')).to.equal(undefined)
    expect(script.unanswered).to.equal(0)
    expect(metrics.consumerForks).to.equal(1)
  })

  it('stops when the stream acknowledges to the leader another message than the one its consumer delivered first', async () => {
    const quorum = chain(4, 'q')
    const fork = chain(1, 'f', messageHash(quorum[2]))[0]
    const script: Script = {
      quorum,
      deliveries: [() => [...quorum.slice(0, 3).map((data, i) => ({ seq: i + 1, data })), { seq: 4, data: fork }]],
    }
    const { applier: a } = start(script)
    await a.start()
    await waitFor('4 applied', () => a.applied === 4, 10_000)
    await a.published(4, quorum[3], 'm.1.4.0')
    expect(String(a.failure)).to.match(/off the stream's history/)
  })

  it('stops when the stream leader does not hold this copy’s history either', async () => {
    const quorum = chain(4, 'q')
    const other = chain(2, 'o', messageHash(chain(1, 'x', messageHash(quorum[1]))[0]))
    const script: Script = {
      quorum: [...quorum.slice(0, 2), ...chain(2, 'z', 'elsewhere')],
      deliveries: [() => [...quorum.slice(0, 2).map((data, i) => ({ seq: i + 1, data })), { seq: 3, data: other[0] }]],
    }
    const { applier: a, metrics } = start(script)
    await a.start()
    await waitFor('the applier to stop', () => a.failure !== undefined, 10_000)
    expect(String(a.failure)).to.match(/does not follow this member's copy/)
    expect(a.applied).to.equal(2)
    expect(metrics.consumerForks).to.equal(0)
  })
})
