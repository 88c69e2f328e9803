/**
 * The informer against real `kvlog serve` processes (the resource API), some through a TCP proxy that can
 * refuse, cut or black-hole connections:
 *
 * - list, then watch from the list's resourceVersion: handlers see every change, the cache equals the list;
 * - convergence after a relist with missed changes: watch down, objects deleted / updated / created, the
 *   history compacted (POST /v1/compact) so the resume gets 410 Expired; the relist emits exactly the missed
 *   changes, the vanished objects as deletes with DeletedFinalStateUnknown, and the cache equals the list;
 * - a stalled (black-holed) watch is detected and resumed from its resourceVersion without a relist;
 * - bookmarks keep a quiet watch from looking stalled and move the resume point past a compaction;
 * - watches ended by the server (timeoutSeconds) are resumed without a gap or a relist;
 * - label selection (leaving it is a delete), namespace / label / custom indexes, resync, late handlers.
 */
import { expect } from 'chai'
import {
  DeletedFinalStateUnknown,
  Informer,
  KvlogClient,
  LABEL_INDEX,
  NAMESPACE_INDEX,
  objectKey,
  type EventHandler,
  type InformerOptions,
} from '../../../clients/index.js'
import { configMap, configMaps, eventually, serverHarness, versions, type ConfigMap } from './helpers.js'
import { settlesWithin } from '../../support/wait.js'

type Seen = string[]

/** Records handler calls as text: "add ns/a 5 initial", "update ns/a 5->7", "delete ns/a 7", "delete? ns/a 5". */
function recorder(seen: Seen): EventHandler<ConfigMap> {
  return {
    onAdd: (o, initial) => seen.push(`add ${objectKey(o)}${initial ? ' initial' : ''}`),
    onUpdate: (old, o) => seen.push(`update ${objectKey(o)} ${old === o ? 'resync' : ''}`.trim()),
    onDelete: (o) => seen.push(o instanceof DeletedFinalStateUnknown ? `delete-unknown ${o.key}` : `delete ${objectKey(o)}`),
  }
}

