/**
 * The leader's publisher against a scripted JetStream client (each test decides what a publish answers):
 * - a publish whose outcome is unknown never sends its bytes again once its leadership term ended, even
 *   when the member leads again at once (the old bytes would follow the wrong message);
 * - an unknown outcome is settled by sending the same bytes, id and expected sequence again;
 * - an acknowledgement at any other sequence than the one after the fence makes the leader step down;
 * - a group not stored within its deadline fails OUTCOME_UNKNOWN and the leader steps down;
 * - a command still queued past its deadline is refused (NOT_APPLIED) and never published;
 * - a publish's fence is never below a message this leader stored or applied: after the stream lost such
 *   messages it fails the group and steps down instead of putting other messages at their sequences;
 * - at debug, each attempt says its id, fence, `prev` and bytes, and each outcome its sequence and
 *   duplicate flag or its error code.
 */
import { expect } from 'chai'
import type { JetStreamClient, JetStreamPublishOptions, PubAck } from 'nats'
import { decode, messageHash } from '../../../log/jetstream/messages.js'
import type { LogMessage, Tagged } from '../../../log/jetstream/messages.js'
import { Publisher, type PublisherHooks } from '../../../log/jetstream/publisher.js'

interface Sent {
  data: Buffer
  msgID: string
  expect: number
}

type Answer = (sent: Sent, n: number) => Promise<Partial<PubAck>>

function setUp(
  /** 'fenced': a stream that stores a message only right after its last one (state.lastSeq), else 10071. */
  answer: Answer | 'fenced',
  o: {
    groupDeadlineMs?: number
    publishTimeoutMs?: number
    debug?: (line: string) => void
    /** Runs as a catch-up ends (after its result is taken): what the stream and the copy do meanwhile. */
    afterCatchUp?: () => void
  } = {},
) {
  const sent: Sent[] = []
  // lastSeq: the stream's last sequence; applied: what this member applied of it; reported: the highest
  // sequence another member reported durable.
  const state = { stepDowns: 0, lastSeq: 10, applied: 10, reported: 0 }
  const js = {
    publish: (_subject: string, data: Uint8Array, opts: Partial<JetStreamPublishOptions>) => {
      const s = { data: Buffer.from(data), msgID: opts.msgID ?? '', expect: opts.expect?.lastSequence ?? -1 }
      sent.push(s)
      return answer === 'fenced' ? fencedStream(state, s) : answer(s, sent.length)
    },
  } as unknown as JetStreamClient
  const hooks: PublisherHooks = {
    epoch: () => 7,
    // As JetStreamLog's: the member applies what the stream holds, and refuses a stream that ends before its copy.
    catchUp: () => {
      if (state.applied > state.lastSeq) return Promise.reject(new Error(`the stream ends at ${state.lastSeq}, before this member's copy`))
      state.applied = state.lastSeq
      const result = { seq: state.lastSeq, hash: `hash-${state.lastSeq}` }
      o.afterCatchUp?.()
      return Promise.resolve(result)
    },
    knownLast: () => Math.max(state.applied, state.reported),
    stepDown: () => void state.stepDowns++,
    lastTimestamp: () => 0,
    applied: () => Promise.resolve(),
    lastHash: () => `hash-${state.applied}`,
    observe: () => undefined,
    messageAt: () => Promise.resolve(undefined),
    stored: () => undefined,
  }
  const publisher = new Publisher(
    js,
    {
      subject: 'kvlog.t.log',
      memberName: 'a',
      publishTimeoutMs: o.publishTimeoutMs ?? 100,
      groupDeadlineMs: o.groupDeadlineMs ?? 5000,
      maxGroupCommands: 16,
      maxGroupBytes: 1 << 20,
      ...(o.debug === undefined ? {} : { debug: o.debug }),
    },
    hooks,
  )
  return { publisher, sent, state }
}

const tagged = (rid: string): Tagged => ({ rid, cmd: { type: 'join', name: rid } })
const timeout = () => Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' })
const code = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'resolved',
    (err: { code?: string }) => err.code ?? 'none',
  )
