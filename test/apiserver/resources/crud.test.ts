/**
 * Create, get, replace, patch and delete against a real server: server-managed metadata, optimistic
 * concurrency (409 Conflict on a stale resourceVersion), the three patch types, delete preconditions,
 * finalizers and deletionTimestamp, deletecollection, dryRun, and the storage key seen through the
 * native KV API.
 */
import { expect } from 'chai'
import { configMap, expectStatus, Kube, useServer } from './helpers.js'

const CMS = '/api/v1/namespaces/default/configmaps'

describe('resource API: CRUD', function () {
  this.timeout(30_000)
  const server = useServer()
  let kube: Kube
  before(() => (kube = new Kube(server().process.http)))

  it('creates with server-managed metadata; resourceVersion is the mod revision of the storage key', async () => {
    const before = await kube.revision()
    const created = await kube.mustCreate(CMS, configMap('one', { app: 'web' }))
    expect(created.kind).to.equal('ConfigMap')
    expect(created.apiVersion).to.equal('v1')
    expect(created.metadata.namespace).to.equal('default')
    expect(created.metadata.uid).to.match(/^[0-9a-f-]{36}$/)
    expect(created.metadata.generation).to.equal(1)
    expect(Date.parse(created.metadata.creationTimestamp)).to.be.closeTo(Date.now(), 5000)
    expect(created.metadata.resourceVersion).to.equal(String(before + 1))

    const kv = await kube.get('/v1/kv', { key: '/registry/configmaps/default/one' })
    expect(kv.body.kvs).to.have.length(1)
    expect(kv.body.kvs[0].modRevision).to.equal(before + 1)
    const stored = JSON.parse(kv.body.kvs[0].value)
    expect(stored.metadata.resourceVersion, 'not stored: derived from the revision').to.equal(undefined)
    expect(stored.metadata.uid).to.equal(created.metadata.uid)

    const got = await kube.get(`${CMS}/one`)
    expect(got.status).to.equal(200)
    expect(got.body).to.deep.equal(created)
  })

  it('answers 409 AlreadyExists for a second create and 404 NotFound for a missing object', async () => {
    await kube.mustCreate(CMS, configMap('dup'))
    const again = expectStatus(await kube.post(CMS, configMap('dup')), 409, 'AlreadyExists')
    expect(again.details).to.deep.include({ name: 'dup', kind: 'configmaps' })
    const missing = expectStatus(await kube.get(`${CMS}/nope`), 404, 'NotFound')
    expect(missing.details).to.deep.include({ name: 'nope', kind: 'configmaps' })
  })

  it('replaces with a resourceVersion precondition: a stale one is 409 Conflict and changes nothing', async () => {
    const v1 = await kube.mustCreate(CMS, configMap('cas', undefined, { n: '1' }))
    const put = await kube.put(`${CMS}/cas`, { ...v1, data: { n: '2' } })
    expect(put.status).to.equal(200)
    expect(put.body.data).to.deep.equal({ n: '2' })
    expect(Number(put.body.metadata.resourceVersion)).to.be.greaterThan(Number(v1.metadata.resourceVersion))
    expect(put.body.metadata.uid).to.equal(v1.metadata.uid)
    expect(put.body.metadata.generation).to.equal(2)

    const revision = await kube.revision()
    const stale = expectStatus(await kube.put(`${CMS}/cas`, { ...v1, data: { n: 'stale' } }), 409, 'Conflict')
    expect(stale.details.name).to.equal('cas')
    expect(await kube.revision(), 'a conflict writes nothing').to.equal(revision)
    expect((await kube.get(`${CMS}/cas`)).body.data).to.deep.equal({ n: '2' })

    // Without a resourceVersion the replace is unconditional.
    const { resourceVersion: _rv, ...meta } = v1.metadata
    const blind = await kube.put(`${CMS}/cas`, { ...v1, metadata: meta, data: { n: '3' } })
    expect(blind.status).to.equal(200)
    expect(blind.body.data).to.deep.equal({ n: '3' })
  })

  it('keeps uid and creationTimestamp whatever the client sends; a metadata-only change keeps the generation', async () => {
    const v1 = await kube.mustCreate(CMS, configMap('managed'))
    const put = await kube.put(`${CMS}/managed`, {
      ...v1,
      metadata: { ...v1.metadata, uid: 'forged', creationTimestamp: '2000-01-01T00:00:00Z', labels: { a: 'b' } },
    })
    expect(put.status).to.equal(200)
    expect(put.body.metadata.uid).to.equal(v1.metadata.uid)
    expect(put.body.metadata.creationTimestamp).to.equal(v1.metadata.creationTimestamp)
    expect(put.body.metadata.labels).to.deep.equal({ a: 'b' })
    expect(put.body.metadata.generation).to.equal(1)
  })

  it('an update that changes nothing writes nothing', async () => {
    const v1 = await kube.mustCreate(CMS, configMap('noop'))
    const revision = await kube.revision()
    const put = await kube.put(`${CMS}/noop`, v1)
    expect(put.status).to.equal(200)
    expect(put.body.metadata.resourceVersion).to.equal(v1.metadata.resourceVersion)
    expect(await kube.revision()).to.equal(revision)
  })

  it('patches: JSON merge patch, strategic merge patch (as merge patch), JSON patch; a patch with a stale resourceVersion is 409', async () => {
    const v1 = await kube.mustCreate(CMS, configMap('p', { keep: 'me', drop: 'me' }, { a: '1', b: '2' }))
    const merge = await kube.patch(`${CMS}/p`, { metadata: { labels: { drop: null } }, data: { b: null, c: '3' } })
    expect(merge.status).to.equal(200)
    expect(merge.body.metadata.labels).to.deep.equal({ keep: 'me' })
    expect(merge.body.data).to.deep.equal({ a: '1', c: '3' })

    const smp = await kube.patch(`${CMS}/p`, { data: { d: '4' }, '$setElementOrder/x': [] }, 'application/strategic-merge-patch+json')
    expect(smp.status).to.equal(200)
    expect(smp.body.data).to.deep.equal({ a: '1', c: '3', d: '4' })
    expect(smp.body['$setElementOrder/x']).to.equal(undefined)

    const json = await kube.patch(
      `${CMS}/p`,
      [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'replace', path: '/data/a', value: 'one' },
        { op: 'remove', path: '/data/c' },
        { op: 'move', from: '/data/d', path: '/data/e' },
        { op: 'add', path: '/metadata/annotations', value: { 'x/y': 'z' } },
      ],
      'application/json-patch+json',
    )
    expect(json.status, JSON.stringify(json.body)).to.equal(200)
    expect(json.body.data).to.deep.equal({ a: 'one', e: '4' })
    expect(json.body.metadata.annotations).to.deep.equal({ 'x/y': 'z' })

    const failedTest = await kube.patch(`${CMS}/p`, [{ op: 'test', path: '/data/a', value: 'other' }], 'application/json-patch+json')
    expectStatus(failedTest, 400, 'BadRequest')
    const stale = await kube.patch(`${CMS}/p`, { metadata: { resourceVersion: v1.metadata.resourceVersion }, data: { z: '1' } })
    expectStatus(stale, 409, 'Conflict')
    const apply = await kube.request('PATCH', `${CMS}/p`, { raw: 'data: {}', contentType: 'application/apply-patch+yaml' })
    expectStatus(apply, 415, 'UnsupportedMediaType')
    expect((await kube.get(`${CMS}/p`)).body.data).to.deep.equal({ a: 'one', e: '4' })
  })

  it('deletes with preconditions (uid, resourceVersion → 409) and returns the last state', async () => {
    const v1 = await kube.mustCreate(CMS, configMap('del'))
    expectStatus(
      await kube.delete(`${CMS}/del`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'other' } }),
      409,
      'Conflict',
    )
    expectStatus(await kube.delete(`${CMS}/del`, { preconditions: { resourceVersion: '1' } }), 409, 'Conflict')
    const del = await kube.delete(`${CMS}/del`, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: v1.metadata.uid, resourceVersion: v1.metadata.resourceVersion },
    })
    expect(del.status).to.equal(200)
    expect(del.body.metadata.uid).to.equal(v1.metadata.uid)
    expectStatus(await kube.get(`${CMS}/del`), 404, 'NotFound')
    expectStatus(await kube.delete(`${CMS}/del`), 404, 'NotFound')
    const kv = await kube.get('/v1/kv', { key: '/registry/configmaps/default/del' })
    expect(kv.body.kvs).to.have.length(0)
  })

  it('with finalizers, delete sets deletionTimestamp; removing the last finalizer deletes the object', async () => {
    await kube.mustCreate(CMS, { ...configMap('fin'), metadata: { name: 'fin', finalizers: ['example.com/hold'] } })
    const del = await kube.delete(`${CMS}/fin`)
    expect(del.status).to.equal(200)
    expect(del.body.metadata.deletionTimestamp).to.be.a('string')
    const held = await kube.get(`${CMS}/fin`)
    expect(held.status).to.equal(200)
    expect(held.body.metadata.deletionTimestamp).to.equal(del.body.metadata.deletionTimestamp)
    const release = await kube.patch(`${CMS}/fin`, { metadata: { finalizers: null } })
    expect(release.status).to.equal(200)
    expectStatus(await kube.get(`${CMS}/fin`), 404, 'NotFound')
  })

  it('deletecollection deletes what the selector matches, nothing else', async () => {
    const NS = '/api/v1/namespaces/dc/configmaps'
    await kube.mustCreate('/api/v1/namespaces', { metadata: { name: 'dc' } })
    for (const [name, tier] of [
      ['a', 'x'],
      ['b', 'x'],
      ['c', 'y'],
    ])
      await kube.mustCreate(NS, configMap(name, { tier }))
    const r = await kube.delete(NS, undefined, { labelSelector: 'tier=x' })
    expect(r.status).to.equal(200)
    expect(r.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).to.deep.equal(['a', 'b'])
    const left = await kube.get(NS)
    expect(left.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).to.deep.equal(['c'])
  })

  it('dryRun=All validates and answers but writes nothing', async () => {
    const revision = await kube.revision()
    const r = await kube.post(CMS, configMap('dry'), { dryRun: 'All' })
    expect(r.status).to.equal(201)
    expect(r.body.metadata.name).to.equal('dry')
    expectStatus(await kube.get(`${CMS}/dry`), 404, 'NotFound')
    expect(await kube.revision()).to.equal(revision)
  })

  it('supports generateName, cluster-scoped kinds and group kinds (coordination.k8s.io leases)', async () => {
    const gen = await kube.mustCreate(CMS, { metadata: { generateName: 'gen-' }, data: {} })
    expect(gen.metadata.name).to.match(/^gen-[a-z0-9]{5}$/)
    const ns = await kube.mustCreate('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } })
    expect(ns.metadata.namespace).to.equal(undefined)
    expect(ns.status.phase).to.equal('Active')
    expect((await kube.get('/v1/kv', { key: '/registry/namespaces/team-a' })).body.kvs).to.have.length(1)
    const lease = await kube.mustCreate('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15 },
    })
    expect(lease.apiVersion).to.equal('coordination.k8s.io/v1')
    expect((await kube.get('/v1/kv', { key: '/registry/coordination.k8s.io/leases/kube-system/leader' })).body.kvs).to.have.length(1)
  })

  it("folds a Secret's stringData into base64 data", async () => {
    const s = await kube.mustCreate('/api/v1/namespaces/default/secrets', { metadata: { name: 's' }, stringData: { password: 'hunter2' } })
    expect(s.stringData).to.equal(undefined)
    expect(s.data).to.deep.equal({ password: Buffer.from('hunter2').toString('base64') })
  })
})
