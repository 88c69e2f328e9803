/**
 * The tail refill's choice of source, against scripted members and stream: when the member furthest
 * ahead holds another history (its kept messages do not follow the stream), the lost tail comes back
 * from the next member ahead, byte for byte at its old sequences; when none can give it, the takeover
 * stops with the first reason.
 */
import { expect } from 'chai'
import type { JetStreamClient, JetStreamManager, JetStreamPublishOptions } from 'nats'
import type { DurablePosition, Durability } from '../../../log/jetstream/durability.js'
import { encode, messageHash, type LogMessage } from '../../../log/jetstream/messages.js'
import { clusterNames } from '../../../log/jetstream/options.js'
import { refillTail, type RefillContext } from '../../../log/jetstream/refill.js'
import type { KeptMessage, TailStore } from '../../../log/jetstream/tail.js'

/** Messages from..to, the first following `prev`; `tag` makes a different history. */
function chain(from: number, to: number, prev: string, tag: string): KeptMessage[] {
  const out: KeptMessage[] = []
  for (let seq = from; seq <= to; seq++) {
    const m: LogMessage = { v: 1, ts: seq, epoch: 1, prev, cmds: [{ rid: `${tag}.${seq}`, cmd: { type: 'join', name: tag } }] }
    const data = encode(m)
    out.push({ seq, data })
    prev = messageHash(data)
  }
  return out
}

function setUp(copies: Record<string, KeptMessage[]>, positions: DurablePosition[], last: number, lastData: Uint8Array) {
  const published: Array<{ seq: number; data: Buffer }> = []
  const lines: string[] = []
  let streamLast = last
  const ctx: RefillContext = {
    js: {
      publish: (_subject: string, data: Uint8Array, opts: Partial<JetStreamPublishOptions>) => {
        const expect = opts.expect?.lastSequence ?? -1
        if (expect !== streamLast)
          return Promise.reject(Object.assign(new Error('wrong last sequence'), { api_error: { err_code: 10071 } }))
        streamLast++
        published.push({ seq: streamLast, data: Buffer.from(data) })
        return Promise.resolve({ seq: streamLast, stream: 'S', duplicate: false })
      },
    } as unknown as JetStreamClient,
    jsm: { streams: { info: () => Promise.resolve({ state: { last_seq: streamLast } }) } } as unknown as JetStreamManager,
    names: clusterNames('refill'),
    durability: {
      survey: () => Promise.resolve(positions),
      fetch: (name: string, from: number, to: number) => Promise.resolve((copies[name] ?? []).filter((k) => k.seq >= from && k.seq <= to)),
      fetchFromPeers: () => Promise.resolve({ kept: [], unanswered: [] }),
    } as unknown as Durability,
    tail: {
      get: (seq: number) => Promise.resolve(seq === last ? lastData : undefined),
      range: () => Promise.resolve([]),
    } as unknown as TailStore,
    timeoutMs: 1000,
    publishTimeoutMs: 1000,
    absent: new Set(),
    say: (line) => void lines.push(line),
    leading: () => true,
  }
  return { ctx, published, lines }
}

describe('refillTail', () => {
  const base = chain(1, 3, '', 'base')
  const head = base[2]
  const good = chain(4, 6, messageHash(head.data), 'good')
  const other = chain(4, 8, 'another-history', 'other')

  it('goes on from the next member ahead when the furthest one holds another history', async () => {
    const { ctx, published } = setUp(
      { x: other, y: good },
      [
        { name: 'self', seq: 3, hash: messageHash(head.data) },
        { name: 'x', seq: 8, hash: messageHash(other[4].data) },
        { name: 'y', seq: 6, hash: messageHash(good[2].data) },
      ],
      3,
      head.data,
    )
    expect(await refillTail(ctx, 3)).to.equal(6)
    expect(published.map((p) => p.seq)).to.deep.equal([4, 5, 6])
    published.forEach((p, i) => expect(Buffer.compare(p.data, Buffer.from(good[i].data))).to.equal(0))
  })

  it('stops the takeover with the first reason when no member ahead can give the lost tail', async () => {
    const { ctx, published } = setUp(
      { x: other },
      [
        { name: 'self', seq: 3, hash: messageHash(head.data) },
        { name: 'x', seq: 8, hash: messageHash(other[4].data) },
      ],
      3,
      head.data,
    )
    const err = await refillTail(ctx, 3).then(
      () => undefined,
      (e: Error) => e,
    )
    expect(err).to.be.instanceOf(Error)
    expect(published).to.deep.equal([])
  })
})
