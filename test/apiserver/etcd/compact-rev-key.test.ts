/**
 * kube-apiserver's compactor and a compaction that is not its own (etcd's auto-compaction; kvlog's
 * retention and quota policies, docs/api.md) on the same store: the other compaction never touches
 * compact_rev_key, so the apiserver's next round still wins its version compare, and its Compact of a
 * revision the other one already passed fails with etcd's ErrCompacted, which the apiserver logs and
 * retries at its next interval. Same answers from etcd and kvlog.
 */
import { expect } from 'chai'
import { connectEtcd3, grpc, grpcError } from '../../support/etcd3-proto.js'
import { targets } from './targets.js'

const key = (s: string) => Buffer.from(s)
const COMPACT_KEY = 'compact_rev_key'
type TxnResponse = {
  header: { revision: string }
  succeeded: boolean
  responses: Array<{ response_range?: { kvs: Array<{ value: Buffer; version: string }> } }>
}

for (const target of targets) {
  describe(`compact_rev_key and another compactor, against ${target.name}`, function () {
    this.timeout(30_000)

    it('the other compaction leaves compact_rev_key alone; the apiserver compacting below it gets ErrCompacted', async () => {
      const store = await target.start()
      const g = connectEtcd3(store.endpoint)
      try {
        for (let i = 0; i < 5; i++) await g.call('KV', 'Put', { key: key(`/registry/pods/ns/p${i}`), value: key(String(i)) }) // 2..6
        const round = (version: string, rev: string) =>
          g.call('KV', 'Txn', {
            compare: [{ key: key(COMPACT_KEY), target: 'Version', result: 'Equal', version }],
            success: [{ request_put: { key: key(COMPACT_KEY), value: key(rev) } }],
            failure: [{ request_range: { key: key(COMPACT_KEY) } }],
          }) as Promise<TxnResponse>
        const first = await round('0', '4') // 7
        expect(first.succeeded).to.equal(true)
        await g.call('KV', 'Compact', { revision: '4' })
        // Another compactor moves the floor past what the apiserver will ask for next.
        await g.call('KV', 'Compact', { revision: first.header.revision })
        const second = await round('1', '6') // 8: the version compare still holds
        expect([second.succeeded, second.header.revision]).to.deep.equal([true, '8'])
        const err = await grpcError(g.call('KV', 'Compact', { revision: '6' }))
        expect(err.code).to.equal(grpc.status.OUT_OF_RANGE)
        expect(err.details).to.equal('etcdserver: mvcc: required revision has been compacted')
        const after = (await g.call('KV', 'Range', { key: key(COMPACT_KEY) })) as { kvs: Array<{ value: Buffer; version: string }> }
        expect([after.kvs[0]!.value.toString(), after.kvs[0]!.version]).to.deep.equal(['6', '2'])
      } finally {
        g.close()
        await store.stop()
      }
    })
  })
}