const later = (ms = 10_000) => Date.now() + ms
function fencedStream(stream: { lastSeq: number }, s: Sent): Promise<Partial<PubAck>> {
  if (s.expect !== stream.lastSeq) {
    const err = Object.assign(new Error(`wrong last sequence: ${stream.lastSeq}`), { api_error: { err_code: 10071, code: 400 } })
    return Promise.reject(err)
  }
  stream.lastSeq++
  return Promise.resolve({ seq: stream.lastSeq, stream: 'S', duplicate: false })
}

/** A leader that started at 10, whose member then applied another leader's 11..15; the stream ends at `streamLast`. */
function afterAnotherLeader(streamLast: number) {
  const t = setUp('fenced')
  t.publisher.activate(10)
  t.state.applied = 15
  t.state.lastSeq = streamLast
  return t
}

describe('Publisher', () => {
  it('never sends a publish of an ended term again, even when the member leads again at once', async () => {
    const { publisher, sent, state } = setUp(async (_s, n) => {
      if (n === 1) {
        // No answer; meanwhile this member lost and won the lease again, the stream moved on.
        publisher.deactivate()
        state.lastSeq = 15
        publisher.activate(15)
        throw timeout()
      }
      return { seq: 16, stream: 'S', duplicate: false }
    })
    publisher.activate(10)
    const result = await code(publisher.enqueue(tagged('r1'), 10, later()))
    const first = sent[0]
    expect(decode<LogMessage>(first.data).prev).to.equal('hash-10')
    // Whatever else was sent is not the first term's message.
    for (const s of sent.slice(1)) expect(Buffer.compare(s.data, first.data), 'old bytes sent again').to.not.equal(0)
    expect(result).to.equal('OUTCOME_UNKNOWN')
    // The failed publish belonged to the ended term: the new one goes on.
    expect(state.stepDowns).to.equal(0)
    expect(publisher.leading).to.equal(true)
    expect(await publisher.enqueue(tagged('r2'), 10, later())).to.equal(16)
  })

  it('settles an unknown outcome by sending the same bytes, id and fence again', async () => {
    const { publisher, sent, state } = setUp(async (s, n) => {
      if (n < 3) throw timeout()
      // The first copy was stored: the duplicate answers with its sequence.
      return { seq: s.expect + 1, stream: 'S', duplicate: true }
    })
    publisher.activate(10)
    expect(await publisher.enqueue(tagged('r1'), 10, later())).to.equal(11)
    expect(sent).to.have.length(3)
    for (const s of sent) expect(s).to.deep.equal(sent[0])
    expect(publisher.unknownOutcomes).to.equal(1)
    expect(state.stepDowns).to.equal(0)
  })

  it('steps down when an acknowledgement names another sequence than the one after the fence', async () => {
    const { publisher, state } = setUp(async (s) => ({ seq: s.expect + 3, stream: 'S', duplicate: true }))
    publisher.activate(10)
    expect(await code(publisher.enqueue(tagged('r1'), 10, later()))).to.equal('OUTCOME_UNKNOWN')
    expect(state.stepDowns).to.equal(1)
  })

  it('gives a group one deadline, then fails it OUTCOME_UNKNOWN and steps down', async () => {
    const { publisher, sent, state } = setUp(
      async () => {
        await new Promise((r) => setTimeout(r, 20))
        throw timeout()
      },
      { groupDeadlineMs: 300 },
    )
    publisher.activate(10)
    expect(await code(publisher.enqueue(tagged('r1'), 10, later()))).to.equal('OUTCOME_UNKNOWN')
    expect(state.stepDowns).to.equal(1)
    expect(sent.length).to.be.greaterThan(1)
  })

  it('refuses a command still queued past its deadline without publishing it', async () => {
    const { publisher, sent } = setUp(async (s) => ({ seq: s.expect + 1, stream: 'S', duplicate: false }))
    publisher.activate(10)
    expect(await code(publisher.enqueue(tagged('late'), 10, Date.now() - 1))).to.equal('NOT_APPLIED')
    expect(await publisher.enqueue(tagged('r2'), 10, later())).to.equal(11)
    expect(sent.map((s) => decode<LogMessage>(s.data).cmds.map((c) => c.rid))).to.deep.equal([['r2']])
  })

  it('says at debug what each attempt sends and how it ended', async () => {
    const lines: string[] = []
    const fenced = Object.assign(new Error('wrong last sequence: 12'), { api_error: { err_code: 10071, code: 400 } })
    const { publisher, sent, state } = setUp(
      async (s, n) => {
        if (n === 1) {
          state.lastSeq = 12
          throw fenced
        }
        return { seq: s.expect + 1, stream: 'S', duplicate: true }
      },
      { debug: (line) => lines.push(line) },
    )
    publisher.activate(10)
    expect(await publisher.enqueue(tagged('r1'), 10, later())).to.equal(13)
    const [first, second] = sent
    expect(lines.find((l) => l.includes(`sends ${first.msgID} `)))
      .to.include('expecting last sequence 10')
      .and.include('prev hash-10')
    expect(lines.find((l) => l.includes(`sends ${first.msgID} `))).to.include(`bytes ${messageHash(first.data)}`)
    expect(lines.find((l) => l.startsWith(`kvlog publish: ${first.msgID} failed`))).to.include('10071')
    expect(lines.find((l) => l.includes(`sends ${second.msgID} `)))
      .to.include('expecting last sequence 12')
      .and.include('prev hash-12')
    expect(lines.find((l) => l.startsWith(`kvlog publish: ${second.msgID} acknowledged`)))
      .to.include('sequence 13')
      .and.include('duplicate')
  })

  it('never publishes after the stream lost a message this leader stored', async () => {
    const { publisher, sent, state } = setUp('fenced')
    publisher.activate(10)
    expect(await publisher.enqueue(tagged('r1'), 10, later())).to.equal(11)
    // The stream loses message 11 before this member applied it.
    state.lastSeq = 10
    expect(await code(publisher.enqueue(tagged('r2'), 10, later()))).to.equal('NOT_APPLIED')
    expect(state.stepDowns).to.equal(1)
    expect(sent.filter((s) => s.expect < 11).length, 'publishes under a fence below the stored message').to.equal(1)
  })

  it('never publishes under a fence below what this member applied', async () => {
    // The stream lost the other leader's messages.
    const { publisher, sent, state } = afterAnotherLeader(10)
    expect(await code(publisher.enqueue(tagged('r1'), 10, later()))).to.equal('NOT_APPLIED')
    expect(sent).to.deep.equal([])
    expect(state.stepDowns).to.equal(1)
  })

  it('never publishes under a fence below what another member reported durable', async () => {
    // Another leader wrote 11..15, another member applied them, this one had not; then the stream lost them.
    const { publisher, sent, state } = setUp('fenced')
    publisher.activate(10)
    state.reported = 15
    expect(await code(publisher.enqueue(tagged('r1'), 10, later()))).to.equal('NOT_APPLIED')
    expect(sent).to.deep.equal([])
    expect(state.stepDowns).to.equal(1)
  })

  it("catches up before publishing once it applied another leader's messages", async () => {
    const { publisher, sent, state } = afterAnotherLeader(15)
    expect(await publisher.enqueue(tagged('r1'), 10, later())).to.equal(16)
    expect(sent.map((s) => s.expect)).to.deep.equal([15])
    expect(decode<LogMessage>(sent[0].data).prev).to.equal('hash-15')
    expect(state.stepDowns).to.equal(0)
  })

  it("sends each message after the catch-up's last one, even when the copy applied another meanwhile", async () => {
    let writes = 1
    const { publisher, sent, state } = setUp('fenced', {
      // Another leader's message lands and is applied while the catch-up answers (once).
      afterCatchUp: () => {
        if (writes-- <= 0) return
        state.lastSeq++
        state.applied++
      },
    })
    publisher.activate(10)
    state.lastSeq = 12
    state.applied = 12
    expect(await publisher.enqueue(tagged('r1'), 10, later())).to.equal(14)
    for (const s of sent) expect(decode<LogMessage>(s.data).prev, `the message fenced at ${s.expect}`).to.equal(`hash-${s.expect}`)
    expect(state.stepDowns).to.equal(0)
  })

  it('refuses commands with NOT_APPLIED once it stops leading', async () => {
    const { publisher } = setUp(() => new Promise(() => undefined))
    expect(await code(publisher.enqueue(tagged('r1'), 10, later()))).to.equal('NOT_APPLIED')
  })
})
