/**
 * The resource API client against a real `kvlog serve`: paths (core and named groups, namespaced and
 * cluster-scoped), CRUD with Status errors as StatusError codes (NotFound, AlreadyExists, Conflict on a
 * stale resourceVersion, delete preconditions), listAll over pages as one snapshot, and watch streams:
 * events after a resourceVersion, bookmarks, and the 410 Expired ERROR event for a compacted one.
 */
import { expect } from 'chai'
import { KvlogClient, ResourceClient, StatusError, UnreachableError, isReason, type ResourceWatchEvent } from '../../../clients/index.js'
import { closedPort } from '../tcp-proxy.js'
import { configMap, configMaps, serverHarness, versions, type ConfigMap } from '../informer/helpers.js'

async function failure(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p
  } catch (err) {
    expect(err).to.be.instanceOf(StatusError)
    return err as StatusError
  }
  throw new Error('expected a StatusError')
}

/** Reads events from a watch until `n` arrived or the stream ended. */
async function take(events: AsyncIterable<ResourceWatchEvent<ConfigMap>>, n: number): Promise<ResourceWatchEvent<ConfigMap>[]> {
  const out: ResourceWatchEvent<ConfigMap>[] = []
  for await (const e of events) {
    out.push(e)
    if (out.length >= n) break
  }
  return out
}

describe('ResourceClient (real server)', function () {
  this.timeout(30_000)
  const { server } = serverHarness()

  it('builds core, named-group, namespaced and cluster-scoped paths', () => {
    const opts = { endpoint: 'http://x' }
    expect(new ResourceClient(opts, { version: 'v1', resource: 'configmaps' }).path('ns', 'a b')).to.equal(
      '/api/v1/namespaces/ns/configmaps/a%20b',
    )
    expect(new ResourceClient(opts, { version: 'v1', resource: 'configmaps' }).path()).to.equal('/api/v1/configmaps')
    expect(new ResourceClient(opts, { group: 'apps', version: 'v1', resource: 'deployments' }).path('ns')).to.equal(
      '/apis/apps/v1/namespaces/ns/deployments',
    )
    expect(new ResourceClient(opts, { version: 'v1', resource: 'namespaces', namespaced: false }).path('ignored', 'kube-system')).to.equal(
      '/api/v1/namespaces/kube-system',
    )
  })

  it('creates, gets, updates with compare-and-swap, deletes with preconditions; errors carry the Status reason', async () => {
    const s = await server()
    const cms = configMaps(s.http)
    const a = await cms.create(configMap('crud', 'a', { x: '1' }, { app: 'web' }))
    expect(a.metadata.resourceVersion).to.be.a('string')
    expect((await cms.get('a', 'crud')).data).to.deep.equal({ x: '1' })
    const taken = await failure(cms.create(configMap('crud', 'a')))
    expect([taken.code, taken.status]).to.deep.equal(['AlreadyExists', 409])

    const a2 = await cms.update({ ...a, data: { x: '2' } })
    expect(Number(a2.metadata.resourceVersion)).to.be.greaterThan(Number(a.metadata.resourceVersion))
    const stale = await failure(cms.update({ ...a, data: { x: 'stale' } }))
    expect([stale.code, stale.status]).to.deep.equal(['Conflict', 409])

    const pre = await failure(cms.delete('a', 'crud', { resourceVersion: a.metadata.resourceVersion }))
    expect(pre.code).to.equal('Conflict')
    await cms.delete('a', 'crud', { resourceVersion: a2.metadata.resourceVersion })
    const gone = await failure(cms.get('a', 'crud'))
    expect([gone.code, gone.status]).to.deep.equal(['NotFound', 404])
    expect(isReason(gone, 'NotFound')).to.equal(true)
    expect(isReason(new Error('x'), 'NotFound')).to.equal(false)
  })

  it("listAll reads every page at the first page's resourceVersion (one snapshot), with selectors", async () => {
    const s = await server()
    const cms = configMaps(s.http)
    for (let i = 0; i < 9; i++) await cms.create(configMap('pg', `cm-${i}`, {}, { parity: i % 2 === 0 ? 'even' : 'odd' }))
    const firstPage = await cms.list({ namespace: 'pg', limit: 4 })
    expect(firstPage.items).to.have.length(4)
    expect(firstPage.metadata.continue).to.be.a('string')
    const all = await cms.listAll({ namespace: 'pg', pageSize: 2 })
    expect(all.items.map((o) => o.metadata.name)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => `cm-${i}`))
    expect(all.metadata.continue).to.equal(undefined)
    const even = await cms.listAll({ namespace: 'pg', pageSize: 2, labelSelector: 'parity=even' })
    expect(even.items.map((o) => o.metadata.name)).to.deep.equal(['cm-0', 'cm-2', 'cm-4', 'cm-6', 'cm-8'])
    // Writes between pages do not show up in a paged list: it is one snapshot.
    const p1 = await cms.list({ namespace: 'pg', limit: 3 })
    await cms.delete('cm-8', 'pg')
    await cms.create(configMap('pg', 'cm-9'))
    const rest = await cms.list({ namespace: 'pg', limit: 100, continue: p1.metadata.continue })
    expect(versions([...p1.items, ...rest.items])).to.deep.equal(versions(all.items))
  })

  it('watches from a resourceVersion; a compacted one gets one ERROR event with a 410 Expired Status', async () => {
    const s = await server()
    const cms = configMaps(s.http)
    const list = await cms.listAll({ namespace: 'w' })
    const w = cms.watch({ namespace: 'w', resourceVersion: list.metadata.resourceVersion })
    const first = take(w, 3)
    const a = await cms.create(configMap('w', 'a'))
    await cms.update({ ...a, data: { v: '2' } })
    await cms.delete('a', 'w')
    const events = await first
    expect(events.map((e) => (e.type === 'ERROR' ? 'ERROR' : `${e.type} ${e.object.metadata.name}`))).to.deep.equal([
      'ADDED a',
      'MODIFIED a',
      'DELETED a',
    ])
    expect(w.received).to.equal(3)

    const native = new KvlogClient({ endpoint: s.http })
    await native.compact((await native.status()).revision as number)
    const old = await take(cms.watch({ namespace: 'w', resourceVersion: list.metadata.resourceVersion }), 5)
    expect(old).to.have.length(1)
    expect(old[0].type).to.equal('ERROR')
    expect(old[0].object).to.include({ kind: 'Status', code: 410, reason: 'Expired' })
  })

  it('a watch to an unreachable server throws UnreachableError; close() ends an iterator quietly', async () => {
    const port = await closedPort()
    const w = configMaps(`http://127.0.0.1:${port}`).watch({ namespace: 'x' })
    let err: unknown
    try {
      await take(w, 1)
    } catch (e) {
      err = e
    }
    expect(err).to.be.instanceOf(UnreachableError)

    const s = await server()
    const quiet = configMaps(s.http).watch({ namespace: 'quiet', resourceVersion: '0' })
    setTimeout(() => quiet.close(), 200)
    expect(await take(quiet, 1)).to.deep.equal([])
  })
})
