/**
 * Bad input to the resource API gets the matching Kubernetes Status (422 Invalid, 400 BadRequest,
 * 404 NotFound, 405 MethodNotAllowed, 413 RequestEntityTooLarge, 415 UnsupportedMediaType), and nothing
 * else is affected: no revision is written, existing objects are intact, the server keeps serving.
 */
import { expect } from 'chai'
import { configMap, expectStatus, Kube, useServer, type Json } from './helpers.js'

const CMS = '/api/v1/namespaces/default/configmaps'
const MAX_REQUEST = 512 * 1024

describe('resource API: bad input', function () {
  this.timeout(30_000)
  const server = useServer(['--max-request-bytes', String(MAX_REQUEST)])
  let kube: Kube
  let keep: Json
  let revision: number
  before(async () => {
    kube = new Kube(server().process.http)
    keep = await kube.mustCreate(CMS, configMap('keep', { app: 'x' }))
    revision = await kube.revision()
  })

  const causeFields = (status: Json): string[] => status.details.causes.map((c: Json) => c.field)

  it('invalid names are 422 Invalid naming metadata.name (DNS-1123 subdomain; a label for namespaces)', async () => {
    for (const name of ['Upper', 'under_score', '-dash', 'dot.', 'a'.repeat(254), 'sp ace', '..']) {
      const s = expectStatus(await kube.post(CMS, configMap(name)), 422, 'Invalid')
      expect(causeFields(s), name).to.include('metadata.name')
      expect(s.details.kind).to.equal('ConfigMap')
    }
    const missing = expectStatus(await kube.post(CMS, { metadata: {} }), 422, 'Invalid')
    expect(missing.details.causes[0]).to.deep.include({ field: 'metadata.name', reason: 'FieldValueRequired' })
    const ns = expectStatus(await kube.post('/api/v1/namespaces', { metadata: { name: 'a.b' } }), 422, 'Invalid')
    expect(causeFields(ns)).to.include('metadata.name')
    const badNs = expectStatus(await kube.post('/api/v1/namespaces/Bad_NS/configmaps', configMap('ok')), 422, 'Invalid')
    expect(causeFields(badNs)).to.include('metadata.namespace')
  })

  it('bad labels and annotations are 422 Invalid', async () => {
    const cases: Json[] = [
      { labels: { 'bad key!': 'v' } },
      { labels: { k: 'bad value!' } },
      { labels: { k: 'x'.repeat(64) } },
      { labels: { k: 3 } },
      { labels: 'not-a-map' },
      { annotations: { '/noname': 'v' } },
      { annotations: { big: 'x'.repeat(300 * 1024) } },
      { finalizers: 'x' },
    ]
    for (const meta of cases) {
      const s = expectStatus(await kube.post(CMS, { metadata: { name: 'bad', ...meta } }), 422, 'Invalid')
      expect(s.details.causes.length, JSON.stringify(meta).slice(0, 80)).to.be.greaterThan(0)
    }
    expectStatus(await kube.post(CMS, { metadata: 'x' }), 422, 'Invalid')
  })

  it('a namespace, name, kind or apiVersion in the body that contradicts the URL is 400 BadRequest', async () => {
    expectStatus(await kube.post(CMS, { ...configMap('n'), metadata: { name: 'n', namespace: 'other' } }), 400, 'BadRequest')
    expectStatus(await kube.put(`${CMS}/keep`, { ...keep, metadata: { ...keep.metadata, name: 'other' } }), 400, 'BadRequest')
    expectStatus(await kube.put(`${CMS}/keep`, { ...keep, metadata: { ...keep.metadata, namespace: 'other' } }), 400, 'BadRequest')
    expectStatus(await kube.post(CMS, { ...configMap('k'), kind: 'Secret' }), 400, 'BadRequest')
    expectStatus(await kube.post(CMS, { ...configMap('k'), apiVersion: 'v2' }), 400, 'BadRequest')
    expectStatus(await kube.post(CMS, { ...configMap('k'), apiVersion: 'apps/v1' }), 400, 'BadRequest')
    expectStatus(await kube.post(CMS, { ...configMap('k'), metadata: { name: 'k', resourceVersion: '5' } }), 400, 'BadRequest')
  })

  it('malformed bodies are 400 BadRequest', async () => {
    expectStatus(await kube.request('POST', CMS, { raw: '{"metadata":' }), 400, 'BadRequest')
    expectStatus(await kube.request('POST', CMS, { raw: '[1,2]' }), 400, 'BadRequest')
    expectStatus(await kube.request('POST', CMS, { raw: '{"__proto__":{"x":1},"metadata":{"name":"p"}}' }), 400, 'BadRequest')
    expectStatus(await kube.patch(`${CMS}/keep`, [1]), 400, 'BadRequest')
    expectStatus(
      await kube.patch(`${CMS}/keep`, [{ op: 'remove', path: '/nope/deeper' }], 'application/json-patch+json'),
      400,
      'BadRequest',
    )
    expectStatus(await kube.patch(`${CMS}/keep`, { op: 'add' }, 'application/json-patch+json'), 400, 'BadRequest')
    expectStatus(await kube.request('PATCH', `${CMS}/keep`, { raw: '{}', contentType: 'text/plain' }), 415, 'UnsupportedMediaType')
    expectStatus(await kube.request('POST', CMS, { raw: 'a: b', contentType: 'application/yaml' }), 415, 'UnsupportedMediaType')
    expectStatus(await kube.delete(`${CMS}/keep`, { kind: 'Pod' }), 400, 'BadRequest')
    expectStatus(await kube.post(CMS, configMap('dry'), { dryRun: 'Some' }), 400, 'BadRequest')
  })

  it('huge objects are 413 RequestEntityTooLarge', async () => {
    const huge = configMap('huge', undefined, { blob: 'x'.repeat(MAX_REQUEST + 1024) })
    expectStatus(await kube.post(CMS, huge), 413, 'RequestEntityTooLarge')
    expectStatus(await kube.put(`${CMS}/keep`, { ...keep, data: huge.data }), 413, 'RequestEntityTooLarge')
    // A small patch that makes the object too large is refused by the log's limit (maxRequestBytes).
    const blob = 'x'.repeat(200 * 1024)
    const grow = await kube.patch(
      `${CMS}/keep`,
      [
        { op: 'add', path: '/data/a', value: blob },
        { op: 'copy', from: '/data/a', path: '/data/b' },
        { op: 'copy', from: '/data/a', path: '/data/c' },
      ],
      'application/json-patch+json',
    )
    expectStatus(grow, 413, 'RequestEntityTooLarge')
  })

  it('unknown kinds, groups, versions and misplaced scopes are 404; wrong methods 405', async () => {
    expectStatus(await kube.get('/api/v1/namespaces/default/widgets'), 404, 'NotFound')
    expectStatus(await kube.get('/apis/nope.example.com/v1/things'), 404, 'NotFound')
    expectStatus(await kube.get('/api/v2/configmaps'), 404, 'NotFound')
    expectStatus(await kube.get('/apis/nope.example.com'), 404, 'NotFound')
    expectStatus(await kube.get('/api/v1/namespaces/default/nodes/n1'), 404, 'NotFound')
    expectStatus(await kube.get(`${CMS}/keep/status`), 404, 'NotFound')
    expectStatus(await kube.get('/api/v1/namespaces/default/configmaps/a/b/c'), 404, 'NotFound')
    expectStatus(await kube.post(`${CMS}/keep`, configMap('keep')), 405, 'MethodNotAllowed')
    expectStatus(await kube.post('/api/v1/configmaps', configMap('x')), 405, 'MethodNotAllowed')
    expectStatus(await kube.put(CMS, configMap('x')), 405, 'MethodNotAllowed')
    expectStatus(await kube.post('/api/v1', {}), 405, 'MethodNotAllowed')
  })

  it('none of it was written: same revision, the existing object unchanged, the native API unaffected', async () => {
    expect(await kube.revision()).to.equal(revision)
    expect((await kube.get(`${CMS}/keep`)).body).to.deep.equal(keep)
    const list = await kube.get(CMS)
    expect(list.body.items.map((o: Json) => o.metadata.name)).to.deep.equal(['keep'])
    const native = await kube.get('/v1/kv', { key: '/registry/configmaps/default/keep' })
    expect(native.body.kvs[0].modRevision).to.equal(Number(keep.metadata.resourceVersion))
    // The native API keeps its own error shape.
    const nativeError = await kube.get('/v1/kv')
    expect(nativeError.status).to.equal(400)
    expect(nativeError.body.error.code).to.equal('INVALID_ARGUMENT')
  })
})
