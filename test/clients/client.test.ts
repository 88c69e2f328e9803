/**
 * KvlogClient against a real `kvlog serve` process: keys and values, transactions, ranges, paging at one
 * revision, history, compaction, status, cursors, bytes that are not UTF-8, and the failure classes
 * (server codes, CompactedError, UnreachableError, OutcomeUnknownError: never retried).
 */
import { expect } from 'chai'
import { CompactedError, KvlogClient, KvlogClientError, OutcomeUnknownError, UnreachableError } from '../../clients/index.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { closedPort, TcpProxy } from './tcp-proxy.js'

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p
  } catch (err) {
    return err as Error
  }
  throw new Error('expected the promise to reject')
}

const str = (b: Buffer | undefined) => b?.toString('utf8')

describe('KvlogClient (real server)', function () {
  this.timeout(30_000)
  let server: ServerProcess
  let kv: KvlogClient

  before(async () => {
    server = await startServerProcess()
    kv = new KvlogClient({ endpoint: server.http })
  })

  after(async () => {
    await server?.cleanup()
  })

  describe('keys and values', () => {
    it('put, get, prevKv, versions and reads at an older revision', async () => {
      const r1 = await kv.put('/kv/a', 'one')
      const r2 = await kv.put('/kv/a', 'two', { prevKv: true })
      expect(r2.revision).to.equal(r1.revision + 1)
      expect(str(r2.prevKv?.value)).to.equal('one')
      expect(r2.prevKv?.modRevision).to.equal(r1.revision)
      const now = await kv.get('/kv/a')
      expect(str(now?.value)).to.equal('two')
      expect(now).to.include({ createRevision: r1.revision, modRevision: r2.revision, version: 2, lease: 0n })
      const then = await kv.get('/kv/a', { revision: r1.revision })
      expect(str(then?.value)).to.equal('one')
      expect(then?.version).to.equal(1)
      expect(await kv.get('/kv/missing')).to.equal(undefined)
      const first = await kv.put('/kv/b', 'x')
      expect(first.prevKv).to.equal(undefined)
    })

    it('range: prefix, fromKey, rangeEnd, limit, keysOnly, countOnly, sort and filters', async () => {
      for (const k of ['c', 'a', 'b', 'd']) await kv.put(`/rg/${k}`, `v-${k}`)
      const all = await kv.range('/rg/', { prefix: true })
      expect(all.kvs.map((x) => str(x.key))).to.deep.equal(['/rg/a', '/rg/b', '/rg/c', '/rg/d'])
      expect(all.count).to.equal(4)
      expect(all.more).to.equal(false)
      expect(all.continue).to.equal(undefined)

      const half = await kv.range('/rg/b', { rangeEnd: '/rg/d' })
      expect(half.kvs.map((x) => str(x.key))).to.deep.equal(['/rg/b', '/rg/c'])
      const from = await kv.range('/rg/c', { fromKey: true })
      expect(from.kvs.map((x) => str(x.key)))
        .to.include.members(['/rg/c', '/rg/d'])
        .and.not.include('/rg/b')

      const limited = await kv.range('/rg/', { prefix: true, limit: 3 })
      expect(limited.kvs).to.have.length(3)
      expect(limited.more).to.equal(true)
      expect(limited.count).to.equal(4)
      expect(limited.continue).to.be.a('string')

      const keysOnly = await kv.range('/rg/', { prefix: true, keysOnly: true })
      expect(keysOnly.kvs).to.have.length(4)
      for (const x of keysOnly.kvs) expect(x.value.length).to.equal(0)

      const countOnly = await kv.range('/rg/', { prefix: true, countOnly: true })
      expect(countOnly.count).to.equal(4)
      expect(countOnly.kvs).to.have.length(0)

      const desc = await kv.range('/rg/', { prefix: true, sortOrder: 'DESCEND' })
      expect(desc.kvs.map((x) => str(x.key))).to.deep.equal(['/rg/d', '/rg/c', '/rg/b', '/rg/a'])
      const byMod = await kv.range('/rg/', { prefix: true, sortTarget: 'MOD', sortOrder: 'DESCEND' })
      expect(str(byMod.kvs[0].key)).to.equal('/rg/d')

      const minMod = all.kvs[0].modRevision // '/rg/a' was written after '/rg/c'
      const filtered = await kv.range('/rg/', { prefix: true, minModRevision: minMod })
      expect(filtered.kvs.map((x) => str(x.key))).to.deep.equal(['/rg/a', '/rg/b', '/rg/d'])
      expect(filtered.count).to.equal(4) // count ignores the min/max filters (etcd)
    })

    it('delete: one key, a prefix, prevKvs, and deleting nothing writes nothing', async () => {
      for (const k of ['x', 'y', 'z']) await kv.put(`/del/${k}`, k)
      const one = await kv.delete('/del/x', { prevKv: true })
      expect(one.deleted).to.equal(1)
      expect(one.prevKvs?.map((x) => str(x.value))).to.deep.equal(['x'])
      const rest = await kv.delete('/del/', { prefix: true })
      expect(rest.deleted).to.equal(2)
      expect(rest.revision).to.equal(one.revision + 1)
      expect(rest.prevKvs).to.equal(undefined)
      const none = await kv.delete('/del/', { prefix: true })
      expect(none.deleted).to.equal(0)
      expect(none.revision).to.equal(rest.revision)
      expect((await kv.range('/del/', { prefix: true })).count).to.equal(0)
    })

    it('txn: compare and swap, one revision for all writes, a read-only txn writes nothing', async () => {
      const { revision } = await kv.put('/txn/a', '1')
      const ok = await kv.txn({
        compare: [{ key: '/txn/a', target: 'MOD', result: 'EQUAL', value: revision }],
        success: [
          { type: 'put', key: '/txn/a', value: '2', prevKv: true },
          { type: 'put', key: '/txn/b', value: 'b' },
          { type: 'range', key: '/txn/', prefix: true },
        ],
        failure: [{ type: 'range', key: '/txn/a' }],
      })
      expect(ok.succeeded).to.equal(true)
      expect(ok.revision).to.equal(revision + 1)
      expect(ok.results.map((r) => r.type)).to.deep.equal(['put', 'put', 'range'])
      expect((ok.results[0].prevKv as { value: string }).value).to.equal('1')
      expect((ok.results[2] as { count: number }).count).to.equal(2) // sees the earlier ops
      const a = await kv.get('/txn/a')
      const b = await kv.get('/txn/b')
      expect([a?.modRevision, b?.modRevision]).to.deep.equal([ok.revision, ok.revision])

      // The same compare now fails: the failure branch runs and nothing is written.
      const stale = await kv.txn({
        compare: [{ key: '/txn/a', target: 'MOD', result: 'EQUAL', value: revision }],
        success: [{ type: 'put', key: '/txn/a', value: 'lost' }],
        failure: [{ type: 'range', key: '/txn/a' }],
      })
      expect(stale.succeeded).to.equal(false)
      expect(stale.revision).to.equal(ok.revision)
      expect((stale.results[0] as { kvs: Array<{ value: string }> }).kvs[0].value).to.equal('2')

      const dup = await rejection(
        kv.txn({
          compare: [],
          success: [
            { type: 'put', key: '/txn/d', value: '1' },
            { type: 'put', key: '/txn/d', value: '2' },
          ],
          failure: [],
        }),
      )
      expect(dup).to.be.instanceOf(KvlogClientError)
      expect((dup as KvlogClientError).code).to.equal('DUPLICATE_KEY')
      expect((await kv.status()).revision).to.equal(ok.revision)
    })

    it('keys and values that are not UTF-8 round-trip as bytes (put, get, range, delete, history, txn)', async () => {
      const key = Buffer.from([0x2f, 0x62, 0x69, 0x6e, 0x2f, 0xff, 0xfe, 0x00, 0x80]) // "/bin/" + invalid UTF-8
      const value = Buffer.from([0x00, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x90, 0x28, 0xbc, 0xff])
      const utf8Key = '/bin/ключ-🔑'
      const utf8Value = 'значение ✓ 🎉'
      const w1 = await kv.put(key, value)
      await kv.put(utf8Key, utf8Value)
      const got = await kv.get(key)
      expect(Buffer.compare(got!.key, key)).to.equal(0)
      expect(Buffer.compare(got!.value, value)).to.equal(0)
      expect(str((await kv.get(utf8Key))?.value)).to.equal(utf8Value)

      // A non-UTF-8 prefix and a Uint8Array (not a Buffer) key.
      const byPrefix = await kv.range(new Uint8Array([0x2f, 0x62, 0x69, 0x6e, 0x2f, 0xff]), { prefix: true })
      expect(byPrefix.kvs).to.have.length(1)
      expect(Buffer.compare(byPrefix.kvs[0].key, key)).to.equal(0)
      const range = await kv.range('/bin/', { prefix: true })
      expect(range.kvs.map((x) => x.key.toString('hex')).sort()).to.deep.equal(
        [key.toString('hex'), Buffer.from(utf8Key).toString('hex')].sort(),
      )

      const value2 = Buffer.from([0xfe, 0xed, 0xfa, 0xce])
      const w2 = await kv.put(key, value2, { prevKv: true })
      expect(Buffer.compare(w2.prevKv!.value, value)).to.equal(0)
      const h = await kv.history(key, { prevKv: true })
      expect(h.events.map((e) => e.revision)).to.deep.equal([w1.revision, w2.revision])
      expect(Buffer.compare(h.events[1].kv.value, value2)).to.equal(0)
      expect(Buffer.compare(h.events[1].prevKv!.value, value)).to.equal(0)

      const t = await kv.txn({
        compare: [{ keyBase64: key.toString('base64'), target: 'VALUE', result: 'EQUAL', valueBase64: value2.toString('base64') }],
        success: [{ type: 'range', keyBase64: key.toString('base64') }],
        failure: [],
      })
      expect(t.succeeded).to.equal(true)
      expect((t.results[0].kvs as Array<Record<string, string>>)[0].valueBase64).to.equal(value2.toString('base64'))

      const d = await kv.delete(key, { prevKv: true })
      expect(d.deleted).to.equal(1)
      expect(Buffer.compare(d.prevKvs![0].value, value2)).to.equal(0)
      expect(await kv.get(key)).to.equal(undefined)
    })
  })

  describe('list paging', () => {
    it('pages are one snapshot at the first page’s revision while writes happen between pages', async () => {
      for (let i = 0; i < 25; i++) await kv.put(`/page/${String(i).padStart(2, '0')}`, `v${i}`)
      const snapshot = await kv.range('/page/', { prefix: true })
      const seen: string[] = []
      const revisions: number[] = []
      const sizes: number[] = []
      let n = 0
      let lastWrite = snapshot.revision
      for await (const page of kv.list('/page/', { prefix: true, pageSize: 10 })) {
        revisions.push(page.revision)
        sizes.push(page.kvs.length)
        for (const x of page.kvs) seen.push(`${str(x.key)}=${str(x.value)}@${x.modRevision}`)
        // Between pages: change, add and delete keys in and around the next page.
        await kv.put(`/page/${String(n * 10 + 12).padStart(2, '0')}`, 'changed')
        lastWrite = (await kv.put(`/page/${String(n * 10 + 15)}-new`, 'new')).revision
        const d = await kv.delete(`/page/${String(n * 10 + 18).padStart(2, '0')}`)
        if (d.deleted > 0) lastWrite = d.revision
        n++
      }
      expect(sizes).to.deep.equal([10, 10, 5])
      expect(new Set(revisions)).to.have.property('size', 1)
      expect(revisions[0]).to.equal(snapshot.revision)
      expect(seen).to.deep.equal(snapshot.kvs.map((x) => `${str(x.key)}=${str(x.value)}@${x.modRevision}`))
      // The writes did happen: the current state differs from the snapshot.
      const current = await kv.range('/page/', { prefix: true })
      expect(current.revision).to.equal(lastWrite)
      expect(lastWrite).to.be.greaterThan(snapshot.revision + 5)
      expect(current.kvs.map((x) => str(x.key))).to.include('/page/15-new')
    })

    it('list at an explicit revision, and an empty range yields one empty page', async () => {
      const r0 = (await kv.put('/lrev/a', '1')).revision
      await kv.put('/lrev/b', '2')
      const pages = []
      for await (const p of kv.list('/lrev/', { prefix: true, pageSize: 1, revision: r0 })) pages.push(p)
      expect(pages.map((p) => p.kvs.map((x) => str(x.key)))).to.deep.equal([['/lrev/a']])
      expect(pages[0].revision).to.equal(r0)
      const empty = []
      for await (const p of kv.list('/nothing-here/', { prefix: true })) empty.push(p)
      expect(empty).to.have.length(1)
      expect(empty[0].kvs).to.have.length(0)
    })
  })

  describe('history', () => {
    it('events in order with times and prevKv, paged by limit and nextRevision, by revisions and by times', async () => {
      const revs: number[] = []
      revs.push((await kv.put('/hist/a', '1')).revision)
      revs.push((await kv.put('/hist/b', '1')).revision)
      await new Promise((r) => setTimeout(r, 30))
      const middle = new Date().toISOString()
      await new Promise((r) => setTimeout(r, 30))
      revs.push((await kv.put('/hist/a', '2')).revision)
      revs.push((await kv.delete('/hist/b')).revision)
      const all = await kv.history('/hist/', { prefix: true, prevKv: true })
      expect(all.events.map((e) => [e.revision, e.type, str(e.kv.key)])).to.deep.equal([
        [revs[0], 'PUT', '/hist/a'],
        [revs[1], 'PUT', '/hist/b'],
        [revs[2], 'PUT', '/hist/a'],
        [revs[3], 'DELETE', '/hist/b'],
      ])
      expect(all.more).to.equal(false)
      expect(all.nextRevision).to.equal(all.revision + 1)
      expect(str(all.events[2].prevKv?.value)).to.equal('1')
      expect(all.events[3].kv.version).to.equal(0)
      expect(all.events[3].kv.modRevision).to.equal(revs[3])
      for (const e of all.events) expect(Number.isFinite(Date.parse(e.time))).to.equal(true)

      const pages: number[][] = []
      let from: number | undefined
      for (;;) {
        const h = await kv.history('/hist/', { prefix: true, limit: 1, ...(from ? { from } : {}) })
        pages.push(h.events.map((e) => e.revision))
        if (!h.more) break
        from = h.nextRevision
      }
      expect(pages.flat()).to.deep.equal(revs)

      const window = await kv.history('/hist/', { prefix: true, from: revs[1], to: revs[2] })
      expect(window.events.map((e) => e.revision)).to.deep.equal([revs[1], revs[2]])
      const byTime = await kv.history('/hist/', { prefix: true, fromTime: middle })
      expect(byTime.events.map((e) => e.revision)).to.deep.equal([revs[2], revs[3]])
      const beforeTime = await kv.history('/hist/', { prefix: true, toTime: middle })
      expect(beforeTime.events.map((e) => e.revision)).to.deep.equal([revs[0], revs[1]])
    })
  })

  describe('cursors', () => {
    it('commit, list with lag, move back, delete', async () => {
      const { revision } = await kv.put('/cur/a', '1')
      const c = await kv.commitCursor('ctl-1', revision)
      expect(c).to.include({ name: 'ctl-1', revision, expired: false })
      await kv.put('/cur/a', '2')
      const listed = (await kv.cursors()).find((x) => x.name === 'ctl-1')
      expect(listed).to.include({ revision, lag: 1, expired: false })
      expect((await kv.commitCursor('ctl-1', revision - 1)).revision).to.equal(revision - 1)
      await kv.deleteCursor('ctl-1')
      expect((await kv.cursors()).map((x) => x.name)).to.not.include('ctl-1')
      const future = await rejection(kv.commitCursor('ctl-1', revision + 1000))
      expect((future as KvlogClientError).code).to.equal('FUTURE_REVISION')
      const badName = await rejection(kv.commitCursor('bad name!', revision))
      expect(badName).to.be.instanceOf(KvlogClientError)
      expect((badName as KvlogClientError).code).to.equal('INVALID_ARGUMENT')
    })
  })

  describe('errors', () => {
    it('EMPTY_KEY and other server errors keep their code and status', async () => {
      const before = (await kv.status()).revision as number
      const empty = await rejection(kv.put('', 'x'))
      expect(empty).to.be.instanceOf(KvlogClientError)
      expect(empty).to.not.be.instanceOf(CompactedError)
      expect((empty as KvlogClientError).code).to.equal('EMPTY_KEY')
      expect((empty as KvlogClientError).status).to.equal(400)
      const emptyRead = await rejection(kv.range(''))
      expect((emptyRead as KvlogClientError).code).to.equal('EMPTY_KEY')
      const future = await rejection(kv.get('/a', { revision: before + 1000 }))
      expect((future as KvlogClientError).code).to.equal('FUTURE_REVISION')
      expect((future as KvlogClientError).details.currentRevision).to.equal(before)
      const both = await rejection(kv.range('/a', { prefix: true, fromKey: true }))
      expect((both as KvlogClientError).code).to.equal('INVALID_ARGUMENT')
      expect((await kv.status()).revision).to.equal(before)
    })

    it('an endpoint nobody listens on: UnreachableError for reads and writes', async () => {
      const dead = new KvlogClient({ endpoint: `http://127.0.0.1:${await closedPort()}` })
      const calls = [
        () => dead.put('/a', 'b'),
        () => dead.get('/a'),
        () => dead.status(),
        () => dead.delete('/a'),
        () => dead.txn({ compare: [], success: [], failure: [] }),
      ]
      for (const call of calls) {
        const err = await rejection(call())
        expect(err).to.be.instanceOf(UnreachableError)
        expect((err as UnreachableError).code).to.equal('UNREACHABLE')
      }
    })

    describe('through a proxy that fails connections', () => {
      let proxy: TcpProxy
      beforeEach(async () => {
        proxy = await TcpProxy.start(server.http)
      })
      afterEach(async () => {
        await proxy.close()
      })

      it('a put whose connection drops after it was sent: OutcomeUnknownError, applied exactly once, never retried', async () => {
        const via = new KvlogClient({ endpoint: proxy.url })
        const before = (await kv.status()).revision as number
        proxy.dropResponses = 1
        const err = await rejection(via.put('/unknown/a', 'once'))
        expect(err).to.be.instanceOf(OutcomeUnknownError)
        expect((err as OutcomeUnknownError).code).to.equal('OUTCOME_UNKNOWN')
        await new Promise((r) => setTimeout(r, 300)) // a retry, if there were one, would land now
        expect(proxy.count('PUT /v1/kv')).to.equal(1)
        const h = await kv.history('/unknown/a')
        expect(h.events.map((e) => [e.type, str(e.kv.value)])).to.deep.equal([['PUT', 'once']])
        expect((await kv.status()).revision).to.equal(before + 1)
        expect(h.events[0].revision).to.equal(before + 1)
      })

      it('delete and txn behave the same; the proxy then works again', async () => {
        const via = new KvlogClient({ endpoint: proxy.url })
        await kv.put('/unknown/d', '1')
        const before = (await kv.status()).revision as number
        // The delete's answer, then that of the connection the client opens to check whether the port
        // speaks TLS (clients/probe-tls.ts), then the txn's.
        proxy.dropResponses = 3
        expect(await rejection(via.delete('/unknown/d'))).to.be.instanceOf(OutcomeUnknownError)
        expect(
          await rejection(via.txn({ compare: [], success: [{ type: 'put', key: '/unknown/t', value: '1' }], failure: [] })),
        ).to.be.instanceOf(OutcomeUnknownError)
        expect(proxy.count('DELETE /v1/kv')).to.equal(1)
        expect(proxy.count('POST /v1/txn')).to.equal(1)
        expect((await kv.status()).revision).to.equal(before + 2)
        expect((await kv.history('/unknown/t')).events).to.have.length(1)
        // Nothing left to drop: the same client works.
        expect((await via.put('/unknown/after', 'x')).revision).to.equal(before + 3)
      })

      it('a put whose response never comes (timeout): OutcomeUnknownError, applied once', async () => {
        const via = new KvlogClient({ endpoint: proxy.url, timeoutMs: 400 })
        const before = (await kv.status()).revision as number
        proxy.swallowResponses = true
        const err = await rejection(via.put('/unknown/slow', 'x'))
        expect(err).to.be.instanceOf(OutcomeUnknownError)
        proxy.swallowResponses = false
        await new Promise((r) => setTimeout(r, 200))
        expect(proxy.count('PUT /v1/kv')).to.equal(1)
        expect((await kv.status()).revision).to.equal(before + 1)
      })

      it('reads are retried after a dropped connection; a read that always fails ends in UnreachableError', async () => {
        await kv.put('/retry/a', 'v')
        const via = new KvlogClient({ endpoint: proxy.url })
        proxy.dropResponses = 1
        expect(str((await via.get('/retry/a'))?.value)).to.equal('v')
        expect(proxy.count('GET /v1/kv')).to.equal(2)

        const limited = new KvlogClient({ endpoint: proxy.url, readRetries: 2 })
        proxy.dropResponses = 100
        const err = await rejection(limited.get('/retry/a'))
        expect(err).to.be.instanceOf(UnreachableError)
        expect(proxy.count('GET /v1/kv')).to.equal(2 + 3) // one try and two retries
      })
    })
  })

  describe('compaction and status (own server)', () => {
    let s2: ServerProcess
    let c2: KvlogClient
    before(async () => {
      s2 = await startServerProcess()
      c2 = new KvlogClient({ endpoint: s2.http })
    })
    after(async () => {
      await s2?.cleanup()
    })

    it('status reflects writes; compact raises the floor; COMPACTED is a CompactedError with compactRevision', async () => {
      const s0 = await c2.status()
      expect(s0.revision).to.equal(1)
      const revs: number[] = []
      for (let i = 0; i < 10; i++) revs.push((await c2.put('/c/a', String(i))).revision)
      await c2.commitCursor('slow', revs[2])
      const st = await c2.status()
      expect(st.revision).to.equal(revs[9])
      expect((st.cursors as Array<{ name: string }>).map((x) => x.name)).to.include('slow')
      expect((st.segments as unknown[]).length).to.be.greaterThan(0)

      const r = await c2.compact(revs[5])
      expect(r.compactRevision).to.equal(revs[5])
      expect(r.removedRevisions).to.be.a('number').greaterThan(0)
      expect((await c2.status()).compactRevision).to.equal(revs[5])

      const read = await rejection(c2.get('/c/a', { revision: revs[1] }))
      expect(read).to.be.instanceOf(CompactedError)
      expect((read as CompactedError).code).to.equal('COMPACTED')
      expect((read as CompactedError).status).to.equal(410)
      expect((read as CompactedError).compactRevision).to.equal(revs[5])
      expect(str((await c2.get('/c/a', { revision: revs[5] }))?.value)).to.equal('5')

      const hist = await rejection(c2.history('/c/a', { from: revs[0] }))
      expect(hist).to.be.instanceOf(CompactedError)
      expect((hist as CompactedError).compactRevision).to.equal(revs[5])
      const h = await c2.history('/c/a')
      expect(h.compactRevision).to.equal(revs[5])
      expect(h.events[0].revision).to.be.at.least(revs[5])

      const again = await rejection(c2.compact(revs[5]))
      expect(again).to.be.instanceOf(CompactedError)
      expect((again as CompactedError).compactRevision).to.equal(revs[5])
      const future = await rejection(c2.compact(revs[9] + 5))
      expect(future).to.be.instanceOf(KvlogClientError).and.not.instanceOf(CompactedError)
      expect((future as KvlogClientError).code).to.equal('FUTURE_REVISION')

      const cursor = await rejection(c2.commitCursor('slow', revs[1]))
      expect(cursor).to.be.instanceOf(CompactedError)
      expect((cursor as CompactedError).compactRevision).to.equal(revs[5])
    })

    it('a list whose revision is compacted between pages fails with CompactedError', async () => {
      for (let i = 0; i < 6; i++) await c2.put(`/cl/${i}`, 'v')
      const pages = c2.list('/cl/', { prefix: true, pageSize: 2 })
      const first = await pages.next()
      expect(first.done).to.equal(false)
      const at = (first.value as { revision: number }).revision
      await c2.put('/cl/other', 'x')
      await c2.put('/cl/other', 'y')
      await c2.compact(at + 2)
      const err = await rejection(pages.next())
      expect(err).to.be.instanceOf(CompactedError)
      expect((err as CompactedError).compactRevision).to.equal(at + 2)
    })
  })
})
