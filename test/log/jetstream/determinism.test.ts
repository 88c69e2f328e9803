/**
 * Members configured with different request limits reach the same verdict on every write, with two
 * in-process members over real nats-servers: a transaction the submitter's limits allow is applied by a
 * member whose own maxTxnOps, maxRequestBytes and maxTxnDepth are smaller, so both copies hold the same revisions.
 */
import { expect } from 'chai'
import { inProcessMembers } from '../../support/cluster-members.js'
import { waitFor } from '../../support/wait.js'
import type { Op } from '../../../log/types.js'

describe('JetStreamLog: members with different request limits', function () {
  this.timeout(90_000)
  const members = inProcessMembers('limits')

  it('apply what the submitter checked, so both copies hold the same revisions', async () => {
    const a = await members.start('a', { natsReplicas: 1 }, { maxTxnOps: 128, maxRequestBytes: 1024 * 1024, maxTxnDepth: 8 })
    await waitFor('a to lead', () => a.isLeading, 20_000)
    const b = await members.start('b', { natsReplicas: 1 }, { maxTxnOps: 4, maxRequestBytes: 1024, maxTxnDepth: 1 })
    await members.waitRoster([a, b])
    const many = await a.txn({ success: Array.from({ length: 10 }, (_, i) => ({ type: 'put' as const, key: `/many/${i}`, value: 'v' })) })
    await a.put('/big', Buffer.alloc(4096, 'x'))
    const nested = (depth: number): Op =>
      depth === 0 ? { type: 'put', key: '/deep', value: 'v' } : { type: 'txn', compare: [], success: [nested(depth - 1)], failure: [] }
    const deep = await a.txn({ success: [nested(3)] })
    const last = await a.put('/after', 'x')
    // Acknowledged once both copies have it (a majority of two): b applied all three.
    expect(b.revision).to.equal(a.revision)
    expect(b.revision).to.equal(last.revision)
    const fromB = await b.range('/', { rangeEnd: '0', serializable: true })
    const fromA = await a.range('/', { rangeEnd: '0', serializable: true })
    expect(fromB.kvs.map((kv) => [kv.key.toString(), kv.modRevision])).to.deep.equal(
      fromA.kvs.map((kv) => [kv.key.toString(), kv.modRevision]),
    )
    expect(fromB.kvs).to.have.length(13)
    expect(many.wrote).to.equal(true)
    expect(deep.wrote).to.equal(true)
  })
})
