/**
 * apiserver/drained.ts: a writer waiting out backpressure goes on when the stream drains, and also when
 * it closes or its gRPC call is cancelled (a client gone mid-snapshot), without leaving listeners behind.
 */
import { expect } from 'chai'
import { EventEmitter } from 'node:events'
import { drainedOrGone } from '../../apiserver/drained.js'

/** Whether `p` has settled by the next macrotask. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false
  void p.then(() => (done = true))
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

describe('apiserver/drained', () => {
  for (const event of ['drain', 'close', 'cancelled']) {
    it(`resolves on '${event}' and removes its listeners`, async () => {
      const stream = new EventEmitter()
      const waiting = drainedOrGone(stream)
      expect(await settled(waiting)).to.equal(false)
      stream.emit(event)
      expect(await settled(waiting)).to.equal(true)
      for (const e of ['drain', 'close', 'cancelled']) expect(stream.listenerCount(e), e).to.equal(0)
    })
  }

  it('waits while nothing happens, and ignores other events', async () => {
    const stream = new EventEmitter()
    const waiting = drainedOrGone(stream)
    stream.emit('data', Buffer.from('x'))
    expect(await settled(waiting)).to.equal(false)
    stream.emit('drain')
    await waiting
  })
})
