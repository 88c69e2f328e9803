/**
 * The native endpoints the history browser needs, against a real `kvlog serve` process:
 * GET /v1/keys/tree (one level of the / tree with counts, paged, at a revision), GET /v1/history/buckets
 * (revisions per time bucket), GET /v1/revision-at (the revision current at a time; COMPACTED before the
 * floor), POST /v1/revert (dry run and real, one revision), and /ui's static assets.
 */
import { expect } from 'chai'
import { uiEnabled } from '../../../apiserver/ui-assets.js'
import { b64, expectError, ok, useServer } from './helpers.js'

interface TreeBody {
  header: { revision: number }
  count: number
  children: Array<{ name?: string; nameBase64?: string; count: number; leaf: boolean }>
  continue?: string
}
interface BucketsBody {
  header: { revision: number; compactRevision: number }
  fromTime: string
  bucketMs: number
  buckets: Array<{ start: string; firstRevision: number; revisions: number }>
}
interface RevertBody {
  header: { revision: number }
  fromRevision: number
  revision?: number
  changes: Array<{ change: string; key?: string; value?: string; previousValue?: string }>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('native HTTP API: key tree, history buckets, revision-at, revert, /ui (real process)', function () {
  this.timeout(30_000)
  const server = useServer()
  const api = () => server().api
  let floor = 0
  let atBefore = 0
  let between = ''

  before(async () => {
    await api().mustPut('/gone', '1')
    floor = (await api().mustPut('/gone', '2')).header.revision
    ok(await api().compact(floor))
    for (const k of ['/t/a/1', '/t/a/2', '/t/a/3', '/t/b/1', '/t/c', '/t/d/x/y']) await api().mustPut(k, 'v')
    ok(await api().put({ keyBase64: b64(Buffer.from([0x2f, 0x74, 0x2f, 0xff])), value: 'bin' }))
    atBefore = await api().revision()
    await sleep(20)
    between = new Date().toISOString()
    await sleep(20)
    await api().mustPut('/t/a/4', 'v')
  })

  it('GET /v1/keys/tree: children with counts, leaves, paging with continue, at a revision', async () => {
    const root = ok(await api().get<TreeBody>('/v1/keys/tree'))
    expect(root.children.map((c) => [c.name, c.count, c.leaf])).to.deep.equal([['/', 9, false]])
    const t = ok(await api().get<TreeBody>('/v1/keys/tree', { prefix: '/t/' }))
    expect(t.count).to.equal(8)
    expect(t.children.map((c) => [c.name ?? `b64:${c.nameBase64}`, c.count, c.leaf])).to.deep.equal([
      ['a/', 4, false],
      ['b/', 1, false],
      ['c', 1, true],
      ['d/', 1, false],
      [`b64:${b64(Buffer.from([0xff]))}`, 1, true],
    ])
    const old = ok(await api().get<TreeBody>('/v1/keys/tree', { prefix: '/t/', revision: atBefore }))
    expect(old.children[0]).to.deep.include({ name: 'a/', count: 3 })
    const page1 = ok(await api().get<TreeBody>('/v1/keys/tree', { prefix: '/t/', limit: 2 }))
    expect(page1.children.map((c) => c.name)).to.deep.equal(['a/', 'b/'])
    expect(page1.continue).to.be.a('string')
    const page2 = ok(
      await api().get<TreeBody>('/v1/keys/tree', { prefix: '/t/', limit: 2, continue: page1.continue, revision: page1.header.revision }),
    )
    expect(page2.children.map((c) => c.name)).to.deep.equal(['c', 'd/'])
    expectError(await api().get('/v1/keys/tree', { prefix: '/t/', limit: 0 }), 400, 'INVALID_ARGUMENT')
    expectError(await api().get('/v1/keys/tree', { prefix: '/t/', continue: '/elsewhere' }), 400, 'INVALID_ARGUMENT')
    expectError(await api().get('/v1/keys/tree', { revision: floor - 1 }), 410, 'COMPACTED')
    expectError(await api().get('/v1/keys/tree', { bogus: 1 }), 400, 'INVALID_ARGUMENT')
  })

  it('GET /v1/history/buckets: the buckets add up to the retained revisions', async () => {
    const b = ok(await api().get<BucketsBody>('/v1/history/buckets', { buckets: 10 }))
    expect(b.buckets).to.have.length(10)
    const head = b.header.revision
    expect(b.buckets.reduce((n, x) => n + x.revisions, 0)).to.equal(head - b.buckets[0].firstRevision + 1)
    expect(b.buckets[0].firstRevision).to.be.at.most(floor + 1)
    for (let i = 1; i < b.buckets.length; i++)
      expect(b.buckets[i].firstRevision).to.equal(b.buckets[i - 1].firstRevision + b.buckets[i - 1].revisions)
    expectError(await api().get('/v1/history/buckets', { buckets: 100_000 }), 400, 'INVALID_ARGUMENT')
    expectError(await api().get('/v1/history/buckets', { fromTime: 'soon' }), 400, 'INVALID_ARGUMENT')
  })

  it('GET /v1/revision-at: the revision current at a time; COMPACTED before the floor', async () => {
    expect(ok(await api().get<{ revision: number }>('/v1/revision-at', { time: between })).revision).to.equal(atBefore)
    const head = await api().revision()
    expect(ok(await api().get<{ revision: number }>('/v1/revision-at', { time: '2999-01-01T00:00:00Z' })).revision).to.equal(head)
    const e = expectError(await api().get('/v1/revision-at', { time: '2001-01-01T00:00:00Z' }), 410, 'COMPACTED')
    expect(e.details).to.deep.include({ compactRevision: floor })
    expectError(await api().get('/v1/revision-at', {}), 400, 'INVALID_ARGUMENT')
    expectError(await api().get('/v1/revision-at', { time: 'noon' }), 400, 'INVALID_ARGUMENT')
  })

  it('POST /v1/revert: a dry run writes nothing; a real one writes one revision', async () => {
    const head = await api().revision()
    const dry = ok(
      await api().request<RevertBody>('POST', '/v1/revert', { json: { key: '/t/a/', prefix: true, revision: atBefore, dryRun: true } }),
    )
    expect(dry.changes).to.deep.equal([{ change: 'added', key: '/t/a/4', previousValue: 'v' }])
    expect(dry).to.not.have.property('revision')
    expect(await api().revision()).to.equal(head)
    const real = ok(await api().request<RevertBody>('POST', '/v1/revert', { json: { key: '/t/a/', prefix: true, revision: atBefore } }))
    expect(real.revision).to.equal(head + 1)
    expect((await api().mustRange({ key: '/t/a/', prefix: true })).count).to.equal(3)
    expectError(
      await api().request('POST', '/v1/revert', { json: { key: '/t/', prefix: true, revision: head + 100 } }),
      400,
      'FUTURE_REVISION',
    )
    expectError(await api().request('POST', '/v1/revert', { json: { key: '/t/', prefix: true, revision: floor - 1 } }), 410, 'COMPACTED')
    expectError(await api().request('POST', '/v1/revert', { json: { key: '/t/', prefix: true } }), 400, 'INVALID_ARGUMENT')
    expectError(await api().request('POST', '/v1/revert', { json: { key: '/t/', revision: atBefore, extra: 1 } }), 400, 'INVALID_ARGUMENT')
  })

  it('serves /ui (on a loopback listener by default): index.html, the app and the vendored libraries, no path escapes', async () => {
    const index = await api().request<string>('GET', '/ui/')
    expect(index.status).to.equal(200)
    expect(index.headers.get('content-type')).to.contain('text/html')
    expect(index.body).to.contain('importmap')
    for (const path of ['/ui/app/main.js', '/ui/vendor/preact.mjs', '/ui/vendor/uplot.mjs', '/ui/vendor/htm-preact.mjs']) {
      const r = await api().request<string>('GET', path)
      expect(r.status, path).to.equal(200)
      expect(r.headers.get('content-type'), path).to.contain('text/javascript')
    }
    expect((await api().request('GET', '/ui/vendor/nothing.js')).status).to.equal(404)
    for (const escape of ['/ui/%2e%2e/%2e%2e/%2e%2e/package.json', '/ui/..%2f..%2f..%2fpackage.json']) {
      expect(JSON.stringify((await api().request('GET', escape)).body), escape).to.not.contain('dependencies')
    }
    expect((await api().request('GET', '/ui', {})).status).to.equal(200) // redirected to /ui/
  })

  it("the ui setting: 'auto' serves /ui on loopback listeners only, 'on' and 'off' decide", () => {
    expect(uiEnabled('auto', '127.0.0.1:8379')).to.equal(true)
    expect(uiEnabled('auto', 'localhost:0')).to.equal(true)
    expect(uiEnabled('auto', '[::1]:8379')).to.equal(true)
    expect(uiEnabled('auto', '0.0.0.0:8379')).to.equal(false)
    expect(uiEnabled('auto', '10.0.0.5:8379')).to.equal(false)
    expect(uiEnabled('on', '0.0.0.0:8379')).to.equal(true)
    expect(uiEnabled('off', '127.0.0.1:8379')).to.equal(false)
  })
})
