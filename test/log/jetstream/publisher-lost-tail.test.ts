/**
 * The leader's publisher against a real stream on three nats-servers, when another leader wrote messages
 * that a member applied and this leader did not:
 * - while the stream holds them, the publisher catches up and its message follows the last of them;
 * - once the stream lost them (deleted and made again, as after a loss of its tail), the publisher sends
 *   nothing: JetStream would accept a publish fenced below them, and that message would take the
 *   sequence of one the members applied. It refuses the group (NOT_APPLIED) and steps down, so the next
 *   leader republishes them first.
 */
import { expect } from 'chai'
import { connect, type JetStreamManager, type NatsConnection } from 'nats'
import { ensureStream } from '../../../log/jetstream/connection.js'
import { decodeMessage, encode, messageHash, type LogMessage } from '../../../log/jetstream/messages.js'
import { clusterNames, type ClusterNames } from '../../../log/jetstream/options.js'
import { Publisher } from '../../../log/jetstream/publisher.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'

/** Publishes `count` messages after the stream's end as another leader would: chained and fenced. */
async function anotherLeaderWrites(nc: NatsConnection, jsm: JetStreamManager, names: ClusterNames, count: number): Promise<string> {
  let last = (await jsm.streams.info(names.stream)).state.last_seq
  let prev = last === 0 ? '' : messageHash((await jsm.streams.getMessage(names.stream, { seq: last })).data)
  for (let i = 0; i < count; i++) {
    const m: LogMessage = { v: 1, ts: Date.now(), epoch: 1, prev, cmds: [{ rid: `other.${i}`, cmd: { type: 'join', name: 'other' } }] }
    const data = encode(m)
    await nc.jetstream().publish(names.subject, data, { msgID: `other.1.${last + 1}`, expect: { lastSequence: last } })
    last++
    prev = messageHash(data)
  }
  return prev
}

describe('Publisher: a fence never below what a member applied, on a real stream', function () {
  this.timeout(60_000)
  let nats: NatsCluster
  let nc: NatsConnection
  let jsm: JetStreamManager
  before(async () => {
    nats = await startNatsCluster()
    nc = await connect({ servers: nats.urls.split(',') })
    jsm = await nc.jetstreamManager()
  })
  after(async () => {
    await nc?.close()
    await nats?.stop()
  })

  /**
   * A publisher that leads from the stream's current end; its member's copy is `copy` (what it applied),
   * and `reported` is the highest sequence another member reported durable.
   */
  async function leader(names: ClusterNames, copy: { seq: number; hash: string }, reported: () => number) {
    const state = { stepDowns: 0 }
    const publisher = new Publisher(
      nc.jetstream(),
      {
        subject: names.subject,
        memberName: 'a',
        publishTimeoutMs: 2000,
        groupDeadlineMs: 5000,
        maxGroupCommands: 16,
        maxGroupBytes: 1 << 20,
      },
      {
        epoch: () => 2,
        // As JetStreamLog's: applies what the stream holds (here: reads its last message), refuses a stream
        // that ends before the copy.
        catchUp: async () => {
          const last = (await jsm.streams.info(names.stream)).state.last_seq
          if (copy.seq > last) throw new Error(`the stream ends at ${last}, before this member's copy`)
          if (last > copy.seq)
            Object.assign(copy, { seq: last, hash: messageHash((await jsm.streams.getMessage(names.stream, { seq: last })).data) })
          return { seq: last, hash: copy.hash }
        },
        stepDown: () => void state.stepDowns++,
        lastTimestamp: () => 0,
        applied: () => Promise.resolve(),
        lastHash: () => copy.hash,
        knownLast: () => Math.max(copy.seq, reported()),
        observe: () => undefined,
        stored: () => undefined,
        messageAt: (seq) => jsm.streams.getMessage(names.stream, { seq }).then((m) => m.data),
      },
    )
    publisher.activate(copy.seq)
    return { publisher, state }
  }

  const command = { rid: 'a.1', cmd: { type: 'join' as const, name: 'a' } }

  it('catches up with messages another member applied, and follows the last of them', async () => {
    const names = clusterNames('fence-follow')
    await ensureStream(jsm, names, 3)
    await anotherLeaderWrites(nc, jsm, names, 2)
    const copy = { seq: 2, hash: messageHash((await jsm.streams.getMessage(names.stream, { seq: 2 })).data) }
    let reported = 2
    const { publisher, state } = await leader(names, copy, () => reported)
    // Another leader writes 3..5; a member applied them and said so; this leader's copy did not.
    const lastHash = await anotherLeaderWrites(nc, jsm, names, 3)
    reported = 5
    expect(await publisher.enqueue(command, 10, Date.now() + 10_000)).to.equal(6)
    expect(decodeMessage((await jsm.streams.getMessage(names.stream, { seq: 6 })).data).prev).to.equal(lastHash)
    expect(state.stepDowns).to.equal(0)
  })

  it('sends nothing once the stream lost messages a member applied, and steps down', async () => {
    const names = clusterNames('fence-lost')
    await ensureStream(jsm, names, 3)
    const { publisher, state } = await leader(names, { seq: 0, hash: '' }, () => 3)
    // Another leader wrote 1..3, a member applied them and reported them durable; the stream loses them.
    await anotherLeaderWrites(nc, jsm, names, 3)
    await jsm.streams.delete(names.stream)
    await ensureStream(jsm, names, 3)
    const refusal = await publisher.enqueue(command, 10, Date.now() + 10_000).then(
      () => 'published',
      (err: { code?: string }) => err.code,
    )
    expect(refusal).to.equal('NOT_APPLIED')
    expect(state.stepDowns).to.equal(1)
    expect((await jsm.streams.info(names.stream)).state.last_seq, 'nothing took the lost sequences').to.equal(0)
  })
})
