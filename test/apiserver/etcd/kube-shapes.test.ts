/**
 * The exact etcd requests kube-apiserver (k8s.io/apiserver storage/etcd3) sends, over raw gRPC, against
 * every target: create/update/delete txns guarded by mod_revision, paged lists (limit + revision),
 * the compact_rev_key protocol followed by Compact, watches from listRV + 1 with progress requests, and
 * leases for objects with a TTL. Each target starts fresh, so revisions are exact.
 */
import { expect } from 'chai'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { connectEtcd3, grpc, grpcError, openWatch, prefixEnd } from '../../support/etcd3-proto.js'
import { targets, type Started } from './targets.js'

const key = (s: string) => Buffer.from(s)
const str = (b: unknown) => (b as Buffer).toString()

type Msg = Record<string, unknown>

type Kv = { key: Buffer; value: Buffer; create_revision: string; mod_revision: string; version: string; lease: string }
type RangeResponse = { header: { revision: string }; kvs: Kv[]; more: boolean; count: string }
type TxnResponse = { header: { revision: string }; succeeded: boolean; responses: { response: string; response_range?: RangeResponse }[] }

// Enum names are those of the etcd3 package's proto (Mod, Equal), not etcd's (MOD, EQUAL); the numbers are etcd's.
const modIs = (k: string, rev: number | string) => ({ key: key(k), target: 'Mod', result: 'Equal', mod_revision: String(rev) })
const put = (k: string, value: string, lease = '0') => ({ request_put: { key: key(k), value: Buffer.from(value), lease } })
const get = (k: string) => ({ request_range: { key: key(k) } })
const del = (k: string) => ({ request_delete_range: { key: key(k) } })

