/**
 * Members configured with different request limits reach the same verdict on every write, with two
 * in-process members over real nats-servers: a transaction the submitter's limits allow is applied by a
 * member whose own maxTxnOps and maxRequestBytes are smaller, so both copies hold the same revisions.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openJetStreamLog, type JetStreamLog } from '../../../log/jetstream/jetstream-log.js'
import { memberOptions } from '../../support/cluster-members.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { waitFor } from '../../support/wait.js'

describe('JetStreamLog: members with different request limits', function () {
  this.timeout(90_000)
  let nats: NatsCluster
  let dir: string
  const open: JetStreamLog[] = []
  before(async () => {
    nats = await startNatsCluster()
    dir = await mkdtemp(join(tmpdir(), 'kvlog-js-determinism-'))
  })
  after(async () => {
    for (const log of open) await log.close().catch(() => undefined)
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('apply what the submitter checked, so both copies hold the same revisions', async () => {
    const start = async (name: string, copy: { maxTxnOps?: number; maxRequestBytes?: number }) => {
      const log = await openJetStreamLog(memberOptions(nats.urls, 'limits', name, join(dir, name), { natsReplicas: 1 }, copy))
      open.push(log)
      return log
    }
    const a = await start('a', { maxTxnOps: 128, maxRequestBytes: 1024 * 1024 })
    await waitFor('a to lead', () => a.isLeading, 20_000)
    const b = await start('b', { maxTxnOps: 4, maxRequestBytes: 1024 })
    const roster = (l: JetStreamLog) => (l as unknown as { applier: { roster: string[] } }).applier.roster.length
    await waitFor('both on the roster', () => roster(a) === 2 && roster(b) === 2, 30_000)

    const many = await a.txn({ success: Array.from({ length: 10 }, (_, i) => ({ type: 'put' as const, key: `/many/${i}`, value: 'v' })) })
    await a.put('/big', Buffer.alloc(4096, 'x'))
    const last = await a.put('/after', 'x')
    // Acknowledged once both copies have it (a majority of two): b applied all three.
    expect(b.revision).to.equal(a.revision)
    expect(b.revision).to.equal(last.revision)
    const fromB = await b.range('/', { rangeEnd: '0', serializable: true })
    const fromA = await a.range('/', { rangeEnd: '0', serializable: true })
    expect(fromB.kvs.map((kv) => [kv.key.toString(), kv.modRevision])).to.deep.equal(
      fromA.kvs.map((kv) => [kv.key.toString(), kv.modRevision]),
    )
    expect(fromB.kvs).to.have.length(12)
    expect(many.wrote).to.equal(true)
  })
})
