/**
 * A member whose consumer is lost while no new one can be made (JetStream's meta leader being elected:
 * its server was the one lost) goes on applying by reading the next messages from the stream's leader,
 * on a real copy with a scripted stream: the first consumer delivers two messages and then nothing while
 * the stream holds six, and every consumer asked for after it is refused. The applier applies all six,
 * counted as read while the consumer was made again, and then, caught up, reads one message at a time.
 * Without the reads it stays at two until a consumer can be made.
 */
import { expect } from 'chai'
import { chain, scriptedAppliers, type Script } from '../../support/scripted-stream.js'
import { waitFor } from '../../support/wait.js'

describe('Applier: reads from the stream while its consumer is made again', function () {
  this.timeout(30_000)
  const { start, lines } = scriptedAppliers()

  it('applies what the stream holds while no consumer can be made', async () => {
    const quorum = chain(6, 'q')
    const script: Script = {
      quorum,
      consumersAllowed: 1,
      deliveries: [() => quorum.slice(0, 2).map((data, i) => ({ seq: i + 1, data }))],
    }
    const { applier: a, metrics, made } = start(script, { stallTimeoutMs: 300 })
    await a.start()
    await waitFor('all six applied', () => a.applied === 6 || a.failure !== undefined, 10_000).catch(() => undefined)
    expect(a.failure, lines.join('\n')).to.equal(undefined)
    expect(a.applied, lines.join('\n')).to.equal(6)
    expect(metrics.readWhileRemakingConsumer).to.equal(4)
    expect(made(), 'no consumer made after the first').to.equal(1)
    // Caught up and still without a consumer (made again every 100 ms here, each time refused): one read at
    // a time, every 50 ms or so, not sixteen (which was 100-160 reads in these 500 ms).
    const before = script.reads ?? 0
    await new Promise((r) => setTimeout(r, 500))
    expect((script.reads ?? 0) - before).to.be.below(40)
  })
})