for (const target of targets) {
  describe(`kube-apiserver request shapes against ${target.name}`, function () {
    this.timeout(30_000)
    let store: Started
    let g: EtcdGrpc
    const txn = async (req: Msg) => (await g.call('KV', 'Txn', req)) as TxnResponse
    const range = async (req: Msg) => (await g.call('KV', 'Range', req)) as RangeResponse

    before(async () => {
      store = await target.start()
      g = connectEtcd3(store.endpoint)
    })

    after(async () => {
      g?.close()
      await store?.stop()
    })

    it('create: If(mod_revision == 0) Then(Put); a second create fails and writes nothing', async () => {
      const created = await txn({ compare: [modIs('/registry/pods/ns/a', 0)], success: [put('/registry/pods/ns/a', '{"v":1}')] })
      expect([created.succeeded, created.header.revision]).to.deep.equal([true, '2'])
      expect(created.responses.map((r) => r.response)).to.deep.equal(['response_put'])
      const again = await txn({ compare: [modIs('/registry/pods/ns/a', 0)], success: [put('/registry/pods/ns/a', '{"v":2}')] })
      expect([again.succeeded, again.header.revision, again.responses]).to.deep.equal([false, '2', []])
    })

    it('update: If(mod_revision == rev) Then(Put) Else(Range) — a stale update gets the current object', async () => {
      const ok = await txn({
        compare: [modIs('/registry/pods/ns/a', 2)],
        success: [put('/registry/pods/ns/a', '{"v":3}')],
        failure: [get('/registry/pods/ns/a')],
      })
      expect([ok.succeeded, ok.header.revision]).to.deep.equal([true, '3'])
      const stale = await txn({
        compare: [modIs('/registry/pods/ns/a', 2)],
        success: [put('/registry/pods/ns/a', '{"v":4}')],
        failure: [get('/registry/pods/ns/a')],
      })
      expect(stale.succeeded).to.equal(false)
      const current = stale.responses[0]!.response_range!.kvs[0]!
      expect([str(current.value), current.mod_revision, current.create_revision, current.version]).to.deep.equal(['{"v":3}', '3', '2', '2'])
    })

    it('delete: If(mod_revision == rev) Then(DeleteRange) Else(Range)', async () => {
      await txn({ compare: [modIs('/registry/pods/ns/b', 0)], success: [put('/registry/pods/ns/b', '{}')] }) // 4
      const stale = await txn({
        compare: [modIs('/registry/pods/ns/b', 3)],
        success: [del('/registry/pods/ns/b')],
        failure: [get('/registry/pods/ns/b')],
      })
      expect([stale.succeeded, stale.responses[0]!.response_range!.kvs[0]!.mod_revision]).to.deep.equal([false, '4'])
      const ok = await txn({
        compare: [modIs('/registry/pods/ns/b', 4)],
        success: [del('/registry/pods/ns/b')],
        failure: [get('/registry/pods/ns/b')],
      })
      expect([ok.succeeded, ok.header.revision]).to.deep.equal([true, '5'])
      expect(ok.responses[0]).to.have.nested.property('response_delete_range.deleted', '1')
      expect((await range({ key: key('/registry/pods/ns/b') })).kvs).to.deep.equal([])
    })

    it("paged list: prefix Range with limit, then the next pages at the first page's revision", async () => {
      for (let i = 0; i < 7; i++) {
        await txn({ compare: [modIs(`/registry/cm/ns/c${i}`, 0)], success: [put(`/registry/cm/ns/c${i}`, `${i}`)] }) // 6..12
      }
      const prefix = '/registry/cm/'
      const end = prefixEnd(prefix)
      const first = await range({ key: key(prefix), range_end: end, limit: 3 })
      expect([first.header.revision, first.more, first.count, first.kvs.map((kv) => str(kv.key))]).to.deep.equal([
        '12',
        true,
        '7',
        ['/registry/cm/ns/c0', '/registry/cm/ns/c1', '/registry/cm/ns/c2'],
      ])
      // Writes between pages must not show in the later pages of the same list.
      await txn({ compare: [modIs('/registry/cm/ns/c1', 7)], success: [del('/registry/cm/ns/c1')] }) // 13
      await txn({ compare: [modIs('/registry/cm/ns/c9', 0)], success: [put('/registry/cm/ns/c9', '9')] }) // 14
      const names: string[] = first.kvs.map((kv) => str(kv.key))
      let last = first
      while (last.more) {
        const from = Buffer.concat([last.kvs[last.kvs.length - 1]!.key, Buffer.from([0])])
        last = await range({ key: from, range_end: end, limit: 3, revision: first.header.revision })
        expect(last.header.revision).to.equal('14') // the header is the store's revision, not the read revision
        names.push(...last.kvs.map((kv) => str(kv.key)))
      }
      expect(names).to.deep.equal([0, 1, 2, 3, 4, 5, 6].map((i) => `/registry/cm/ns/c${i}`))
      const counted = await range({ key: key(prefix), range_end: end, count_only: true })
      expect([counted.count, counted.kvs]).to.deep.equal(['7', []])
      const keysOnly = await range({ key: key(prefix), range_end: end, keys_only: true, limit: 1 })
      expect([str(keysOnly.kvs[0]!.key), keysOnly.kvs[0]!.value.length, keysOnly.count, keysOnly.more]).to.deep.equal([
        '/registry/cm/ns/c0',
        0,
        '7',
        true,
      ])
    })

    it('compaction: the compact_rev_key txn (version compare), then Compact; reads below fail with OUT_OF_RANGE', async () => {
      const compactKey = 'compact_rev_key'
      const round = (version: string, rev: string) =>
        txn({
          compare: [{ key: key(compactKey), target: 'Version', result: 'Equal', version }],
          success: [put(compactKey, rev)],
          failure: [get(compactKey)],
        })
      const firstRound = await round('0', '12') // 15
      expect([firstRound.succeeded, firstRound.header.revision]).to.deep.equal([true, '15'])
      await g.call('KV', 'Compact', { revision: '12' })
      // Another apiserver that saw version 0 loses the race and learns the current version from the Else.
      const loser = await round('0', '13')
      expect(loser.succeeded).to.equal(false)
      const seen = loser.responses[0]!.response_range!.kvs[0]!
      expect([str(seen.value), seen.version]).to.deep.equal(['12', '1'])
      const second = await round(seen.version, '15') // 16
      expect([second.succeeded, second.header.revision]).to.deep.equal([true, '16'])
      await g.call('KV', 'Compact', { revision: '15', physical: true })
      const old = await grpcError(range({ key: key('/registry/cm/ns/c0'), revision: '14' }))
      expect(old.code).to.equal(grpc.status.OUT_OF_RANGE)
      expect(old.details).to.equal('etcdserver: mvcc: required revision has been compacted')
      const again = await grpcError(g.call('KV', 'Compact', { revision: '15' }))
      expect(again.code).to.equal(grpc.status.OUT_OF_RANGE)
      const future = await grpcError(range({ key: key('x'), revision: '100' }))
      expect([future.code, future.details]).to.deep.equal([
        grpc.status.OUT_OF_RANGE,
        'etcdserver: mvcc: required revision is a future revision',
      ])
      expect((await range({ key: key('/registry/cm/ns/c0'), revision: '15' })).kvs).to.have.length(1)
    })

    it('watch from listRV + 1 with prev_kv and progress_notify; a progress request answers watch_id -1 at the store revision', async () => {
      const prefix = '/registry/cm/'
      const list = await range({ key: key(prefix), range_end: prefixEnd(prefix) })
      const listRV = Number(list.header.revision) // 16
      const w = openWatch(g)
      try {
        w.send({
          create_request: {
            key: key(prefix),
            range_end: prefixEnd(prefix),
            start_revision: String(listRV + 1),
            prev_kv: true,
            progress_notify: true,
          },
        })
        const created = await w.next((r) => r.created === true)
        expect(created.watch_id).to.equal('0')
        await txn({ compare: [modIs('/registry/cm/ns/c2', 8)], success: [put('/registry/cm/ns/c2', 'new')] }) // 17
        await txn({ compare: [modIs('/registry/other/x', 0)], success: [put('/registry/other/x', '1')] }) // 18, not watched
        const event = await w.next((r) => (r.events as unknown[]).length > 0)
        const ev = (event.events as { type: string; kv: Kv; prev_kv: Kv }[])[0]!
        expect([event.watch_id, ev.type, str(ev.kv.key), ev.kv.mod_revision, str(ev.prev_kv.value)]).to.deep.equal([
          '0',
          'Put',
          '/registry/cm/ns/c2',
          '17',
          '2',
        ])
        const from = w.responses.length
        w.send({ progress_request: {} })
        const progress = await w.next((r) => r.watch_id === '-1', { from })
        expect(progress.events).to.deep.equal([])
        expect((progress.header as { revision: string }).revision).to.equal('18')
        expect([progress.created, progress.canceled]).to.deep.equal([false, false])
        expect(w.error()).to.equal(undefined)
      } finally {
        w.end()
      }
    })

    it('leases for TTL objects: grant, put with lease, time-to-live with keys, list, revoke deletes', async () => {
      const grant = (await g.call('Lease', 'LeaseGrant', { TTL: 3600 })) as { ID: string; TTL: string; error: string }
      expect([grant.TTL, grant.error]).to.deep.equal(['3600', ''])
      expect(BigInt(grant.ID) > 0n).to.equal(true)
      await txn({ compare: [modIs('/registry/events/ns/e1', 0)], success: [put('/registry/events/ns/e1', 'ev', grant.ID)] }) // 19
      const kv = (await range({ key: key('/registry/events/ns/e1') })).kvs[0]!
      expect(kv.lease).to.equal(grant.ID)
      const ttl = (await g.call('Lease', 'LeaseTimeToLive', { ID: grant.ID, keys: true })) as {
        ID: string
        TTL: string
        grantedTTL: string
        keys: Buffer[]
      }
      expect([ttl.ID, ttl.grantedTTL, ttl.keys.map(str)]).to.deep.equal([grant.ID, '3600', ['/registry/events/ns/e1']])
      expect(Number(ttl.TTL)).to.be.within(3590, 3600)
      const leases = (await g.call('Lease', 'LeaseLeases', {})) as { leases: { ID: string }[] }
      expect(leases.leases.map((l) => l.ID)).to.deep.equal([grant.ID])
      await g.call('Lease', 'LeaseRevoke', { ID: grant.ID }) // 20
      const after = await range({ key: key('/registry/events/ns/e1') })
      expect([after.kvs, after.header.revision]).to.deep.equal([[], '20'])
      const missing = await grpcError(g.call('Lease', 'LeaseRevoke', { ID: grant.ID }))
      expect([missing.code, missing.details]).to.deep.equal([grpc.status.NOT_FOUND, 'etcdserver: requested lease not found'])
      const unknownTtl = (await g.call('Lease', 'LeaseTimeToLive', { ID: grant.ID })) as { TTL: string }
      expect(unknownTtl.TTL).to.equal('-1')
    })

    it('health check: a Range on the health key answers with a header', async () => {
      const health = await range({ key: key('health') })
      expect([health.kvs, health.header.revision]).to.deep.equal([[], '20'])
      const status = (await g.call('Maintenance', 'Status', {})) as { version: string; header: { revision: string } }
      expect(status.version).to.match(/^3\.\d+\.\d+$/)
      expect(status.header.revision).to.equal('20')
    })
  })
}
