/**
 * CustomResourceDefinitions against a real server: creating one registers its kind (discovery, CRUD,
 * every served version), the registry follows CRD objects written through any front door, survives a
 * restart, and deleting a CRD removes its kind and its objects. Invalid CRDs are 422 Invalid.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { expectStatus, Kube, names, openWatch, type Json } from './helpers.js'

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

function crd(plural: string, kind: string, options: { scope?: string; versions?: Json[]; group?: string } = {}): Json {
  const group = options.group ?? 'example.com'
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: options.scope ?? 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, shortNames: [plural.slice(0, 2)] },
      versions: options.versions ?? [{ name: 'v1', served: true, storage: true }],
    },
  }
}

describe('resource API: CustomResourceDefinitions', function () {
  this.timeout(60_000)
  let dataDir: string
  let server: ServerProcess
  let kube: Kube
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'kvlog-crd-'))
    server = await startServerProcess([], dataDir)
    kube = new Kube(server.http)
  })
  after(async () => {
    await server?.stop('SIGTERM')
    await server?.cleanup()
    await rm(dataDir, { recursive: true, force: true })
  })

  it('creating a CRD registers its kind: discovery, CRUD, established status', async () => {
    expectStatus(await kube.get('/apis/example.com/v1/namespaces/default/widgets'), 404, 'NotFound')
    const created = await kube.mustCreate(CRDS, crd('widgets', 'Widget'))
    expect(created.status.conditions.map((c: Json) => [c.type, c.status])).to.deep.include(['Established', 'True'])
    expect(created.status.acceptedNames.kind).to.equal('Widget')

    const groups = await kube.get('/apis')
    expect(groups.body.groups.map((g: Json) => g.name)).to.include('example.com')
    const resources = await kube.get('/apis/example.com/v1')
    expect(resources.body.kind).to.equal('APIResourceList')
    expect(resources.body.resources).to.deep.equal([
      {
        name: 'widgets',
        singularName: 'widget',
        namespaced: true,
        kind: 'Widget',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['wi'],
      },
    ])

    const w = await kube.mustCreate('/apis/example.com/v1/namespaces/default/widgets', {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { size: 3 },
    })
    expect(w.kind).to.equal('Widget')
    expect((await kube.get('/v1/kv', { key: '/registry/example.com/widgets/default/w1' })).body.kvs).to.have.length(1)
    const list = await kube.get('/apis/example.com/v1/widgets')
    expect(list.body.kind).to.equal('WidgetList')
    expect(list.body.items.map((o: Json) => o.spec.size)).to.deep.equal([3])
  })

  it('serves cluster-scoped kinds and every served version (apiVersion follows the request)', async () => {
    await kube.mustCreate(
      CRDS,
      crd('gadgets', 'Gadget', {
        scope: 'Cluster',
        versions: [
          { name: 'v1', served: true, storage: true },
          { name: 'v2', served: true, storage: false },
          { name: 'v3', served: false, storage: false },
        ],
      }),
    )
    const g = await kube.mustCreate('/apis/example.com/v1/gadgets', { metadata: { name: 'g1' } })
    expect(g.metadata.namespace).to.equal(undefined)
    const v2 = await kube.get('/apis/example.com/v2/gadgets/g1')
    expect(v2.body.apiVersion).to.equal('example.com/v2')
    expectStatus(await kube.get('/apis/example.com/v3/gadgets/g1'), 404, 'NotFound')
    expectStatus(await kube.get('/apis/example.com/v1/namespaces/default/gadgets/g1'), 404, 'NotFound')
  })

  it('rejects invalid CRDs with 422 Invalid and writes nothing', async () => {
    const revision = await kube.revision()
    const bad: Json[] = [
      { ...crd('things', 'Thing'), metadata: { name: 'wrong.example.com' } },
      crd('things', 'Thing', { versions: [{ name: 'v1', served: true, storage: false }] }),
      crd('things', 'Thing', { versions: [] }),
      crd('things', 'Thing', { scope: 'Galaxy' }),
      crd('leases', 'Lease', { group: 'coordination.k8s.io' }),
      crd('things', 'Thing', { group: 'nodots' }),
      { ...crd('things', 'Thing'), spec: undefined },
    ]
    for (const body of bad) expectStatus(await kube.post(CRDS, body), 422, 'Invalid')
    expect(await kube.revision()).to.equal(revision)
  })

  it('follows CRD objects written through another front door (the registry is a watched resource)', async () => {
    const body = { ...crd('sprockets', 'Sprocket'), status: {} }
    const put = await kube.request('PUT', '/v1/kv', {
      json: { key: '/registry/apiextensions.k8s.io/customresourcedefinitions/sprockets.example.com', value: JSON.stringify(body) },
    })
    expect(put.status).to.equal(200)
    const r = await kube.post('/apis/example.com/v1/namespaces/default/sprockets', { metadata: { name: 's1' } })
    expect(r.status).to.equal(201)
  })

  it('survives a restart: kinds come back from the stored CRDs', async () => {
    await server.stop('SIGTERM')
    await server.cleanup()
    server = await startServerProcess([], dataDir)
    kube = new Kube(server.http)
    const w = await kube.get('/apis/example.com/v1/namespaces/default/widgets/w1')
    expect(w.status).to.equal(200)
    expect(w.body.spec.size).to.equal(3)
    expect((await kube.get('/apis/example.com/v1/namespaces/default/sprockets/s1')).status).to.equal(200)
  })

  it('deleting a CRD removes its kind and its objects (watchers see them DELETED)', async () => {
    await kube.mustCreate('/apis/example.com/v1/namespaces/default/widgets', { metadata: { name: 'w2' } })
    const watch = await openWatch(server.http, '/apis/example.com/v1/widgets')
    await watch.waitFor((e) => e.length === 2, 5000)
    const del = await kube.delete(`${CRDS}/widgets.example.com`)
    expect(del.status).to.equal(200)
    await watch.waitFor((e) => e.length === 4, 5000)
    expect(names(watch.events)).to.deep.equal(['ADDED w1', 'ADDED w2', 'DELETED w1', 'DELETED w2'])
    watch.close()
    expectStatus(await kube.get('/apis/example.com/v1/namespaces/default/widgets'), 404, 'NotFound')
    expect((await kube.get('/v1/kv', { key: '/registry/example.com/widgets/', prefix: true })).body.kvs).to.have.length(0)
    const resources = await kube.get('/apis/example.com/v1')
    expect(resources.body.resources.map((r: Json) => r.name)).to.not.include('widgets')
  })
})
