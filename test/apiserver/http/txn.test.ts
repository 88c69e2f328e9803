/**
 * POST /v1/txn against a real `kvlog serve` process started with `--max-txn-ops 4 --max-request-bytes 4KiB`:
 * the compare-and-swap patterns kube-apiserver uses (k8s.io/apiserver/pkg/storage/etcd3/store.go), compares on every target, failure
 * branches, nested transactions, and the validation errors (DUPLICATE_KEY, TOO_MANY_OPS, REQUEST_TOO_LARGE).
 */
import { expect } from 'chai'
import { b64, expectError, keys, ok, useServer, type Reply } from './helpers.js'

const MAX_TXN_OPS = 4
const MAX_REQUEST_BYTES = 4096

describe('native HTTP API: /v1/txn (real process)', function () {
  this.timeout(30_000)
  const server = useServer(['--max-txn-ops', String(MAX_TXN_OPS), '--max-request-bytes', '4KiB'])
  const api = () => server().api

  const modOf = async (key: string) => (await api().mustRange({ key })).kvs[0]?.modRevision ?? 0

  /** Runs `request` and asserts it wrote nothing (same revision before and after). */
  async function expectNoWrite<T>(request: () => Promise<Reply<T>>): Promise<Reply<T>> {
    const before = await api().revision()
    const reply = await request()
    expect(await api().revision(), 'the rejected request wrote something').to.equal(before)
    return reply
  }

  describe('kube-apiserver patterns', () => {
    const create = (key: string, value: string) =>
      api().mustTxn({
        compare: [{ key, target: 'MOD', result: 'EQUAL', value: 0 }],
        success: [{ type: 'put', key, value }],
      })
    const update = (key: string, rev: number, value: string) =>
      api().mustTxn({
        compare: [{ key, target: 'MOD', result: 'EQUAL', value: rev }],
        success: [{ type: 'put', key, value }],
        failure: [{ type: 'range', key }],
      })
    const remove = (key: string, rev: number) =>
      api().mustTxn({
        compare: [{ key, target: 'MOD', result: 'EQUAL', value: rev }],
        success: [{ type: 'delete', key, prevKv: true }],
        failure: [{ type: 'range', key }],
      })

    it('creates only when the key does not exist (mod_revision == 0)', async () => {
      const key = '/registry/pods/default/a'
      const r = await create(key, 'pod-a')
      expect(r.succeeded).to.equal(true)
      expect(r.results).to.deep.equal([{ type: 'put' }])
      expect(await modOf(key)).to.equal(r.header.revision)
      const again = await create(key, 'pod-a-2')
      expect(again.succeeded).to.equal(false)
      expect(again.results).to.deep.equal([])
      expect(again.header.revision, 'a failed create must not write').to.equal(r.header.revision)
      expect((await api().mustRange({ key })).kvs[0].value).to.equal('pod-a')
    })

    it('updates only at the expected mod revision; a stale update gets the current object from the failure range', async () => {
      const key = '/registry/pods/default/b'
      const created = (await create(key, 'v1')).header.revision
      const ok1 = await update(key, created, 'v2')
      expect(ok1.succeeded).to.equal(true)
      expect(ok1.header.revision).to.equal(created + 1)
      const stale = await update(key, created, 'v3')
      expect(stale.succeeded).to.equal(false)
      expect(stale.header.revision).to.equal(ok1.header.revision)
      expect(stale.results).to.have.length(1)
      expect(stale.results[0]).to.deep.equal({
        type: 'range',
        more: false,
        count: 1,
        kvs: [{ key, value: 'v2', createRevision: created, modRevision: ok1.header.revision, version: 2 }],
      })
      const retried = await update(key, stale.results[0].kvs![0].modRevision, 'v3')
      expect(retried.succeeded).to.equal(true)
      expect((await api().mustRange({ key })).kvs[0]).to.include({ value: 'v3', version: 3 })
      // Updating a key that does not exist fails with an empty failure range.
      const missing = await update('/registry/pods/default/none', created, 'x')
      expect(missing.succeeded).to.equal(false)
      expect(missing.results[0]).to.deep.include({ type: 'range', kvs: [], count: 0 })
    })

    it('deletes only at the expected mod revision', async () => {
      const key = '/registry/pods/default/c'
      const created = (await create(key, 'v1')).header.revision
      await update(key, created, 'v2')
      const stale = await remove(key, created)
      expect(stale.succeeded).to.equal(false)
      expect(stale.results[0].kvs![0]).to.include({ key, value: 'v2' })
      const current = stale.results[0].kvs![0].modRevision
      const removed = await remove(key, current)
      expect(removed.succeeded).to.equal(true)
      expect(removed.header.revision).to.equal(current + 1)
      expect(removed.results).to.deep.equal([
        {
          type: 'delete',
          deleted: 1,
          prevKvs: [{ key, value: 'v2', createRevision: created, modRevision: current, version: 2 }],
        },
      ])
      expect((await api().mustRange({ key })).kvs).to.deep.equal([])
    })

    it("guards the compaction key by version, as kube-apiserver's compactor does", async () => {
      const key = 'compact_rev_key'
      const step = (version: number, rev: number) =>
        api().mustTxn({
          compare: [{ key, target: 'VERSION', result: 'EQUAL', value: version }],
          success: [{ type: 'put', key, value: String(rev) }],
          failure: [{ type: 'range', key }],
        })
      expect((await step(0, 5)).succeeded).to.equal(true)
      expect((await step(1, 6)).succeeded).to.equal(true)
      const lost = await step(1, 7)
      expect(lost.succeeded).to.equal(false)
      expect(lost.results[0].kvs![0]).to.include({ value: '6', version: 2 })
    })
  })

  describe('compares', () => {
    before(async () => {
      await api().mustPut('cmp/a', 'apple')
      await api().mustPut('cmp/a', 'banana')
      await api().mustPut('cmp/b', 'b')
    })
    const holds = async (compare: Record<string, unknown>) => {
      const r = await api().mustTxn({ compare: [compare] })
      expect(r.results).to.deep.equal([])
      return r.succeeded
    }

    it('compares values as bytes, given as UTF-8 or base64', async () => {
      expect(await holds({ key: 'cmp/a', target: 'VALUE', result: 'EQUAL', value: 'banana' })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'VALUE', result: 'EQUAL', valueBase64: b64('banana') })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'VALUE', result: 'EQUAL', value: 'apple' })).to.equal(false)
      expect(await holds({ key: 'cmp/a', target: 'VALUE', result: 'NOT_EQUAL', value: 'apple' })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'VALUE', result: 'GREATER', value: 'apple' })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'VALUE', result: 'LESS', value: 'cherry' })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'VALUE', result: 'LESS', value: 'banana' })).to.equal(false)
      expect(await holds({ key: 'cmp/a', target: 'VALUE', result: 'LESS', valueBase64: b64(Buffer.from([0xff])) })).to.equal(true)
      // As in etcd, a VALUE compare on a missing key is false whatever the operator.
      expect(await holds({ key: 'cmp/none', target: 'VALUE', result: 'NOT_EQUAL', value: 'x' })).to.equal(false)
      expect(await holds({ key: 'cmp/none', target: 'VALUE', result: 'EQUAL', value: '' })).to.equal(false)
    })

    it('compares version, create and mod revisions (a missing key has 0 for each)', async () => {
      const a = (await api().mustRange({ key: 'cmp/a' })).kvs[0]
      expect(await holds({ key: 'cmp/a', target: 'VERSION', result: 'EQUAL', value: 2 })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'VERSION', result: 'GREATER', value: 2 })).to.equal(false)
      expect(await holds({ key: 'cmp/a', target: 'VERSION', result: 'LESS', value: 3 })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'CREATE', result: 'EQUAL', value: a.createRevision })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'CREATE', result: 'LESS', value: a.modRevision })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'MOD', result: 'EQUAL', value: a.modRevision })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'MOD', result: 'NOT_EQUAL', value: a.modRevision })).to.equal(false)
      expect(await holds({ key: 'cmp/a', target: 'MOD', result: 'GREATER', value: a.createRevision })).to.equal(true)
      for (const target of ['VERSION', 'CREATE', 'MOD']) {
        expect(await holds({ key: 'cmp/none', target, result: 'EQUAL', value: 0 }), target).to.equal(true)
      }
    })

    it('compares the lease, given as a decimal string (0 = none)', async () => {
      expect(await holds({ key: 'cmp/a', target: 'LEASE', result: 'EQUAL', value: '0' })).to.equal(true)
      expect(await holds({ key: 'cmp/a', target: 'LEASE', result: 'NOT_EQUAL', value: '0' })).to.equal(false)
      expect(await holds({ key: 'cmp/a', target: 'LEASE', result: 'EQUAL', value: '18446744073709551615' })).to.equal(false)
      expect(await holds({ key: 'cmp/a', target: 'LEASE', result: 'LESS', value: '18446744073709551615' })).to.equal(true)
    })

    it('compares every key of a range, and needs every compare to hold', async () => {
      expect(await holds({ key: 'cmp/', prefix: true, target: 'VERSION', result: 'GREATER', value: 0 })).to.equal(true)
      expect(await holds({ key: 'cmp/', prefix: true, target: 'VERSION', result: 'GREATER', value: 1 })).to.equal(false)
      expect(await holds({ key: 'cmp/a', rangeEnd: 'cmp/b', target: 'VERSION', result: 'GREATER', value: 1 })).to.equal(true)
      const both = await api().mustTxn({
        compare: [
          { key: 'cmp/a', target: 'VERSION', result: 'EQUAL', value: 2 },
          { key: 'cmp/b', target: 'VERSION', result: 'EQUAL', value: 2 },
        ],
        success: [{ type: 'put', key: 'cmp/never', value: 'x' }],
        failure: [{ type: 'range', key: 'cmp/', prefix: true, keysOnly: true, limit: 1 }],
      })
      expect(both.succeeded).to.equal(false)
      expect(both.results).to.have.length(1)
      expect(both.results[0]).to.deep.include({ type: 'range', more: true, count: 2 })
      expect(keys(both.results[0].kvs!)).to.deep.equal(['cmp/a'])
      expect(both.results[0].kvs![0]).to.not.have.property('value')
      expect((await api().mustRange({ key: 'cmp/never' })).kvs).to.deep.equal([])
    })
  })

  describe('branches and nesting', () => {
    it('gives all writes of one transaction one revision, in op order, and lets later ops see earlier ones', async () => {
      await api().mustPut('one/z', 'zz')
      const before = await api().revision()
      const r = await api().mustTxn({
        success: [
          { type: 'put', key: 'one/a', value: '1' },
          { type: 'put', key: 'one/b', value: '2' },
          { type: 'range', key: 'one/', prefix: true },
          { type: 'delete', key: 'one/z', prevKv: true },
        ],
      })
      expect(r.header.revision).to.equal(before + 1)
      expect(r.results.map((x) => x.type)).to.deep.equal(['put', 'put', 'range', 'delete'])
      expect(r.results[2].kvs!.map((kv) => [kv.key, kv.modRevision])).to.deep.equal([
        ['one/a', before + 1],
        ['one/b', before + 1],
        ['one/z', before],
      ])
      expect(r.results[3]).to.deep.include({ deleted: 1 })
      expect(r.results[3].prevKvs![0]).to.include({ key: 'one/z', value: 'zz', modRevision: before })
      expect(keys((await api().mustRange({ key: 'one/', prefix: true })).kvs)).to.deep.equal(['one/a', 'one/b'])
      const h = ok(await api().history({ key: 'one/', prefix: true, from: before + 1 }))
      expect(h.events.map((e) => [e.type, e.kv.key, e.revision])).to.deep.equal([
        ['PUT', 'one/a', before + 1],
        ['PUT', 'one/b', before + 1],
        ['DELETE', 'one/z', before + 1],
      ])
    })

    it('answers a read-only transaction without a new revision', async () => {
      const before = await api().revision()
      const r = await api().mustTxn({ success: [{ type: 'range', key: 'one/', prefix: true }] })
      expect(r.header.revision).to.equal(before)
      expect(await api().revision()).to.equal(before)
      const empty = await api().mustTxn({})
      expect(empty).to.deep.equal({ header: { revision: before }, succeeded: true, results: [] })
    })

    it('runs nested transactions: inner compares pick the inner branch; one revision for everything', async () => {
      await api().mustPut('nest/flag', 'on')
      const before = await api().revision()
      const r = await api().mustTxn({
        compare: [{ key: 'nest/flag', target: 'VALUE', result: 'EQUAL', value: 'on' }],
        success: [
          { type: 'put', key: 'nest/outer', value: 'o' },
          {
            type: 'txn',
            compare: [{ key: 'nest/flag', target: 'VERSION', result: 'GREATER', value: 5 }],
            success: [{ type: 'put', key: 'nest/inner', value: 'then' }],
            failure: [
              { type: 'put', key: 'nest/inner', value: 'else' },
              { type: 'txn', success: [{ type: 'range', key: 'nest/outer' }] },
            ],
          },
        ],
      })
      expect(r.succeeded).to.equal(true)
      expect(r.header.revision).to.equal(before + 1)
      expect(r.results[0]).to.deep.equal({ type: 'put' })
      const inner = r.results[1]
      expect(inner.type).to.equal('txn')
      expect(inner.succeeded).to.equal(false)
      expect(inner.results!.map((x) => x.type)).to.deep.equal(['put', 'txn'])
      const innermost = inner.results![1]
      expect(innermost.succeeded).to.equal(true)
      expect(innermost.results![0].kvs![0]).to.include({ key: 'nest/outer', value: 'o', modRevision: before + 1 })
      const got = await api().mustRange({ key: 'nest/', prefix: true })
      expect(got.kvs.map((kv) => [kv.key, kv.value, kv.modRevision])).to.deep.equal([
        ['nest/flag', 'on', before],
        ['nest/inner', 'else', before + 1],
        ['nest/outer', 'o', before + 1],
      ])
    })

    it('puts with prevKv in a transaction and fails atomically on KEY_NOT_FOUND and LEASE_NOT_FOUND', async () => {
      await api().mustPut('atom/a', 'old')
      const r = await api().mustTxn({ success: [{ type: 'put', key: 'atom/a', value: 'new', prevKv: true }] })
      expect(r.results[0].prevKv).to.include({ key: 'atom/a', value: 'old' })
      const notFound = await expectNoWrite(() =>
        api().txn({
          success: [
            { type: 'put', key: 'atom/b', value: 'x' },
            { type: 'put', key: 'atom/missing', ignoreValue: true },
          ],
        }),
      )
      expectError(notFound, 400, 'KEY_NOT_FOUND')
      const noLease = await expectNoWrite(() =>
        api().txn({
          success: [
            { type: 'put', key: 'atom/b', value: 'x' },
            { type: 'put', key: 'atom/c', value: 'y', lease: '12345' },
          ],
        }),
      )
      expectError(noLease, 404, 'LEASE_NOT_FOUND')
      expect((await api().mustRange({ key: 'atom/b' })).kvs).to.deep.equal([])
      // ignoreValue on an existing key keeps its value.
      const kept = await api().mustTxn({ success: [{ type: 'put', key: 'atom/a', ignoreValue: true }] })
      expect(kept.succeeded).to.equal(true)
      expect((await api().mustRange({ key: 'atom/a' })).kvs[0]).to.include({ value: 'new', version: 3 })
    })
  })

  describe('validation', () => {
    it('rejects writing the same key twice in a branch with DUPLICATE_KEY, writing nothing', async () => {
      const duplicates: unknown[] = [
        {
          success: [
            { type: 'put', key: 'dup/a', value: '1' },
            { type: 'put', key: 'dup/a', value: '2' },
          ],
        },
        {
          success: [
            { type: 'delete', key: 'dup/', prefix: true },
            { type: 'put', key: 'dup/a', value: '1' },
          ],
        },
        {
          success: [
            { type: 'put', key: 'dup/a', value: '1' },
            { type: 'delete', key: 'dup/a' },
          ],
        },
        {
          success: [
            { type: 'put', keyBase64: b64('dup/a') },
            { type: 'put', key: 'dup/a' },
          ],
        },
        {
          failure: [
            { type: 'put', key: 'dup/a' },
            { type: 'put', key: 'dup/a' },
          ],
        },
        {
          success: [
            { type: 'put', key: 'dup/a' },
            { type: 'txn', success: [{ type: 'put', key: 'dup/a' }] },
          ],
        },
        {
          success: [
            { type: 'delete', key: 'dup/a', rangeEnd: 'dup/z' },
            { type: 'txn', failure: [{ type: 'put', key: 'dup/b' }] },
          ],
        },
      ]
      for (const body of duplicates) {
        const r = await expectNoWrite(() => api().txn(body))
        expectError(r, 400, 'DUPLICATE_KEY')
      }
      expect((await api().mustRange({ key: 'dup/', prefix: true })).kvs).to.deep.equal([])
    })

    it('allows what etcd allows: overlapping deletes, and the same key in both branches of a nested txn', async () => {
      const overlapping = await api().mustTxn({
        success: [
          { type: 'delete', key: 'dup/', prefix: true },
          { type: 'delete', key: 'dup/a' },
          { type: 'range', key: 'dup/a' },
        ],
      })
      expect(overlapping.succeeded).to.equal(true)
      const branches = await api().mustTxn({
        success: [
          { type: 'txn', success: [{ type: 'put', key: 'dup/n', value: 't' }], failure: [{ type: 'put', key: 'dup/n', value: 'f' }] },
        ],
      })
      expect(branches.succeeded).to.equal(true)
      expect((await api().mustRange({ key: 'dup/n' })).kvs[0].value).to.equal('t')
    })

    it(`rejects more than maxTxnOps (${MAX_TXN_OPS}) compares or ops per branch with TOO_MANY_OPS, writing nothing`, async () => {
      const puts = (n: number, p: string) => Array.from({ length: n }, (_, i) => ({ type: 'put', key: `${p}${i}`, value: 'x' }))
      const compares = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ key: `ops/c${i}`, target: 'VERSION', result: 'EQUAL', value: 0 }))
      const tooMany: unknown[] = [
        { success: puts(MAX_TXN_OPS + 1, 'ops/s') },
        { failure: puts(MAX_TXN_OPS + 1, 'ops/f') },
        { compare: compares(MAX_TXN_OPS + 1) },
        { success: [{ type: 'txn', success: puts(MAX_TXN_OPS + 1, 'ops/n') }] },
        { success: [{ type: 'txn', compare: compares(MAX_TXN_OPS + 1) }] },
      ]
      for (const body of tooMany) {
        const e = expectError(await expectNoWrite(() => api().txn(body)), 400, 'TOO_MANY_OPS')
        expect(e.details?.maxTxnOps).to.equal(MAX_TXN_OPS)
      }
      expect((await api().mustRange({ key: 'ops/', prefix: true, countOnly: true })).count).to.equal(0)
      // Exactly the limit is fine, in each branch and in the compares.
      const atLimit = await api().mustTxn({
        compare: compares(MAX_TXN_OPS),
        success: puts(MAX_TXN_OPS, 'ops/s'),
        failure: puts(MAX_TXN_OPS, 'ops/f'),
      })
      expect(atLimit.succeeded).to.equal(true)
      expect((await api().mustRange({ key: 'ops/s', prefix: true, countOnly: true })).count).to.equal(MAX_TXN_OPS)
    })

    it('answers a body over maxRequestBytes (4KiB) with 413 REQUEST_TOO_LARGE, writing nothing', async () => {
      const big = 'x'.repeat(MAX_REQUEST_BYTES + 100)
      const viaTxn = await expectNoWrite(() => api().txn({ success: [{ type: 'put', key: 'big/a', value: big }] }))
      expectError(viaTxn, 413, 'REQUEST_TOO_LARGE')
      const viaPut = await expectNoWrite(() => api().put({ key: 'big/b', value: big }))
      expectError(viaPut, 413, 'REQUEST_TOO_LARGE')
      const split = 'y'.repeat(1100)
      const spread = await expectNoWrite(() =>
        api().txn({
          success: [1, 2, 3, 4].map((i) => ({ type: 'put', key: `big/${i}`, value: split })),
        }),
      )
      expectError(spread, 413, 'REQUEST_TOO_LARGE')
      expect((await api().mustRange({ key: 'big/', prefix: true, countOnly: true })).count).to.equal(0)
    })

    it('answers a txn whose keys and range ends exceed maxRequestBytes with 413, even when the body is smaller', async () => {
      // A prefix compare or delete counts the key and its computed range end: 2 x 2100 bytes > 4096.
      const key = `big/${'k'.repeat(2096)}`
      const bodies = [
        { compare: [{ key, prefix: true, target: 'VERSION', result: 'EQUAL', value: 0 }] },
        { success: [{ type: 'delete', key, prefix: true }] },
        { success: [{ type: 'range', key, prefix: true }] },
      ]
      for (const body of bodies) {
        expect(JSON.stringify(body).length).to.be.below(MAX_REQUEST_BYTES)
        const e = expectError(await expectNoWrite(() => api().txn(body)), 413, 'REQUEST_TOO_LARGE')
        expect(e.details?.maxRequestBytes).to.equal(MAX_REQUEST_BYTES)
      }
    })

    it('accepts a transaction just under maxRequestBytes', async () => {
      const value = 'z'.repeat(900)
      const r = await api().mustTxn({ success: [1, 2, 3, 4].map((i) => ({ type: 'put', key: `fit/${i}`, value })) })
      expect(r.succeeded).to.equal(true)
      expect((await api().mustRange({ key: 'fit/', prefix: true, countOnly: true })).count).to.equal(4)
    })
  })
})
