/**
 * instrumentLog: the Log the front doors use, with write latency recorded. Calls that are not timed must
 * reach the log itself, so state a method updates is the log's, shared with the timed methods, and never a
 * copy held by the wrapper. A cluster member numbers the commands it submits with a counter: a lease grant
 * (not timed) and a put (timed) made through the wrapper must not share a number, or the put would be
 * answered with the grant's result.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { instrumentLog, Metrics } from '../../apiserver/metrics.js'
import { openJetStreamLog, type JetStreamLog } from '../../log/jetstream/jetstream-log.js'
import { memberOptions } from '../support/cluster-members.js'
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.js'
import { waitFor } from '../support/wait.js'

describe('apiserver/metrics: instrumentLog', function () {
  this.timeout(120_000)
  let nats: NatsCluster
  let dir: string
  let log: JetStreamLog

  before(async () => {
    nats = await startNatsCluster()
    dir = await mkdtemp(join(tmpdir(), 'kvlog-metrics-'))
    log = await openJetStreamLog(memberOptions(nats.urls, 'metrics', 'm0', join(dir, 'm0'), { natsReplicas: 1 }))
    await waitFor('a leader', () => log.isLeading, 30_000)
  })

  after(async () => {
    await log?.close().catch(() => undefined)
    await nats?.stop()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it('answers each write with its own result when untimed and timed calls alternate (cluster member)', async () => {
    const wrapped = instrumentLog(log, new Metrics(log))
    for (let i = 0; i < 5; i++) {
      // Submitted together: each must come back with its own answer.
      const [lease, put, txn] = await Promise.all([
        wrapped.leaseGrant(60),
        wrapped.put(Buffer.from(`k${i}`), Buffer.from('v')),
        wrapped.txn({ success: [{ type: 'put', key: Buffer.from(`t${i}`), value: Buffer.from('v') }] }),
      ])
      expect(lease.ttl).to.equal(60)
      expect(put.revision).to.be.a('number')
      expect(txn.results).to.have.length(1)
      await wrapped.leaseRevoke(lease.id)
    }
    expect(Reflect.ownKeys(wrapped)).to.deep.equal(Reflect.ownKeys(log))
  })

  it('times puts, deletes and txns', async () => {
    const m = new Metrics(log)
    const w = instrumentLog(log, m)
    await w.put(Buffer.from('a'), Buffer.from('1'))
    await w.delete(Buffer.from('a'))
    await w.txn({ success: [{ type: 'put', key: Buffer.from('b'), value: Buffer.from('2') }] })
    const text = await m.registry.metrics()
    expect(/kvlog_write_duration_seconds_count(?:\{[^}]*\})? (\d+)/.exec(text)?.[1]).to.equal('3')
  })
})
