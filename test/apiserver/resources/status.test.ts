/**
 * The status subresource (`.../{name}/status`) for built-in kinds (Pod, Node, Namespace) and for CRDs
 * that declare subresources.status: a status update changes only .status and keeps generation; an
 * update of the object keeps the stored .status; generation counts spec changes only. Kinds without a
 * status subresource answer 404 there. Watches see each write as one MODIFIED event.
 */
import { expect } from 'chai'
import { expectStatus, Kube, names, openWatch, useServer, type Json } from './helpers.js'

const PODS = '/api/v1/namespaces/default/pods'
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

const pod = (name: string, image = 'nginx'): Json => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image }] },
  status: { phase: 'Pending' },
})

function crd(plural: string, kind: string, status: boolean): Json {
  return {
    metadata: { name: `${plural}.status.example.com` },
    spec: {
      group: 'status.example.com',
      scope: 'Namespaced',
      names: { plural, kind },
      versions: [{ name: 'v1', served: true, storage: true, ...(status ? { subresources: { status: {} } } : {}) }],
    },
  }
}

describe('resource API: status subresource', function () {
  this.timeout(60_000)
  const server = useServer()
  let kube: Kube
  before(() => {
    kube = new Kube(server().process.http)
  })

  it('PUT /status changes only .status, keeps generation, and is one MODIFIED event', async () => {
    const created = await kube.mustCreate(PODS, pod('p1'))
    const w = await openWatch(kube.base, PODS, { resourceVersion: created.metadata.resourceVersion })
    const r = await kube.put(`${PODS}/p1/status`, {
      ...created,
      spec: { containers: [{ name: 'c', image: 'ignored' }] },
      metadata: { ...created.metadata, labels: { ignored: 'yes' } },
      status: { phase: 'Running' },
    })
    expect(r.status, JSON.stringify(r.body)).to.equal(200)
    expect(r.body.status).to.deep.equal({ phase: 'Running' })
    expect(r.body.spec.containers[0].image).to.equal('nginx')
    expect(r.body.metadata.labels).to.equal(undefined)
    expect(r.body.metadata.generation).to.equal(1)
    await w.waitFor((e) => e.length >= 1)
    expect(names(w.events)).to.deep.equal(['MODIFIED p1'])
    expect(w.events[0].object.status.phase).to.equal('Running')
    w.close()
    // GET of /status is the object.
    expect((await kube.get(`${PODS}/p1/status`)).body.status.phase).to.equal('Running')
  })

  it('PATCH /status (merge and JSON patch) changes only .status', async () => {
    const r = await kube.patch(`${PODS}/p1/status`, { status: { podIP: '10.0.0.7' }, spec: { nodeName: 'ignored' } })
    expect(r.status, JSON.stringify(r.body)).to.equal(200)
    expect(r.body.status).to.deep.equal({ phase: 'Running', podIP: '10.0.0.7' })
    expect(r.body.spec.nodeName).to.equal(undefined)
    const j = await kube.patch(
      `${PODS}/p1/status`,
      [{ op: 'replace', path: '/status/phase', value: 'Succeeded' }],
      'application/json-patch+json',
    )
    expect(j.body.status.phase).to.equal('Succeeded')
  })

  it('updates of the object keep the stored .status; generation bumps on spec changes only', async () => {
    const current = (await kube.get(`${PODS}/p1`)).body
    const labelled = await kube.put(`${PODS}/p1`, {
      ...current,
      metadata: { ...current.metadata, labels: { a: 'b' } },
      status: { phase: 'Failed' },
    })
    expect(labelled.body.status.phase).to.equal('Succeeded')
    expect(labelled.body.metadata.generation).to.equal(1)
    const respec = await kube.patch(`${PODS}/p1`, { spec: { containers: [{ name: 'c', image: 'nginx:2' }] }, status: { phase: 'Failed' } })
    expect(respec.body.metadata.generation).to.equal(2)
    expect(respec.body.status.phase).to.equal('Succeeded')
  })

  it('a resourceVersion precondition holds on /status too', async () => {
    const current = (await kube.get(`${PODS}/p1`)).body
    await kube.patch(`${PODS}/p1/status`, { status: { message: 'moved on' } })
    expectStatus(await kube.put(`${PODS}/p1/status`, { ...current, status: { phase: 'Unknown' } }), 409, 'Conflict')
  })

  it('Namespace and Node have /status; ConfigMap has none (404); POST and DELETE there are 405', async () => {
    await kube.mustCreate('/api/v1/nodes', { metadata: { name: 'n1' }, spec: {} })
    const node = await kube.patch('/api/v1/nodes/n1/status', { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } })
    expect(node.body.status.addresses[0].address).to.equal('10.0.0.1')
    await kube.mustCreate('/api/v1/namespaces/default/configmaps', { metadata: { name: 'c1' }, data: { a: '1' } })
    expectStatus(await kube.patch('/api/v1/namespaces/default/configmaps/c1/status', { status: {} }), 404, 'NotFound')
    expectStatus(await kube.delete(`${PODS}/p1/status`), 405, 'MethodNotAllowed')
    expectStatus(await kube.post(`${PODS}/p1/status`, pod('x')), 405, 'MethodNotAllowed')
    const discovery = (await kube.get('/api/v1')).body.resources.map((r: Json) => r.name)
    expect(discovery).to.include.members(['pods/status', 'nodes/status', 'namespaces/status'])
    expect(discovery).not.to.include('configmaps/status')
  })

  it('a CRD with subresources.status: create drops .status, /status writes it, spec changes bump generation', async () => {
    await kube.mustCreate(CRDS, crd('gizmos', 'Gizmo', true))
    const BASE = '/apis/status.example.com/v1/namespaces/default/gizmos'
    const g = await kube.mustCreate(BASE, { metadata: { name: 'g1' }, spec: { size: 1 }, status: { ready: true } })
    expect(g.status).to.equal(undefined)
    const s = await kube.patch(`${BASE}/g1/status`, { status: { ready: true }, spec: { size: 99 } })
    expect(s.body.status).to.deep.equal({ ready: true })
    expect(s.body.spec.size).to.equal(1)
    expect(s.body.metadata.generation).to.equal(1)
    const u = await kube.patch(`${BASE}/g1`, { spec: { size: 2 }, status: { ready: false } })
    expect(u.body.metadata.generation).to.equal(2)
    expect(u.body.status).to.deep.equal({ ready: true })
    const rl = (await kube.get('/apis/status.example.com/v1')).body.resources.map((r: Json) => r.name)
    expect(rl).to.deep.equal(['gizmos', 'gizmos/status'])
  })

  it('a CRD without subresources.status: no /status (404), .status is written with the object and bumps generation', async () => {
    await kube.mustCreate(CRDS, crd('doodads', 'Doodad', false))
    const BASE = '/apis/status.example.com/v1/namespaces/default/doodads'
    const d = await kube.mustCreate(BASE, { metadata: { name: 'd1' }, status: { ready: true } })
    expect(d.status).to.deep.equal({ ready: true })
    expectStatus(await kube.patch(`${BASE}/d1/status`, { status: { ready: false } }), 404, 'NotFound')
    const u = await kube.patch(`${BASE}/d1`, { status: { ready: false } })
    expect(u.body.status).to.deep.equal({ ready: false })
    expect(u.body.metadata.generation).to.equal(2)
  })
})
