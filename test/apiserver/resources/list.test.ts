/**
 * Lists against a real server: resourceVersion / resourceVersionMatch, paging with continue (one
 * snapshot across pages; 410 Expired once its revision is compacted), label selectors (equality and
 * set-based), field selectors, and the Table form kubectl asks for.
 */
import { expect } from 'chai'
import { configMap, expectStatus, Kube, useServer, type Json } from './helpers.js'

const NS = '/api/v1/namespaces/lists/configmaps'
const itemNames = (body: Json): string[] => body.items.map((o: Json) => o.metadata.name)

describe('resource API: list', function () {
  this.timeout(30_000)
  // Objects go into throwaway namespaces that are never created (namespaces.ts: they need not exist).
  const server = useServer(['--resource-namespace-must-exist=false'])
  let kube: Kube
  let firstRv: number
  before(async () => {
    kube = new Kube(server().process.http)
    const objects: [string, Record<string, string>][] = [
      ['a', { app: 'web', tier: 'front', replicas: '3' }],
      ['b', { app: 'web', tier: 'back' }],
      ['c', { app: 'db', tier: 'back', replicas: '1' }],
      ['d', { app: 'cache' }],
      ['e', {}],
    ]
    for (const [name, labels] of objects) {
      const created = await kube.mustCreate(NS, configMap(name, labels))
      firstRv ??= Number(created.metadata.resourceVersion)
    }
    await kube.mustCreate('/api/v1/namespaces/other/configmaps', configMap('z', { app: 'web' }))
  })

  it('lists a namespace, or every namespace, at the latest revision', async () => {
    const r = await kube.get(NS)
    expect(r.status).to.equal(200)
    expect(r.body.kind).to.equal('ConfigMapList')
    expect(r.body.apiVersion).to.equal('v1')
    expect(itemNames(r.body)).to.deep.equal(['a', 'b', 'c', 'd', 'e'])
    expect(r.body.metadata.resourceVersion).to.equal(String(await kube.revision()))
    const all = await kube.get('/api/v1/configmaps')
    expect(itemNames(all.body)).to.deep.equal(['a', 'b', 'c', 'd', 'e', 'z'])
  })

  it('reads an older snapshot with resourceVersionMatch=Exact; NotOlderThan reads the latest; a future one is an error', async () => {
    const exact = await kube.get(NS, { resourceVersion: firstRv + 1, resourceVersionMatch: 'Exact' })
    expect(itemNames(exact.body)).to.deep.equal(['a', 'b'])
    expect(exact.body.metadata.resourceVersion).to.equal(String(firstRv + 1))
    const notOlder = await kube.get(NS, { resourceVersion: firstRv, resourceVersionMatch: 'NotOlderThan' })
    expect(itemNames(notOlder.body)).to.have.length(5)
    const zero = await kube.get(NS, { resourceVersion: '0' })
    expect(itemNames(zero.body)).to.have.length(5)
    const future = await kube.get(NS, { resourceVersion: (await kube.revision()) + 100, resourceVersionMatch: 'NotOlderThan' })
    expect(future.status).to.equal(400)
    expectStatus(await kube.get(NS, { resourceVersionMatch: 'Exact' }), 422, 'Invalid')
    expectStatus(await kube.get(NS, { resourceVersion: '0', resourceVersionMatch: 'Exact' }), 422, 'Invalid')
    expectStatus(await kube.get(NS, { resourceVersion: 'abc' }), 400, 'BadRequest')
  })

  it('pages with limit and continue over one snapshot, with remainingItemCount', async () => {
    const p1 = await kube.get(NS, { limit: 2 })
    expect(itemNames(p1.body)).to.deep.equal(['a', 'b'])
    expect(p1.body.metadata.remainingItemCount).to.equal(3)
    const token = p1.body.metadata.continue
    expect(token).to.be.a('string')
    // A write between pages is not seen: every page reads the first page's revision.
    await kube.mustCreate(NS, configMap('bb'))
    const p2 = await kube.get(NS, { limit: 2, continue: token })
    expect(itemNames(p2.body)).to.deep.equal(['c', 'd'])
    expect(p2.body.metadata.resourceVersion).to.equal(p1.body.metadata.resourceVersion)
    const p3 = await kube.get(NS, { limit: 2, continue: p2.body.metadata.continue })
    expect(itemNames(p3.body)).to.deep.equal(['e'])
    expect(p3.body.metadata.continue).to.equal(undefined)
    expectStatus(await kube.get(NS, { limit: 2, continue: token, resourceVersion: '5' }), 422, 'Invalid')
    expectStatus(await kube.get(NS, { continue: 'garbage' }), 400, 'BadRequest')
    expect((await kube.delete(`${NS}/bb`)).status).to.equal(200)
  })

  it('filters while paging: a page holds `limit` matching items', async () => {
    const p1 = await kube.get(NS, { limit: 1, labelSelector: 'tier=back' })
    expect(itemNames(p1.body)).to.deep.equal(['b'])
    expect(p1.body.metadata.remainingItemCount, 'unknown with a selector').to.equal(undefined)
    const p2 = await kube.get(NS, { limit: 1, labelSelector: 'tier=back', continue: p1.body.metadata.continue })
    expect(itemNames(p2.body)).to.deep.equal(['c'])
  })

  it('selects by label: =, ==, !=, in, notin, exists, !exists, >, < and combinations', async () => {
    const sel = async (labelSelector: string) => itemNames((await kube.get(NS, { labelSelector })).body)
    expect(await sel('app=web')).to.deep.equal(['a', 'b'])
    expect(await sel('app==web')).to.deep.equal(['a', 'b'])
    expect(await sel('app!=web')).to.deep.equal(['c', 'd', 'e'])
    expect(await sel('app in (db, cache)')).to.deep.equal(['c', 'd'])
    expect(await sel('app notin (web,db)')).to.deep.equal(['d', 'e'])
    expect(await sel('tier')).to.deep.equal(['a', 'b', 'c'])
    expect(await sel('!tier')).to.deep.equal(['d', 'e'])
    expect(await sel('replicas>2')).to.deep.equal(['a'])
    expect(await sel('replicas<2')).to.deep.equal(['c'])
    expect(await sel('app=web,tier=back')).to.deep.equal(['b'])
    expect(await sel('tier in (back),app!=web')).to.deep.equal(['c'])
  })

  it('selects by field: metadata.name and metadata.namespace', async () => {
    const byName = await kube.get(NS, { fieldSelector: 'metadata.name=c' })
    expect(itemNames(byName.body)).to.deep.equal(['c'])
    const notName = await kube.get(NS, { fieldSelector: 'metadata.name!=c' })
    expect(itemNames(notName.body)).to.deep.equal(['a', 'b', 'd', 'e'])
    const byNs = await kube.get('/api/v1/configmaps', { fieldSelector: 'metadata.namespace==other', labelSelector: 'app=web' })
    expect(itemNames(byNs.body)).to.deep.equal(['z'])
  })

  it('selects events by involvedObject fields (kubectl describe); other kinds do not have them', async () => {
    const EV = '/api/v1/namespaces/lists/events'
    const event = (name: string, target: string) => ({
      metadata: { name },
      involvedObject: { kind: 'ConfigMap', namespace: 'lists', name: target },
      reason: 'Tested',
      type: 'Normal',
    })
    await kube.mustCreate(EV, event('e1', 'a'))
    await kube.mustCreate(EV, event('e2', 'b'))
    const r = await kube.get(EV, { fieldSelector: 'involvedObject.name=b,involvedObject.kind=ConfigMap,type=Normal' })
    expect(itemNames(r.body)).to.deep.equal(['e2'])
    expectStatus(await kube.get(NS, { fieldSelector: 'involvedObject.name=b' }), 400, 'BadRequest')
  })

  it('rejects malformed selectors with 400 BadRequest', async () => {
    for (const labelSelector of ['app in (', 'app in ()', '=x', 'a=b=c', 'app=in valid', 'BAD KEY!', 'app=web,', 'x>y', 'a/b/c=1']) {
      expectStatus(await kube.get(NS, { labelSelector }), 400, 'BadRequest')
    }
    for (const fieldSelector of ['spec.nodeName=x', 'metadata.name', 'metadata.name<3']) {
      expectStatus(await kube.get(NS, { fieldSelector }), 400, 'BadRequest')
    }
  })

  it("answers a Table when asked (kubectl get), with the kind's columns (ConfigMap: Name, Data, Age) and row metadata", async () => {
    const r = await kube.request('GET', NS, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
      query: { labelSelector: 'app=web' },
    })
    expect(r.status).to.equal(200)
    expect(r.body.kind).to.equal('Table')
    expect(r.body.apiVersion).to.equal('meta.k8s.io/v1')
    expect(r.body.columnDefinitions.map((c: Json) => c.name)).to.deep.equal(['Name', 'Data', 'Age'])
    expect(r.body.rows.map((row: Json) => row.cells.slice(0, 2))).to.deep.equal([
      ['a', 1],
      ['b', 1],
    ])
    expect(r.body.rows[0].object.kind).to.equal('PartialObjectMetadata')
    expect(r.body.rows[0].object.metadata.labels.app).to.equal('web')
  })

  it("pages a Table as it pages a List: the whole Table's rows, with continue and remainingItemCount", async () => {
    const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json'
    const whole = await kube.request('GET', NS, { accept })
    const p1 = await kube.request('GET', NS, { accept, query: { limit: 3 } })
    expect(p1.status).to.equal(200)
    expect(p1.body.metadata.remainingItemCount).to.equal(2)
    expect(p1.body.metadata.resourceVersion).to.equal(whole.body.metadata.resourceVersion)
    expect(p1.body.columnDefinitions).to.deep.equal(whole.body.columnDefinitions)
    const p2 = await kube.request('GET', NS, { accept, query: { limit: 3, continue: p1.body.metadata.continue } })
    expect(p2.body.metadata).to.deep.equal({ resourceVersion: whole.body.metadata.resourceVersion })
    // Age, the last cell, is counted when the rows are written.
    const rows = (table: Json) => table.rows.map((row: Json) => ({ ...row, cells: row.cells.slice(0, -1) }))
    expect([...rows(p1.body), ...rows(p2.body)]).to.deep.equal(rows(whole.body))
  })

  it('answers 410 Expired for a continue token whose revision was compacted', async () => {
    const p1 = await kube.get(NS, { limit: 2 })
    await kube.mustCreate(NS, configMap('late'))
    const compact = await kube.request('POST', '/v1/compact', { json: { revision: await kube.revision() } })
    expect(compact.status).to.equal(200)
    const expired = expectStatus(await kube.get(NS, { limit: 2, continue: p1.body.metadata.continue }), 410, 'Expired')
    expect(expired.message).to.be.a('string')
    // Relisting from the start works.
    const relist = await kube.get(NS, { limit: 100 })
    expect(itemNames(relist.body)).to.include('late')
    // So does an Exact list below the floor: 410 too.
    expectStatus(await kube.get(NS, { resourceVersion: firstRv, resourceVersionMatch: 'Exact' }), 410, 'Expired')
  })
})
