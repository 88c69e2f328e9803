import { expect } from 'chai'
import { WatchOutbox, type OutboxOptions } from '../../../apiserver/etcd/watch-outbox.js'

/** A transport that holds every write until the test releases it; heads are readable text. */
function harness(options: Partial<OutboxOptions> = {}) {
  const written: string[] = []
  const pending: Array<() => void> = []
  let drained = 0
  const outbox = new WatchOutbox(
    { inflight: 1, maxMessages: 100, maxBytes: 1 << 20, maxResponseBytes: 1 << 20, ...options },
    (response, done) => {
      written.push(Buffer.concat(response).toString())
      pending.push(done)
    },
    (id, revision) => Buffer.from(`[${id}@${revision}]`),
    () => drained++,
  )
  const release = (n = Infinity) => {
    while (n-- > 0 && pending.length > 0) pending.shift()!()
  }
  const flush = () => {
    while (pending.length > 0) release(1)
  }
  return { outbox, written, release, flush, drained: () => drained }
}

const b = (s: string) => Buffer.from(s)

describe('apiserver/etcd/watch-outbox', () => {
  it('sends at once while the transport keeps up', () => {
    const h = harness({ inflight: 4 })
    h.outbox.response(1, b('created1'))
    h.outbox.events(1, 5, b('e5'))
    h.outbox.events(1, 6, b('e6'))
    expect(h.written).to.deep.equal(['created1', '[1@5]e5', '[1@6]e6'])
  })

  it("coalesces a backed-up watch's batches into one response with the last revision", () => {
    const h = harness()
    h.outbox.response(1, b('created1')) // in flight: the rest queue
    h.outbox.events(1, 5, b('e5'))
    h.outbox.events(2, 5, b('f5'))
    h.outbox.events(1, 6, b('e6'))
    h.outbox.events(1, 7, b('e7'))
    h.outbox.events(2, 7, b('f7'))
    h.flush()
    expect(h.written).to.deep.equal(['created1', '[1@7]e5e6e7', '[2@7]f5f7'])
  })

  it("keeps per-watch order: a watch's own response closes its open events response", () => {
    const h = harness()
    h.outbox.response(1, b('created1'))
    h.outbox.events(1, 5, b('e5'))
    h.outbox.response(1, b('progress1@5'))
    h.outbox.events(1, 6, b('e6'))
    h.flush()
    expect(h.written).to.deep.equal(['created1', '[1@5]e5', 'progress1@5', '[1@6]e6'])
  })

  it('a stream-wide response closes every open events response', () => {
    const h = harness()
    h.outbox.response(1, b('created1'))
    h.outbox.events(1, 5, b('e5'))
    h.outbox.events(2, 5, b('f5'))
    h.outbox.response(undefined, b('progress-all@5'))
    h.outbox.events(1, 6, b('e6'))
    h.outbox.events(2, 6, b('f6'))
    h.flush()
    expect(h.written).to.deep.equal(['created1', '[1@5]e5', '[2@5]f5', 'progress-all@5', '[1@6]e6', '[2@6]f6'])
  })

  it('stops growing a response at maxResponseBytes', () => {
    const h = harness({ maxResponseBytes: 4 })
    h.outbox.response(1, b('created1'))
    for (const rev of [5, 6, 7]) h.outbox.events(1, rev, b(`e${rev}`))
    h.flush()
    expect(h.written).to.deep.equal(['created1', '[1@6]e5e6', '[1@7]e7'])
  })

  it('reports backed up over maxMessages or maxBytes, and drained below half of both', () => {
    const h = harness({ maxMessages: 4, maxBytes: 1000 })
    expect(h.outbox.response(1, b('c'))).to.equal(true) // in flight
    const accepted = [2, 3, 4, 5, 6].map((id) => h.outbox.events(id, 9, b('x')))
    expect(accepted).to.deep.equal([true, true, true, true, false]) // more than 4 queued
    expect(h.outbox.queuedMessages).to.equal(5)
    h.release(2)
    expect(h.drained()).to.equal(0) // 3 queued: above half of 4
    h.release(1)
    expect(h.drained()).to.equal(1)
    const big = harness({ maxBytes: 10 })
    big.outbox.response(1, b('c'))
    expect(big.outbox.events(2, 9, Buffer.alloc(11))).to.equal(false)
  })

  it('drops everything on close', () => {
    const h = harness()
    h.outbox.response(1, b('created1'))
    h.outbox.events(1, 5, b('e5'))
    h.outbox.close()
    h.flush()
    expect(h.written).to.deep.equal(['created1'])
  })
})