describe('Informer (real server)', function () {
  this.timeout(60_000)
  const { server, proxyTo, defer } = serverHarness()

  function informer(endpoint: string, options: InformerOptions<ConfigMap> = {}): Informer<ConfigMap> {
    const inf = new Informer(configMaps(endpoint), { minBackoffMs: 20, maxBackoffMs: 200, ...options })
    defer(() => inf.stop())
    return inf
  }
  /** A started, synced informer whose handler calls are recorded in `seen`. */
  async function recorded(endpoint: string, options: InformerOptions<ConfigMap> = {}): Promise<{ inf: Informer<ConfigMap>; seen: Seen }> {
    const seen: Seen = []
    const inf = informer(endpoint, options)
    inf.addEventHandler(recorder(seen))
    inf.start()
    await inf.synced()
    return { inf, seen }
  }
  async function converged(
    inf: Informer<ConfigMap>,
    endpoint: string,
    selection: { namespace?: string; labelSelector?: string } = {},
  ): Promise<void> {
    let server: string[] = []
    await eventually(
      'the cache to equal the server list',
      async () => {
        server = versions((await configMaps(endpoint).listAll(selection)).items)
        return JSON.stringify(versions(inf.store.list())) === JSON.stringify(server)
      },
      10_000,
      () => ({ cache: versions(inf.store.list()), server }),
    )
  }

  it('lists, then watches from the list resourceVersion: every change reaches the handlers and the cache', async () => {
    const s = await server()
    const cms = configMaps(s.http)
    for (let i = 0; i < 7; i++) await cms.create(configMap('inf', `pre-${i}`, { i: String(i) }))
    const { inf, seen } = await recorded(s.http, { namespace: 'inf', pageSize: 3 })
    expect(inf.lists).to.equal(1)
    expect(seen).to.deep.equal([0, 1, 2, 3, 4, 5, 6].map((i) => `add inf/pre-${i} initial`))

    const a = await cms.create(configMap('inf', 'a', { v: '1' }))
    await cms.update({ ...a, data: { v: '2' } })
    await cms.delete('pre-0', 'inf')
    await cms.create(configMap('other', 'not-mine'))
    await converged(inf, s.http, { namespace: 'inf' })
    expect(seen.slice(7)).to.deep.equal(['add inf/a', 'update inf/a', 'delete inf/pre-0'])
    expect(inf.store.get('inf/a')?.data).to.deep.equal({ v: '2' })
    expect(inf.lists).to.equal(1)
  })

  it('converges after a relist with missed deletes: 410 on resume, deletes with final state unknown, cache equals the list', async () => {
    const s = await server()
    const proxy = await proxyTo(s)
    const direct = configMaps(s.http)
    for (let i = 0; i < 6; i++) await direct.create(configMap('rl', `cm-${i}`, { i: String(i) }))
    const seen: Seen = []
    const inf = informer(proxy.url, { namespace: 'rl' })
    inf.addEventHandler(recorder(seen))
    const expired: unknown[] = []
    inf.on('expired', (rv) => expired.push(rv))
    let retries = 0
    inf.on('retry', () => retries++)
    inf.start()
    await inf.synced()
    await direct.create(configMap('rl', 'seen-live'))
    await eventually('the live add', () => inf.store.has('rl/seen-live'))

    // The watch goes down and stays down (reconnects are refused) while things change.
    proxy.refuse = true
    proxy.cutAll()
    await eventually('the informer to notice', () => retries >= 1)
    const rvBefore = inf.resourceVersion
    for (const i of [0, 2, 4]) await direct.delete(`cm-${i}`, 'rl')
    const cm1 = await direct.get('cm-1', 'rl')
    await direct.update({ ...cm1, data: { i: 'changed' } })
    await direct.create(configMap('rl', 'new-while-down'))
    // Short-lived: created and deleted while down, so the informer never learns of it.
    await direct.create(configMap('rl', 'ephemeral'))
    await direct.delete('ephemeral', 'rl')
    // Compact the history the informer would resume from.
    const native = new KvlogClient({ endpoint: s.http })
    const head = (await native.status()).revision as number
    await native.compact(head)
    expect(Number(rvBefore)).to.be.lessThan(head)

    const before = seen.length
    proxy.refuse = false
    await converged(inf, s.http, { namespace: 'rl' })
    await eventually('the relist', () => inf.lists === 2)
    expect(expired).to.deep.equal([rvBefore])
    expect(seen.slice(before).sort()).to.deep.equal([
      'add rl/new-while-down',
      'delete-unknown rl/cm-0',
      'delete-unknown rl/cm-2',
      'delete-unknown rl/cm-4',
      'update rl/cm-1',
    ])
    expect(inf.store.get('rl/cm-1')?.data).to.deep.equal({ i: 'changed' })

    // And it keeps watching after the relist.
    await direct.delete('cm-3', 'rl')
    await converged(inf, s.http, { namespace: 'rl' })
    expect(seen.at(-1)).to.equal('delete rl/cm-3')
    expect(inf.lists).to.equal(2)
  })

  it('detects a stalled (black-holed) watch and resumes it from its resourceVersion, without a relist', async () => {
    const s = await server()
    const proxy = await proxyTo(s)
    const direct = configMaps(s.http)
    const { inf, seen } = await recorded(proxy.url, { namespace: 'st', stallTimeoutMs: 700 })
    await direct.create(configMap('st', 'a'))
    await eventually('the first add', () => inf.store.has('st/a'))
    const watches = inf.watches
    proxy.blackholeAll()
    await direct.create(configMap('st', 'b'))
    await direct.delete('a', 'st')
    await converged(inf, s.http, { namespace: 'st' })
    expect(inf.watches).to.be.greaterThan(watches)
    expect(inf.lists).to.equal(1)
    expect(seen).to.deep.equal(['add st/a', 'add st/b', 'delete st/a'])
  })

  it('bookmarks keep a quiet watch alive and move its resume point, so a resume after compaction needs no relist', async () => {
    const s = await server(['--watch-progress-interval', '150ms'])
    const proxy = await proxyTo(s)
    const direct = configMaps(s.http)
    const { inf, seen } = await recorded(proxy.url, { namespace: 'bm', stallTimeoutMs: 1000 })
    // Writes elsewhere move the store's revision; the informer's selection sees none of them.
    let head = 0
    for (let i = 0; i < 5; i++) head = Number((await direct.create(configMap('elsewhere', `x${i}`))).metadata.resourceVersion)
    await eventually('a bookmark at the head', () => Number(inf.resourceVersion) >= head)
    await new Promise((r) => setTimeout(r, 1500))
    expect(inf.watches).to.equal(1) // quiet but alive: bookmarks, no stall

    const native = new KvlogClient({ endpoint: s.http })
    await native.compact(head)
    let retries = 0
    inf.on('retry', () => retries++)
    proxy.cutAll()
    await eventually('the informer to notice the cut', () => retries >= 1 || inf.watches > 1)
    await direct.create(configMap('bm', 'after'))
    await converged(inf, s.http, { namespace: 'bm' })
    expect(seen).to.deep.equal(['add bm/after'])
    expect(inf.lists).to.equal(1)
  })

  it('resumes watches the server ends (timeoutSeconds) without a gap, a duplicate or a relist', async () => {
    const s = await server()
    const direct = configMaps(s.http)
    const { inf, seen } = await recorded(s.http, { namespace: 'to', watchTimeoutSeconds: 1 })
    const expected: string[] = []
    const deadline = Date.now() + 2600
    for (let i = 0; Date.now() < deadline; i++) {
      await direct.create(configMap('to', `k${i}`))
      expected.push(`add to/k${i}`)
      await new Promise((r) => setTimeout(r, 40))
    }
    await converged(inf, s.http, { namespace: 'to' })
    expect(inf.watches).to.be.at.least(3)
    expect(inf.lists).to.equal(1)
    expect(seen).to.deep.equal(expected)
  })

  it('stop() ends at once, also while a list hangs (the list is canceled) and while the watch is quiet', async () => {
    const s = await server()
    const proxy = await proxyTo(s)
    proxy.swallowResponses = true
    const hanging = informer(proxy.url, { namespace: 'stop' }).start()
    await eventually('the list request', () => proxy.count('GET /api/v1/namespaces/stop/configmaps') >= 1)
    // Without the cancel, stop() would wait on the hanging list (and on a quiet watch, for its 300 s timeout).
    await settlesWithin('stop() while the list hangs', hanging.stop())
    expect(hanging.isSynced).to.equal(false)

    const { inf } = await recorded(s.http, { namespace: 'stop' })
    await eventually('the watch', () => inf.watches === 1)
    await settlesWithin('stop() while the watch is quiet', inf.stop())
  })

  it('label selection: only matching objects; leaving the selection is a delete, entering an add', async () => {
    const s = await server()
    const direct = configMaps(s.http)
    await direct.create(configMap('ls', 'web', {}, { app: 'web' }))
    await direct.create(configMap('ls', 'db', {}, { app: 'db' }))
    const { inf, seen } = await recorded(s.http, { labelSelector: 'app=web' })
    expect(inf.store.keys()).to.deep.equal(['ls/web'])
    const db = await direct.get('db', 'ls')
    await direct.update({ ...db, metadata: { ...db.metadata, labels: { app: 'web' } } })
    await eventually('db to enter', () => inf.store.has('ls/db'))
    const web = await direct.get('web', 'ls')
    await direct.update({ ...web, metadata: { ...web.metadata, labels: { app: 'other' } } })
    await eventually('web to leave', () => !inf.store.has('ls/web'))
    await converged(inf, s.http, { labelSelector: 'app=web' })
    expect(seen).to.deep.equal(['add ls/web initial', 'add ls/db', 'delete ls/web'])
  })

  it('indexes (namespace, labels, custom), resync replays the cache, late handlers get the cache first', async () => {
    const s = await server()
    const direct = configMaps(s.http)
    await direct.create(configMap('ix1', 'a', { owner: 'x' }, { tier: 'front' }))
    await direct.create(configMap('ix1', 'b', { owner: 'y' }, { tier: 'back' }))
    await direct.create(configMap('ix2', 'c', { owner: 'x' }, { tier: 'front' }))
    const inf = informer(s.http, { resyncPeriodMs: 150, indexers: { owner: (o) => (o.data?.owner ? [o.data.owner] : []) } })
    const early: Seen = []
    inf.addEventHandler(recorder(early))
    inf.start()
    await inf.synced()
    expect(inf.store.indexKeys(NAMESPACE_INDEX, 'ix1')).to.deep.equal(['ix1/a', 'ix1/b'])
    expect(inf.store.indexKeys(LABEL_INDEX, 'tier=front')).to.deep.equal(['ix1/a', 'ix2/c'])
    expect(inf.store.indexKeys('owner', 'x')).to.deep.equal(['ix1/a', 'ix2/c'])
    const b = await direct.get('b', 'ix1')
    await direct.update({ ...b, data: { owner: 'x' } })
    await eventually('the owner index to move', () => inf.store.indexKeys('owner', 'x').length === 3)
    expect(inf.store.indexValues('owner')).to.deep.equal(['x'])

    const late: Seen = []
    inf.addEventHandler(recorder(late))
    expect(late.slice(0, 3)).to.deep.equal(['add ix1/a initial', 'add ix1/b initial', 'add ix2/c initial'])
    await eventually('two resyncs', () => early.filter((e) => e === 'update ix1/a resync').length >= 2)
    expect(inf.lists).to.equal(1)
  })
})
