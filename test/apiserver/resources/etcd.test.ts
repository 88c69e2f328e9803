/**
 * One keyspace behind two front doors: what the resource API writes, etcdctl (v3 API, through kvlog's
 * etcd gRPC door) reads at /registry/..., and objects etcdctl writes or deletes there show up in the
 * resource API's gets and watches, with resourceVersion = etcd's mod_revision.
 */
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { configMap, Kube, names, openWatch, useServer } from './helpers.js'

const run = promisify(execFile)
const CMS = '/api/v1/namespaces/shared/configmaps'

describe('resource API and the etcd door', function () {
  this.timeout(30_000)
  // Objects go into throwaway namespaces that are never created (namespaces.ts: they need not exist).
  const server = useServer(['--resource-namespace-must-exist=false'])
  let kube: Kube
  const etcdctl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run('etcdctl', [`--endpoints=${server().process.grpc}`, ...args], {
      env: { ...process.env, ETCDCTL_API: '3' },
      timeout: 10_000,
    })
    return stdout
  }
  before(() => (kube = new Kube(server().process.http)))

  it('etcdctl reads what the resource API wrote, with the same revision', async () => {
    const created = await kube.mustCreate(CMS, configMap('from-k8s', { a: 'b' }))
    const out = JSON.parse(await etcdctl('get', '/registry/configmaps/shared/from-k8s', '-w', 'json'))
    expect(out.kvs).to.have.length(1)
    expect(out.kvs[0].mod_revision).to.equal(Number(created.metadata.resourceVersion))
    const stored = JSON.parse(Buffer.from(out.kvs[0].value, 'base64').toString('utf8'))
    expect(stored.metadata.uid).to.equal(created.metadata.uid)
    expect(stored.data).to.deep.equal({ k: 'v' })
  })

  it('objects etcdctl puts and deletes appear in gets and watches', async () => {
    const watch = await openWatch(server().process.http, CMS, { resourceVersion: await kube.revision() })
    try {
      await etcdctl(
        'put',
        '/registry/configmaps/shared/from-etcd',
        JSON.stringify({ metadata: { name: 'from-etcd', namespace: 'shared' }, data: { x: '1' } }),
      )
      const got = await kube.get(`${CMS}/from-etcd`)
      expect(got.status).to.equal(200)
      expect(got.body.kind).to.equal('ConfigMap')
      expect(got.body.data).to.deep.equal({ x: '1' })
      const kv = JSON.parse(await etcdctl('get', '/registry/configmaps/shared/from-etcd', '-w', 'json'))
      expect(got.body.metadata.resourceVersion).to.equal(String(kv.kvs[0].mod_revision))
      await etcdctl('del', '/registry/configmaps/shared/from-etcd')
      await watch.waitFor((e) => e.length === 2, 5000)
      expect(names(watch.events)).to.deep.equal(['ADDED from-etcd', 'DELETED from-etcd'])
      expect((await kube.get(`${CMS}/from-etcd`)).status).to.equal(404)
    } finally {
      watch.close()
    }
  })
})
