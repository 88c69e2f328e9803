/**
 * Forwarded writes in batches, with in-process members over three real nats-servers: the writes a
 * follower's clients submit in one turn of the event loop reach the leader as one request, and each gets
 * its own answer (its own revision, or its own error).
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, type NatsConnection } from 'nats'
import { ForwardBatcher } from '../../../log/jetstream/forward-batch.js'
import { openJetStreamLog, type JetStreamLog } from '../../../log/jetstream/jetstream-log.js'
import { decode, encode } from '../../../log/jetstream/messages.js'
import { clusterNames } from '../../../log/jetstream/options.js'
import { memberOptions } from '../../support/cluster-members.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { waitFor } from '../../support/wait.js'

describe('JetStreamLog: forwarded writes in batches', function () {
  this.timeout(90_000)
  let nats: NatsCluster
  let dir: string
  let watcher: NatsConnection
  const open: JetStreamLog[] = []
  before(async () => {
    nats = await startNatsCluster()
    dir = await mkdtemp(join(tmpdir(), 'kvlog-js-forward-'))
    watcher = await connect({ servers: nats.urls.split(',') })
  })
  after(async () => {
    for (const log of open) await log.close().catch(() => undefined)
    await watcher?.close()
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const start = async (name: string) => {
    const log = await openJetStreamLog(
      memberOptions(nats.urls, 'fwd', name, join(dir, name), { natsReplicas: 1, clusterRequestTimeout: 5000 }),
    )
    open.push(log)
    return log
  }

  it('sends the writes of one turn as one request and answers each on its own', async () => {
    const a = await start('a')
    await waitFor('a to lead', () => a.isLeading, 20_000)
    const b = await start('b')
    await b.put('warm', 'up')
    const requests: string[] = []
    const sub = watcher.subscribe(`${clusterNames('fwd').forward}.>`, { callback: (_err, msg) => requests.push(msg.subject) })
    await watcher.flush()
    const puts = Array.from({ length: 20 }, (_, i) => b.put(`k${i}`, String(i)))
    // A transaction the leader's copy refuses on its own (a lease that does not exist) among them.
    const refused = b.put('leased', 'x', { lease: 12345n }).then(
      () => undefined,
      (err: { code?: string }) => err.code,
    )
    const revisions = (await Promise.all(puts)).map((r) => r.revision)
    expect(await refused).to.equal('LEASE_NOT_FOUND')
    sub.unsubscribe()
    expect(requests.filter((s) => s.endsWith('.batch'))).to.have.length(1)
    expect(requests.filter((s) => !s.endsWith('.batch'))).to.deep.equal([])
    expect(new Set(revisions).size).to.equal(20)
    for (let i = 0; i < 20; i++) expect((await a.get(`k${i}`, { serializable: false }))?.value.toString()).to.equal(String(i))
  })
})

describe('ForwardBatcher: batches under the largest message', () => {
  it('splits a turn into requests of at most maxBytes of commands; a larger command goes alone', async () => {
    const requests: number[] = []
    const singles: number[] = []
    const batcher = new ForwardBatcher({
      maxBytes: () => 10,
      request: async (payload) => {
        const { cmds } = decode<{ cmds: Uint8Array[] }>(payload)
        requests.push(cmds.length)
        return encode({ replies: cmds.map(() => ({ seq: 1 })) })
      },
      timeout: (left) => left,
      sendOne: async (bytes) => void singles.push(bytes.length),
      refused: () => undefined,
      observe: () => undefined,
    })
    const deadline = Date.now() + 10_000
    await Promise.all([4, 4, 4, 12, 3, 3].map((n) => batcher.forward(Buffer.alloc(n), deadline)))
    // 4+4 | 4 (the next 12 would pass 10) | 12 alone | 3+3
    expect(requests).to.deep.equal([2, 2])
    expect(singles).to.deep.equal([4, 12])
  })
})
