/**
 * Watches against a real server, over the HTTP stream and over WebSocket: resourceVersion semantics,
 * bookmarks, sendInitialEvents with the initial-events-end bookmark, timeoutSeconds, selector
 * transitions, list → watch → disconnect → resume without gaps or duplicates, compaction → one
 * ERROR 410 Expired event in Kubernetes' exact shape → relist → watch again, and backpressure (a
 * watcher that stops reading is paused and catches up, nothing dropped).
 */
import { expect } from 'chai'
import { request, type IncomingMessage } from 'node:http'
import {
  configMap,
  expectStatus,
  Kube,
  names,
  openWatch,
  openWsWatch,
  useServer,
  type EventStream,
  type Json,
  type WatchEvent,
} from './helpers.js'

const BOOKMARK_MS = 200
const has = (what: string) => (events: WatchEvent[]) => names(events).includes(what)

describe('resource API: watch', function () {
  this.timeout(30_000)
  // Objects go into throwaway namespaces that are never created (namespaces.ts: they need not exist).
  const server = useServer(['--watch-progress-interval', `${BOOKMARK_MS}ms`, '--resource-namespace-must-exist=false'])
  let kube: Kube
  let base: string
  const streams: EventStream[] = []
  const watch = async (path: string, query: Record<string, string | number | boolean> = {}, accept?: string) => {
    const s = await openWatch(base, path, query, accept)
    streams.push(s)
    return s
  }
  before(() => {
    base = server().process.http
    kube = new Kube(base)
  })
  afterEach(() => {
    for (const s of streams.splice(0)) s.close()
  })

  it('without resourceVersion: synthetic ADDED for current objects, then ADDED/MODIFIED/DELETED as they happen', async () => {
    const NS = '/api/v1/namespaces/w1/configmaps'
    await kube.mustCreate(NS, configMap('a'))
    await kube.mustCreate(NS, configMap('b'))
    const s = await watch(NS)
    expect(s.status).to.equal(200)
    await s.waitFor((e) => e.length >= 2, 5000, 'initial ADDED')
    expect(names(s.events)).to.deep.equal(['ADDED a', 'ADDED b'])
    await kube.mustCreate(NS, configMap('c'))
    await kube.patch(`${NS}/a`, { data: { k: 'changed' } })
    const del = await kube.delete(`${NS}/b`)
    await s.waitFor(has('DELETED b'), 5000, 'DELETED b')
    expect(names(s.events)).to.deep.equal(['ADDED a', 'ADDED b', 'ADDED c', 'MODIFIED a', 'DELETED b'])
    expect(s.events[3].object.data).to.deep.equal({ k: 'changed' })
    const deleted = s.events[4].object
    expect(deleted.metadata.uid).to.equal(del.body.metadata.uid)
    expect(Number(deleted.metadata.resourceVersion), 'the revision of the delete').to.be.greaterThan(
      Number(del.body.metadata.resourceVersion),
    )
    // resourceVersions strictly increase after the initial events.
    const rvs = s.events.slice(2).map((e) => Number(e.object.metadata.resourceVersion))
    expect([...rvs].sort((x, y) => x - y)).to.deep.equal(rvs)
  })

  it('with resourceVersion N: only the changes after N', async () => {
    const NS = '/api/v1/namespaces/w2/configmaps'
    const a = await kube.mustCreate(NS, configMap('a'))
    await kube.mustCreate(NS, configMap('b'))
    await kube.patch(`${NS}/a`, { data: { x: '1' } })
    const s = await watch(NS, { resourceVersion: a.metadata.resourceVersion })
    await s.waitFor((e) => e.length >= 2, 5000)
    expect(names(s.events)).to.deep.equal(['ADDED b', 'MODIFIED a'])
  })

  it('sends periodic BOOKMARKs with allowWatchBookmarks, and none without', async () => {
    const NS = '/api/v1/namespaces/w3/configmaps'
    const c = await kube.mustCreate(NS, configMap('a'))
    const s = await watch(NS, { resourceVersion: c.metadata.resourceVersion, allowWatchBookmarks: true })
    const plain = await watch(NS, { resourceVersion: c.metadata.resourceVersion })
    await s.waitFor(has('BOOKMARK'), 5000, 'a bookmark')
    const bookmark = s.events.find((e) => e.type === 'BOOKMARK')!.object
    expect(bookmark.kind).to.equal('ConfigMap')
    expect(bookmark.apiVersion).to.equal('v1')
    expect(Number(bookmark.metadata.resourceVersion)).to.be.at.least(Number(c.metadata.resourceVersion))
    await new Promise((r) => setTimeout(r, 3 * BOOKMARK_MS))
    expect(plain.events).to.deep.equal([])
  })

  it('sendInitialEvents: ADDED for current objects, a BOOKMARK marked k8s.io/initial-events-end, then changes', async () => {
    const NS = '/api/v1/namespaces/w4/configmaps'
    await kube.mustCreate(NS, configMap('a'))
    const b = await kube.mustCreate(NS, configMap('b'))
    const s = await watch(NS, {
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: '',
    })
    await s.waitFor(
      (e) => e.some((x) => x.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true'),
      5000,
      'initial-events-end',
    )
    expect(names(s.events.slice(0, 3))).to.deep.equal(['ADDED a', 'ADDED b', 'BOOKMARK'])
    expect(Number(s.events[2].object.metadata.resourceVersion)).to.be.at.least(Number(b.metadata.resourceVersion))
    await kube.mustCreate(NS, configMap('c'))
    await s.waitFor(has('ADDED c'), 5000)

    expectStatus((await openWatch(base, NS, { sendInitialEvents: true, allowWatchBookmarks: true })) as Json, 422, 'Invalid')
    expectStatus((await openWatch(base, NS, { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' })) as Json, 422, 'Invalid')
  })

  it('ends the stream after timeoutSeconds', async () => {
    const started = Date.now()
    const s = await watch('/api/v1/namespaces/w5/configmaps', { timeoutSeconds: 1, resourceVersion: await kube.revision() })
    await s.ended
    // It waited for the timeout (a timer is never much early); a hang fails on the test's timeout.
    expect(Date.now() - started).to.be.at.least(900)
    expect(s.events).to.deep.equal([])
  })

  it('selector transitions: entering is ADDED, leaving is DELETED (the previous object at the new revision)', async () => {
    const NS = '/api/v1/namespaces/w6/configmaps'
    const s = await watch(NS, { labelSelector: 'color=red', resourceVersion: await kube.revision() })
    await kube.mustCreate(NS, configMap('x', { color: 'blue' }))
    await kube.patch(`${NS}/x`, { metadata: { labels: { color: 'red' } } })
    await kube.patch(`${NS}/x`, { data: { v: '2' } })
    const leave = await kube.patch(`${NS}/x`, { metadata: { labels: { color: 'green' } } })
    await kube.delete(`${NS}/x`)
    await kube.mustCreate(NS, configMap('y', { color: 'red' }))
    await s.waitFor(has('ADDED y'), 5000)
    expect(names(s.events)).to.deep.equal(['ADDED x', 'MODIFIED x', 'DELETED x', 'ADDED y'])
    const left = s.events[2].object
    expect(left.metadata.labels.color, 'the last state inside the selection').to.equal('red')
    expect(left.metadata.resourceVersion).to.equal(leave.body.metadata.resourceVersion)
  })

  it('watches one object by name (kubectl get NAME -w)', async () => {
    const NS = '/api/v1/namespaces/w7/configmaps'
    await kube.mustCreate(NS, configMap('one'))
    await kube.mustCreate(NS, configMap('two'))
    const s = await watch(`${NS}/one`)
    await kube.patch(`${NS}/two`, { data: { a: '1' } })
    await kube.patch(`${NS}/one`, { data: { a: '1' } })
    await s.waitFor(has('MODIFIED one'), 5000)
    expect(names(s.events)).to.deep.equal(['ADDED one', 'MODIFIED one'])
  })

  it('list → watch → disconnect → resume from the last resourceVersion: no gap, no duplicate', async () => {
    const NS = '/api/v1/namespaces/w8/configmaps'
    for (const n of ['a', 'b', 'c']) await kube.mustCreate(NS, configMap(n))
    const list = await kube.get(NS)
    const state = new Map<string, string>(list.body.items.map((o: Json) => [o.metadata.name, o.metadata.resourceVersion]))
    const seen: WatchEvent[] = []
    let rv = list.body.metadata.resourceVersion as string
    const apply = (events: WatchEvent[]) => {
      for (const e of events) {
        seen.push(e)
        if (e.type === 'DELETED') state.delete(e.object.metadata.name)
        else state.set(e.object.metadata.name, e.object.metadata.resourceVersion)
        rv = e.object.metadata.resourceVersion
      }
    }
    const first = await watch(NS, { resourceVersion: rv })
    await kube.patch(`${NS}/a`, { data: { n: '1' } })
    await kube.mustCreate(NS, configMap('d'))
    await first.waitFor((e) => e.length === 2, 5000)
    apply(first.events)
    first.close()
    await first.ended
    // While disconnected.
    await kube.delete(`${NS}/b`)
    await kube.patch(`${NS}/c`, { data: { n: '2' } })
    await kube.mustCreate(NS, configMap('e'))
    const second = await watch(NS, { resourceVersion: rv })
    await second.waitFor((e) => e.length >= 3, 5000)
    await new Promise((r) => setTimeout(r, 100))
    apply(second.events)
    expect(names(seen)).to.deep.equal(['MODIFIED a', 'ADDED d', 'DELETED b', 'MODIFIED c', 'ADDED e'])
    const rvs = seen.map((e) => Number(e.object.metadata.resourceVersion))
    expect(new Set(rvs).size, 'unique').to.equal(rvs.length)
    // The state rebuilt from list + events equals a fresh list.
    const fresh = await kube.get(NS)
    expect(Object.fromEntries(state)).to.deep.equal(
      Object.fromEntries(fresh.body.items.map((o: Json) => [o.metadata.name, o.metadata.resourceVersion])),
    )
  })

  it('compaction: a too-old resourceVersion gets one ERROR event with a 410 Expired Status; relist and watch again', async () => {
    const NS = '/api/v1/namespaces/w9/configmaps'
    const old = await kube.mustCreate(NS, configMap('a'))
    await kube.patch(`${NS}/a`, { data: { n: '1' } })
    await kube.mustCreate(NS, configMap('b'))
    const floor = await kube.revision()
    expect((await kube.request('POST', '/v1/compact', { json: { revision: floor } })).status).to.equal(200)

    const s = await watch(NS, { resourceVersion: Number(old.metadata.resourceVersion) - 1 })
    expect(s.status).to.equal(200)
    await s.ended
    expect(s.events).to.have.length(1)
    const oldRv = Number(old.metadata.resourceVersion) - 1
    expect(s.events[0]).to.deep.equal({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${oldRv} (${floor})`,
        reason: 'Expired',
        code: 410,
      },
    })
    // The informer's answer: relist, then watch from the list's resourceVersion.
    const relist = await kube.get(NS)
    expect(relist.body.items.map((o: Json) => o.metadata.name)).to.deep.equal(['a', 'b'])
    const again = await watch(NS, { resourceVersion: relist.body.metadata.resourceVersion })
    await kube.mustCreate(NS, configMap('c'))
    await again.waitFor(has('ADDED c'), 5000)
    expect(names(again.events)).to.deep.equal(['ADDED c'])
  })

  it('streams Tables when kubectl asks for them (get -w)', async () => {
    const NS = '/api/v1/namespaces/w10/configmaps'
    const s = await watch(NS, { resourceVersion: await kube.revision() }, 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json')
    await kube.mustCreate(NS, configMap('t'))
    await s.waitFor((e) => e.length === 1, 5000)
    expect(s.events[0].type).to.equal('ADDED')
    expect(s.events[0].object.kind).to.equal('Table')
    expect(s.events[0].object.rows[0].cells[0]).to.equal('t')
  })

  it('answers bad watch requests with a Status before streaming', async () => {
    const NS = '/api/v1/namespaces/w11/configmaps'
    expectStatus((await openWatch(base, NS, { labelSelector: 'a in (' })) as Json, 400, 'BadRequest')
    expectStatus((await openWatch(base, NS, { resourceVersion: 'x' })) as Json, 400, 'BadRequest')
    expectStatus((await openWatch(base, NS, { resourceVersionMatch: 'Exact', resourceVersion: '3' })) as Json, 422, 'Invalid')
    expectStatus((await openWatch(base, '/api/v1/namespaces/w11/nothings')) as Json, 404, 'NotFound')
  })

  describe('over WebSocket', () => {
    it('streams the same events, one per frame: initial ADDED, then changes', async () => {
      const NS = '/api/v1/namespaces/ws1/configmaps'
      await kube.mustCreate(NS, configMap('a'))
      const s = await openWsWatch(base, NS)
      streams.push(s)
      await s.waitFor(has('ADDED a'), 5000)
      await kube.patch(`${NS}/a`, { data: { v: '1' } })
      await kube.delete(`${NS}/a`)
      await s.waitFor(has('DELETED a'), 5000)
      expect(names(s.events)).to.deep.equal(['ADDED a', 'MODIFIED a', 'DELETED a'])
    })

    it('sends the 410 ERROR event for a compacted resourceVersion, then closes', async () => {
      const NS = '/api/v1/namespaces/ws2/configmaps'
      const a = await kube.mustCreate(NS, configMap('a'))
      await kube.patch(`${NS}/a`, { data: { v: '1' } })
      expect((await kube.request('POST', '/v1/compact', { json: { revision: await kube.revision() } })).status).to.equal(200)
      const s = await openWsWatch(base, NS, { resourceVersion: Number(a.metadata.resourceVersion) - 1 })
      await s.ended
      expect(s.events.map((e) => [e.type, e.object.code, e.object.reason])).to.deep.equal([['ERROR', 410, 'Expired']])
    })

    it('refuses the upgrade for a bad request', async () => {
      let error: Error | undefined
      try {
        await openWsWatch(base, '/api/v1/namespaces/ws3/configmaps', { labelSelector: '!!' })
      } catch (err) {
        error = err as Error
      }
      expect(error?.message).to.match(/upgrade answered 400/)
    })
  })
})

describe('resource API: watch backpressure', function () {
  this.timeout(60_000)
  // Objects go into throwaway namespaces that are never created (namespaces.ts: they need not exist).
  const server = useServer(['--resource-namespace-must-exist=false'])

  it('a watcher that stops reading is paused, not dropped: it gets every event, in order, once it reads again', async () => {
    const base = server().process.http
    const kube = new Kube(base)
    const NS = '/api/v1/namespaces/slow/configmaps'
    const from = await kube.revision()
    const lines: string[] = []
    let res!: IncomingMessage
    await new Promise<void>((resolve, reject) => {
      const req = request(`${base}${NS}?watch=true&resourceVersion=${from}`, (r) => {
        res = r
        r.pause()
        resolve()
      })
      req.on('error', reject)
      req.end()
    })
    // Big objects fill the socket buffers long before the writes are done.
    const blob = 'x'.repeat(64 * 1024)
    const COUNT = 120
    for (let i = 0; i < COUNT; i++) await kube.mustCreate(NS, configMap(`o${String(i).padStart(3, '0')}`, undefined, { blob }))
    const metrics = String((await kube.get('/metrics')).body)
    expect(metrics, 'the watch is paused meanwhile').to.match(/^kvlog_slow_watchers 1$/m)
    let buffer = ''
    res.setEncoding('utf8')
    res.on('data', (chunk: string) => {
      buffer += chunk
      let nl: number
      while ((nl = buffer.indexOf('\n')) >= 0) {
        lines.push(buffer.slice(0, nl))
        buffer = buffer.slice(nl + 1)
      }
    })
    res.resume()
    const deadline = Date.now() + 30_000
    while (lines.length < COUNT && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    res.destroy()
    const events = lines.map((l) => JSON.parse(l) as WatchEvent)
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(
      Array.from({ length: COUNT }, (_, i) => `ADDED o${String(i).padStart(3, '0')}`),
    )
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion))
    expect(rvs).to.deep.equal(Array.from({ length: COUNT }, (_, i) => from + 1 + i))
  })
})
