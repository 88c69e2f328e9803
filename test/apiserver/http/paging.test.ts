/**
 * Paged ranges on GET /v1/kv with `limit` and `continue` against a real `kvlog serve` process: all pages
 * read the snapshot of the first page while writes go on, tokens are bound to their key range, and a
 * compacted listing revision ends the listing with 410 COMPACTED.
 */
import { expect } from 'chai'
import { expectError, keys, ok, useServer, type KvJson, type RangeBody } from './helpers.js'

const PREFIX = 'pg/'
const N = 250
const name = (i: number) => `${PREFIX}${String(i).padStart(3, '0')}`

describe('native HTTP API: paging with continue tokens (real process)', function () {
  this.timeout(30_000)
  const server = useServer()
  const api = () => server().api

  before(async () => {
    // 250 keys in two transactions (the default maxTxnOps is 128), plus neighbours just outside the prefix.
    for (let start = 0; start < N; start += 125) {
      const success = []
      for (let i = start; i < start + 125; i++) success.push({ type: 'put', key: name(i), value: `v${i}` })
      await api().mustTxn({ success })
    }
    for (const k of ['pg', 'pg.', 'pg0', 'ph']) await api().mustPut(k, 'outside')
  })

  const page = (token?: string, limit = 50) => api().range({ key: PREFIX, prefix: true, limit, continue: token })

  it('lists a prefix page by page from one snapshot while keys are written and deleted between and during pages', async () => {
    const first = ok(await page())
    const listRevision = first.header.revision
    expect(first.count).to.equal(N)
    expect(first.more).to.equal(true)
    expect(first.continue).to.be.a('string').and.not.equal('')
    const pages: RangeBody[] = [first]
    let step = 0
    while (pages[pages.length - 1].more) {
      const token = pages[pages.length - 1].continue
      expect(token, `page ${pages.length} has more but no continue token`).to.be.a('string')
      step++
      // Writes between pages: new keys before and after the cursor, deletes of listed and unlisted keys,
      // an update of a key not listed yet.
      await api().mustPut(`${PREFIX}000-new-${step}`, 'new')
      await api().mustPut(`${PREFIX}999-new-${step}`, 'new')
      ok(await api().delete({ key: name(step * 50 - 1) }))
      ok(await api().delete({ key: name(step * 50 + 10) }))
      await api().mustPut(name(step * 50 + 20), 'updated')
      // ... and writes racing the page request itself.
      const racing = Promise.all([
        api().mustPut(`${PREFIX}${String(step * 50 + 30)}-race`, 'race'),
        api().delete({ key: name(step * 50 + 40) }),
        api().mustPut(name(step * 50 + 45), 'raced'),
      ])
      const [next] = await Promise.all([page(token), racing])
      pages.push(ok(next))
      expect(pages.length, 'too many pages').to.be.at.most(6)
    }

    for (const [i, p] of pages.entries()) {
      expect(p.header.revision, `page ${i} revision`).to.equal(listRevision)
      expect(p.kvs.length, `page ${i} size`).to.be.at.most(50)
    }
    expect(pages).to.have.length(5)
    const last = pages[pages.length - 1]
    expect(last.more).to.equal(false)
    expect(last).to.not.have.property('continue')

    const union: KvJson[] = pages.flatMap((p) => p.kvs)
    expect(new Set(keys(union)).size, 'a key was listed twice').to.equal(union.length)
    const snapshot = ok(await api().range({ key: PREFIX, prefix: true, revision: listRevision }))
    expect(snapshot.kvs).to.have.length(N)
    expect(union).to.deep.equal(snapshot.kvs)
    for (const [i, kv] of union.entries()) expect(kv).to.include({ key: name(i), value: `v${i}` })

    // The writes really happened: the latest state differs from the listing.
    const now = ok(await api().range({ key: PREFIX, prefix: true }))
    expect(now.header.revision).to.be.greaterThan(listRevision)
    expect(keys(now.kvs)).to.include(`${PREFIX}000-new-1`)
    expect(keys(now.kvs)).to.not.include(name(60))
  })

  it("pages with keysOnly and a different limit per page, still from the first page's revision", async () => {
    const first = ok(await api().range({ key: PREFIX, prefix: true, limit: 7, keysOnly: true }))
    await api().mustPut(`${PREFIX}000-later`, 'x')
    const second = ok(await api().range({ key: PREFIX, prefix: true, limit: 100, keysOnly: true, continue: first.continue }))
    expect(second.header.revision).to.equal(first.header.revision)
    expect(second.kvs).to.have.length(100)
    expect(keys(second.kvs)).to.not.include(`${PREFIX}000-later`)
    for (const kv of second.kvs) expect(kv).to.not.have.property('value')
    expect(keys(first.kvs.concat(second.kvs))).to.deep.equal(
      keys(ok(await api().range({ key: PREFIX, prefix: true, limit: 107, revision: first.header.revision })).kvs),
    )
  })

  it('rejects a continue token used with a different key range: 400 INVALID_ARGUMENT', async () => {
    const first = ok(await page(undefined, 10))
    const token = first.continue!
    expect(token).to.be.a('string')
    const other = [
      { key: PREFIX },
      { key: 'pg', prefix: true },
      { key: 'pg/0', prefix: true },
      { key: PREFIX, fromKey: true },
      { key: PREFIX, rangeEnd: 'pg/5' },
      { key: 'ph', prefix: true },
    ]
    for (const q of other) {
      const e = expectError(await api().range({ ...q, limit: 10, continue: token }), 400, 'INVALID_ARGUMENT')
      expect(e.details?.field, JSON.stringify(q)).to.equal('continue')
    }
    // The same token still works with its own range.
    expect(ok(await page(token, 10)).header.revision).to.equal(first.header.revision)
  })

  it('rejects garbage continue tokens: 400 INVALID_ARGUMENT', async () => {
    const first = ok(await page(undefined, 10))
    const b64url = (s: string) => Buffer.from(s).toString('base64url')
    const garbage = [
      'garbage',
      '',
      '!!!',
      b64url('{}'),
      b64url('null'),
      b64url('[]'),
      b64url('"x"'),
      b64url('{"v":2}'),
      b64url(JSON.stringify({ v: 1, r: 'x', n: '', k: '', e: '' })),
      b64url(JSON.stringify({ v: 1, r: 1.5, n: '', k: '', e: '' })),
      first.continue!.slice(0, Math.floor(first.continue!.length / 2)),
    ]
    for (const token of garbage) {
      expectError(await page(token, 10), 400, 'INVALID_ARGUMENT')
    }
  })

  it('never answers keys outside the requested range, whatever the token says', async () => {
    // A token naming the right range but a start key below it (tokens are not signed).
    const first = ok(await page(undefined, 10))
    const body = JSON.parse(Buffer.from(first.continue!, 'base64url').toString('utf8')) as Record<string, unknown>
    const forged = Buffer.from(JSON.stringify({ ...body, n: Buffer.from('pg').toString('base64') })).toString('base64url')
    const r = await page(forged, 10)
    if (r.status === 200) {
      for (const k of keys(r.body.kvs)) expect(k.startsWith(PREFIX), `key ${k} is outside the prefix`).to.equal(true)
    } else {
      expectError(r, 400, 'INVALID_ARGUMENT')
    }
  })

  it('answers the next page with 410 COMPACTED once the listing revision is compacted, and a relist works', async () => {
    const first = ok(await page(undefined, 50))
    const listRevision = first.header.revision
    await api().mustPut(`${PREFIX}after-list`, 'x')
    const current = await api().revision()
    expect(current).to.be.greaterThan(listRevision)
    ok(await api().compact(current))
    const e = expectError(await page(first.continue, 50), 410, 'COMPACTED')
    expect(e.details?.compactRevision).to.equal(current)
    // Relist: a fresh first page reads the current state.
    const relist = ok(await page(undefined, 50))
    expect(relist.header.revision).to.equal(current)
    expect(ok(await page(relist.continue, 50)).header.revision).to.equal(current)
  })
})
