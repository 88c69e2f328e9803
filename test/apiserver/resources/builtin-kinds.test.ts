/**
 * The built-in kinds `kubectl create` makes (apps, batch, core services and friends, rbac), served as
 * stored objects, and the request shapes of Kubernetes client libraries: boolean query parameters in
 * any spelling Go's strconv.ParseBool accepts, and DELETE with a JSON content type and an empty body.
 * Then kubectl itself: create deployment, scale, get deploy, delete.
 */
import { expect } from 'chai'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expectStatus, Kube, openWatch, useServer, type Json } from './helpers.js'
import { KubectlHarness } from './kubectl-harness.js'

const KINDS: { base: string; resource: string; kind: string; apiVersion: string; namespaced: boolean }[] = [
  { base: '/apis/apps/v1', resource: 'deployments', kind: 'Deployment', apiVersion: 'apps/v1', namespaced: true },
  { base: '/apis/apps/v1', resource: 'replicasets', kind: 'ReplicaSet', apiVersion: 'apps/v1', namespaced: true },
  { base: '/apis/apps/v1', resource: 'statefulsets', kind: 'StatefulSet', apiVersion: 'apps/v1', namespaced: true },
  { base: '/apis/apps/v1', resource: 'daemonsets', kind: 'DaemonSet', apiVersion: 'apps/v1', namespaced: true },
  { base: '/apis/batch/v1', resource: 'jobs', kind: 'Job', apiVersion: 'batch/v1', namespaced: true },
  { base: '/apis/batch/v1', resource: 'cronjobs', kind: 'CronJob', apiVersion: 'batch/v1', namespaced: true },
  { base: '/api/v1', resource: 'services', kind: 'Service', apiVersion: 'v1', namespaced: true },
  { base: '/api/v1', resource: 'serviceaccounts', kind: 'ServiceAccount', apiVersion: 'v1', namespaced: true },
  { base: '/api/v1', resource: 'endpoints', kind: 'Endpoints', apiVersion: 'v1', namespaced: true },
  { base: '/api/v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespaced: true },
  {
    base: '/apis/rbac.authorization.k8s.io/v1',
    resource: 'roles',
    kind: 'Role',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    namespaced: true,
  },
  {
    base: '/apis/rbac.authorization.k8s.io/v1',
    resource: 'rolebindings',
    kind: 'RoleBinding',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    namespaced: true,
  },
  {
    base: '/apis/rbac.authorization.k8s.io/v1',
    resource: 'clusterroles',
    kind: 'ClusterRole',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    namespaced: false,
  },
  {
    base: '/apis/rbac.authorization.k8s.io/v1',
    resource: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    namespaced: false,
  },
]

/** Objects of the kinds `kubectl create` has no subcommand for, with the status a controller would write. */
const KINDS_YAML = `
apiVersion: apps/v1
kind: ReplicaSet
metadata: { name: web-rs }
spec:
  replicas: 3
  selector: { matchLabels: { app: web } }
  template: { metadata: { labels: { app: web } }, spec: { containers: [{ name: nginx, image: nginx }] } }
status: { replicas: 2, readyReplicas: 1 }
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  replicas: 3
  serviceName: db
  selector: { matchLabels: { app: db } }
  template: { metadata: { labels: { app: db } }, spec: { containers: [{ name: pg, image: postgres }] } }
status: { replicas: 1, readyReplicas: 1 }
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec: { nodeSelector: { kubernetes.io/os: linux }, containers: [{ name: agent, image: busybox }] }
---
apiVersion: v1
kind: Endpoints
metadata: { name: db }
subsets: [{ addresses: [{ ip: 10.0.0.1 }, { ip: 10.0.0.2 }], ports: [{ port: 5432 }] }]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data }
spec: { accessModes: [ReadWriteOnce], storageClassName: fast, volumeName: pv-1, resources: { requests: { storage: 1Gi } } }
status: { phase: Bound, accessModes: [ReadWriteOnce], capacity: { storage: 1Gi } }
`

describe('resource API: built-in kinds and client library request shapes', function () {
  this.timeout(60_000)
  const server = useServer()
  let kube: Kube
  before(() => {
    kube = new Kube(server().process.http)
  })

  for (const k of KINDS) {
    it(`${k.apiVersion} ${k.resource}: discovered, created, listed, watched (watch=True) and deleted (empty JSON body)`, async () => {
      const doc = await kube.get(k.base)
      expect(doc.status).to.equal(200)
      expect((doc.body.resources as Json[]).map((r) => r.name)).to.include(k.resource)
      const collection = `${k.base}${k.namespaced ? '/namespaces/default' : ''}/${k.resource}`
      const watch = await openWatch(kube.base, collection, { watch: 'True' })
      try {
        expect(watch.status).to.equal(200)
        const created = await kube.mustCreate(collection, { apiVersion: k.apiVersion, kind: k.kind, metadata: { name: 'one' }, spec: {} })
        expect(created.kind).to.equal(k.kind)
        await watch.waitFor((es) => es.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'one'), undefined, 'ADDED')
        const list = await kube.get(collection)
        expect(list.body.kind).to.equal(`${k.kind}List`)
        expect((list.body.items as Json[]).map((o) => o.metadata.name)).to.deep.equal(['one'])
        const deleted = await kube.request('DELETE', `${collection}/one`, { raw: '', contentType: 'application/json' })
        expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200)
        await watch.waitFor((es) => es.some((e) => e.type === 'DELETED'), undefined, 'DELETED')
        expect((await kube.get(collection)).body.items).to.deep.equal([])
      } finally {
        watch.close()
      }
    })
  }

  it('boolean query parameters: every ParseBool spelling, and 400 for anything else', async () => {
    for (const yes of ['1', 't', 'T', 'TRUE', 'true', 'True']) {
      const w = await openWatch(kube.base, '/api/v1/namespaces/default/configmaps', { watch: yes, timeoutSeconds: 1 })
      expect(w.status).to.equal(200)
      await w.ended
    }
    for (const no of ['0', 'f', 'F', 'FALSE', 'false', 'False']) {
      const r = await kube.get('/api/v1/namespaces/default/configmaps', { watch: no })
      expect(r.body.kind, no).to.equal('ConfigMapList')
    }
    expectStatus(await kube.get('/api/v1/namespaces/default/configmaps', { watch: 'yes' }), 400, 'BadRequest')
    expectStatus(
      await kube.get('/api/v1/namespaces/default/configmaps', { watch: 'true', allowWatchBookmarks: 'maybe' }),
      400,
      'BadRequest',
    )
  })

  it('scale subresource: GET, PUT and merge PATCH of an autoscaling/v1 Scale change spec.replicas only', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments'
    await kube.mustCreate(path, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } } } },
    })
    const scale = await kube.get(`${path}/web/scale`)
    expect(scale.body).to.deep.include({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 } })
    expect(scale.body.status.selector).to.equal('app=web')
    const put = await kube.put(`${path}/web/scale`, { ...scale.body, spec: { replicas: 4 } })
    expect(put.body.spec.replicas).to.equal(4)
    expect((await kube.patch(`${path}/web/scale`, { spec: { replicas: 5 } })).body.spec.replicas).to.equal(5)
    const deploy = (await kube.get(`${path}/web`)).body
    expect(deploy.spec.replicas).to.equal(5)
    expect(deploy.spec.selector).to.deep.equal({ matchLabels: { app: 'web' } })
    expectStatus(await kube.patch(`${path}/web/scale`, { spec: { replicas: -1 } }), 422, 'Invalid')
    expectStatus(await kube.put(`${path}/web/scale`, { ...scale.body, spec: { replicas: 1 } }), 409, 'Conflict')
    expectStatus(await kube.get('/api/v1/namespaces/default/services/x/scale'), 404, 'NotFound')
    const apps = (await kube.get('/apis/apps/v1')).body.resources as Json[]
    expect(apps.find((r) => r.name === 'deployments/scale')).to.deep.include({ group: 'autoscaling', version: 'v1', kind: 'Scale' })
  })

  describe('with kubectl', () => {
    let k: KubectlHarness
    before(async () => {
      k = await KubectlHarness.start(server().process.http)
    })
    after(async () => k.stop())

    it('create deployment, scale, get deploy, create the other kinds, delete', async () => {
      expect(await k.run(['create', 'deployment', 'api', '--image=nginx', '--replicas=1'])).to.match(/deployment.apps\/api created/)
      expect(await k.run(['scale', 'deployment/api', '--replicas=3'])).to.match(/deployment.apps\/api scaled/)
      expect(await k.run(['get', 'deploy', 'api', '-o', 'jsonpath={.spec.replicas}'])).to.equal('3')
      expect(await k.run(['get', 'deploy'])).to.match(/^api\s/m)
      expect(await k.run(['create', 'job', 'once', '--image=busybox'])).to.match(/job.batch\/once created/)
      expect(await k.run(['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 0 * * *'])).to.match(
        /cronjob.batch\/nightly created/,
      )
      expect(await k.run(['create', 'service', 'clusterip', 'front', '--tcp=80:8080'])).to.match(/service\/front created/)
      expect(await k.run(['create', 'serviceaccount', 'robot'])).to.match(/serviceaccount\/robot created/)
      expect(await k.run(['create', 'role', 'reader', '--verb=get', '--resource=configmaps'])).to.match(
        /role.rbac.authorization.k8s.io\/reader created/,
      )
      expect(await k.run(['create', 'rolebinding', 'robot-reads', '--role=reader', '--serviceaccount=default:robot'])).to.match(
        /rolebinding.rbac.authorization.k8s.io\/robot-reads created/,
      )
      expect(await k.run(['create', 'clusterrole', 'viewer', '--verb=list', '--resource=pods'])).to.match(
        /clusterrole.rbac.authorization.k8s.io\/viewer created/,
      )
      expect(await k.run(['delete', 'deployment', 'api'])).to.match(/deployment.apps "api" deleted/)
      expect(await k.run(['get', 'deploy', '-o', 'name'])).not.to.contain('deployment.apps/api')
    })

    it("get shows kube-apiserver's columns for each kind (the Table the door serves)", async () => {
      await writeFile(join(k.dir, 'kinds.yaml'), KINDS_YAML)
      await k.run(['create', '-f', join(k.dir, 'kinds.yaml')])
      await k.run(['create', 'deployment', 'site', '--image=nginx', '--replicas=2'])
      await k.run(['create', 'job', 'batch1', '--image=busybox'])
      await k.run(['create', 'cronjob', 'tick', '--image=busybox', '--schedule=*/5 * * * *'])
      await k.run(['create', 'service', 'nodeport', 'edge', '--tcp=80:8080'])
      await k.run(['create', 'serviceaccount', 'bot'])
      const get = async (kind: string, name: string) => {
        const [header, ...rows] = (await k.run(['get', kind])).trim().split('\n')
        const row = rows.find((r) => r.startsWith(`${name} `))
        expect(row, `${kind} ${name}`).to.be.a('string')
        return { columns: header.trim().split(/\s{2,}/), cells: row!.trim().split(/\s{2,}/) }
      }
      const deploy = await get('deploy', 'site')
      expect(deploy.columns).to.deep.equal(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'])
      expect(deploy.cells.slice(0, 4)).to.deep.equal(['site', '0/2', '0', '0'])
      const rs = await get('rs', 'web-rs')
      expect(rs.columns).to.deep.equal(['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE'])
      expect(rs.cells.slice(0, 4)).to.deep.equal(['web-rs', '3', '2', '1'])
      const sts = await get('sts', 'db')
      expect(sts.columns).to.deep.equal(['NAME', 'READY', 'AGE'])
      expect(sts.cells.slice(0, 2)).to.deep.equal(['db', '1/3'])
      const ds = await get('ds', 'agent')
      expect(ds.columns).to.deep.equal(['NAME', 'DESIRED', 'CURRENT', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'NODE SELECTOR', 'AGE'])
      expect(ds.cells.slice(0, 7)).to.deep.equal(['agent', '0', '0', '0', '0', '0', 'kubernetes.io/os=linux'])
      const job = await get('jobs', 'batch1')
      expect(job.columns).to.deep.equal(['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE'])
      expect(job.cells.slice(0, 3)).to.deep.equal(['batch1', 'Running', '0/1'])
      const cron = await get('cronjobs', 'tick')
      expect(cron.columns).to.deep.equal(['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE'])
      expect(cron.cells.slice(0, 6)).to.deep.equal(['tick', '*/5 * * * *', '<none>', 'False', '0', '<none>'])
      const svc = await get('svc', 'edge')
      expect(svc.columns).to.deep.equal(['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'])
      expect(svc.cells.slice(0, 2)).to.deep.equal(['edge', 'NodePort'])
      expect((await get('sa', 'bot')).columns).to.deep.equal(['NAME', 'SECRETS', 'AGE'])
      const ep = await get('endpoints', 'db')
      expect(ep.columns).to.deep.equal(['NAME', 'ENDPOINTS', 'AGE'])
      expect(ep.cells[1]).to.equal('10.0.0.1:5432,10.0.0.2:5432')
      const pvc = await get('pvc', 'data')
      expect(pvc.columns).to.deep.equal([
        'NAME',
        'STATUS',
        'VOLUME',
        'CAPACITY',
        'ACCESS MODES',
        'STORAGECLASS',
        'VOLUMEATTRIBUTESCLASS',
        'AGE',
      ])
      expect(pvc.cells.slice(0, 6)).to.deep.equal(['data', 'Bound', 'pv-1', '1Gi', 'RWO', 'fast'])
      const wide = (await k.run(['get', 'deploy', 'site', '-o', 'wide'])).trim().split('\n')
      expect(
        wide[0]
          .trim()
          .split(/\s{2,}/)
          .slice(5),
      ).to.deep.equal(['CONTAINERS', 'IMAGES', 'SELECTOR'])
      expect(
        wide[1]
          .trim()
          .split(/\s{2,}/)
          .slice(5),
      ).to.deep.equal(['nginx', 'nginx', 'app=site'])
    })
  })
})
