/**
 * Namespace lifecycle (apiserver/resources/namespaces.ts): creating in a missing namespace is 404
 * NotFound (and allowed with resourceNamespaceMustExist=false); deleting a namespace marks it
 * Terminating, removes every namespaced object in it (built-in kinds and CRDs), then removes it, with the
 * watch events of each step; creates in a terminating namespace are 403 Forbidden; default may not be
 * deleted; a namespace a crash left Terminating is finished at the next start.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServerProcess } from '../../support/server-process.js'
import { configMap, expectStatus, Kube, names, openWatch, useServer, type Json } from './helpers.js'

const NAMESPACES = '/api/v1/namespaces'
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

describe('resource API: namespace lifecycle', function () {
  this.timeout(60_000)
  const server = useServer()
  let kube: Kube
  before(() => {
    kube = new Kube(server().process.http)
  })

  it('creating in a namespace that does not exist is 404 NotFound; the system namespaces always exist', async () => {
    const s = expectStatus(await kube.post('/api/v1/namespaces/nowhere/configmaps', configMap('c')), 404, 'NotFound')
    expect(s.details).to.deep.include({ name: 'nowhere', kind: 'namespaces' })
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      await kube.mustCreate(`/api/v1/namespaces/${ns}/configmaps`, configMap('c'))
    const ns = await kube.mustCreate(NAMESPACES, { metadata: { name: 'now-here' } })
    expect(ns.status).to.deep.equal({ phase: 'Active' })
    await kube.mustCreate('/api/v1/namespaces/now-here/configmaps', configMap('c'))
  })

  it('deleting a namespace: Terminating, its objects deleted (watches see DELETED), then it is gone', async () => {
    await kube.mustCreate(CRDS, {
      metadata: { name: 'things.ns.example.com' },
      spec: {
        group: 'ns.example.com',
        scope: 'Namespaced',
        names: { plural: 'things', kind: 'Thing' },
        versions: [{ name: 'v1', served: true, storage: true }],
      },
    })
    await kube.mustCreate(NAMESPACES, { metadata: { name: 'doomed' } })
    await kube.mustCreate(NAMESPACES, { metadata: { name: 'kept' } })
    for (const ns of ['doomed', 'kept']) {
      await kube.mustCreate(`/api/v1/namespaces/${ns}/configmaps`, configMap('c1'))
      await kube.mustCreate(`/api/v1/namespaces/${ns}/configmaps`, configMap('c2'))
      await kube.mustCreate(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 's1' }, stringData: { p: 'x' } })
      await kube.mustCreate(`/apis/ns.example.com/v1/namespaces/${ns}/things`, { metadata: { name: 't1' } })
    }
    const rv = await kube.revision()
    const cms = await openWatch(kube.base, '/api/v1/namespaces/doomed/configmaps', { resourceVersion: rv })
    const things = await openWatch(kube.base, '/apis/ns.example.com/v1/things', { resourceVersion: rv })
    const nss = await openWatch(kube.base, NAMESPACES, { resourceVersion: rv, fieldSelector: 'metadata.name=doomed' })

    const r = await kube.delete(`${NAMESPACES}/doomed`)
    expect(r.status, JSON.stringify(r.body)).to.equal(200)
    expect(r.body.status.phase).to.equal('Terminating')
    expect(r.body.metadata.deletionTimestamp).to.be.a('string')

    await nss.waitFor((e) => e.length >= 2, 10_000, 'MODIFIED then DELETED')
    expect(names(nss.events)).to.deep.equal(['MODIFIED doomed', 'DELETED doomed'])
    expect(nss.events[0].object.status.phase).to.equal('Terminating')
    await cms.waitFor((e) => e.length >= 2)
    expect(names(cms.events).sort()).to.deep.equal(['DELETED c1', 'DELETED c2'])
    await things.waitFor((e) => e.length >= 1)
    expect(names(things.events)).to.deep.equal(['DELETED t1'])
    expect(things.events[0].object.metadata.namespace).to.equal('doomed')
    for (const w of [cms, things, nss]) w.close()

    expectStatus(await kube.get(`${NAMESPACES}/doomed`), 404, 'NotFound')
    for (const path of [
      '/api/v1/namespaces/doomed/configmaps',
      '/api/v1/namespaces/doomed/secrets',
      '/apis/ns.example.com/v1/namespaces/doomed/things',
    ]) {
      expect((await kube.get(path)).body.items, path).to.deep.equal([])
    }
    // The other namespace is untouched.
    expect((await kube.get('/api/v1/namespaces/kept/configmaps')).body.items).to.have.length(2)
    expect((await kube.get('/apis/ns.example.com/v1/namespaces/kept/things')).body.items).to.have.length(1)
  })

  it('a namespace held by a finalizer stays Terminating: creates there are 403 Forbidden, updates are allowed', async () => {
    await kube.mustCreate(NAMESPACES, { metadata: { name: 'held', finalizers: ['example.com/hold'] } })
    await kube.mustCreate('/api/v1/namespaces/held/configmaps', configMap('c1'))
    const r = await kube.delete(`${NAMESPACES}/held`)
    expect(r.body.status.phase).to.equal('Terminating')
    const ns = (await kube.get(`${NAMESPACES}/held`)).body
    expect(ns.status.phase).to.equal('Terminating')
    expect((await kube.get('/api/v1/namespaces/held/configmaps')).body.items).to.deep.equal([])
    const s = expectStatus(await kube.post('/api/v1/namespaces/held/configmaps', configMap('late')), 403, 'Forbidden')
    expect(s.message).to.equal('unable to create new content in namespace held because it is being terminated')
    // Labels may still change; the phase stays Terminating.
    const labelled = await kube.patch(`${NAMESPACES}/held`, { metadata: { labels: { a: 'b' } }, status: { phase: 'Active' } })
    expect(labelled.body.status.phase).to.equal('Terminating')
    // Clearing the finalizer removes it.
    const cleared = await kube.patch(`${NAMESPACES}/held`, { metadata: { finalizers: null } })
    expect(cleared.status).to.equal(200)
    expectStatus(await kube.get(`${NAMESPACES}/held`), 404, 'NotFound')
  })

  it('default, kube-system and kube-public may not be deleted (403); a missing namespace is 404', async () => {
    for (const ns of ['default', 'kube-system', 'kube-public']) expectStatus(await kube.delete(`${NAMESPACES}/${ns}`), 403, 'Forbidden')
    expectStatus(await kube.delete(`${NAMESPACES}/never-was`), 404, 'NotFound')
  })

  it('dryRun deletes nothing', async () => {
    await kube.mustCreate(NAMESPACES, { metadata: { name: 'dry' } })
    await kube.mustCreate('/api/v1/namespaces/dry/configmaps', configMap('c1'))
    const r = await kube.delete(`${NAMESPACES}/dry`, undefined, { dryRun: 'All' })
    expect(r.status).to.equal(200)
    expect((await kube.get(`${NAMESPACES}/dry`)).body.status.phase).to.equal('Active')
    expect((await kube.get('/api/v1/namespaces/dry/configmaps')).body.items).to.have.length(1)
  })
})

describe('resource API: namespace lifecycle switched off, and after a crash', function () {
  this.timeout(60_000)

  it('with resourceNamespaceMustExist=false, any namespace name may be used', async () => {
    const s = await startServerProcess(['--resource-namespace-must-exist=false'])
    try {
      const kube = new Kube(s.http)
      await kube.mustCreate('/api/v1/namespaces/anywhere/configmaps', configMap('c'))
    } finally {
      await s.cleanup()
    }
  })

  it('a namespace left Terminating (written through the native API) is finished at start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-ns-'))
    try {
      let s = await startServerProcess([], dir)
      let kube = new Kube(s.http)
      await kube.mustCreate(NAMESPACES, { metadata: { name: 'half' } })
      await kube.mustCreate('/api/v1/namespaces/half/configmaps', configMap('c1'))
      // What a crash after step (1) leaves: the namespace marked, its content still there.
      const stored: Json = (await kube.get(`${NAMESPACES}/half`)).body
      const marked = {
        ...stored,
        metadata: { ...stored.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', resourceVersion: undefined },
        status: { phase: 'Terminating' },
      }
      const put = await kube.request('PUT', '/v1/kv', { json: { key: '/registry/namespaces/half', value: JSON.stringify(marked) } })
      expect(put.status, JSON.stringify(put.body)).to.equal(200)
      await s.stop('SIGTERM')
      await s.cleanup()
      s = await startServerProcess([], dir)
      kube = new Kube(s.http)
      expectStatus(await kube.get(`${NAMESPACES}/half`), 404, 'NotFound')
      expect((await kube.get('/api/v1/namespaces/half/configmaps')).body.items).to.deep.equal([])
      await s.cleanup()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
