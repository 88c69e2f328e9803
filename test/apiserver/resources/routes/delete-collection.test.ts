/**
 * DELETE of a collection against a real `kvlog serve` holding tens of thousands of objects of about 1 KiB:
 * every object the selector matches is gone and answered in the List, every other stays, and the server's
 * memory grows by well under the answer's size (it walks the collection in pages and streams the answer,
 * holding a step, not the collection). Under concurrent writes, with the walk held mid-way by a client
 * that stops reading: an object deleted meanwhile ahead of it is skipped, one created ahead of it is
 * deleted, one created behind it stays; a page whose revision is compacted meanwhile is read on at the
 * latest revision.
 */
import { expect } from 'chai'
import { peakRssDuring } from '../../../../bench/compare/peak-rss.js'
import { startServerProcess, type ServerProcess } from '../../../support/server-process.js'
import { openResponse, pausedAtFirstChunk, type PausedResponse } from '../../../support/slow-reader.js'
import { sleep, waitUntil } from '../../../support/wait.js'

const OBJECTS = 30_000
const PER_TXN = 128
/** Pages smaller than a step and not a divisor of anything here: the walk crosses many page boundaries. */
const PAGE = 97
/** The objects of a walk held mid-way: an answer larger than what the sockets' buffers take. */
const COUNT_PAUSED = 20_000
const NAMESPACE_URL = '/api/v1/namespaces/default/configmaps'
const JSON_TYPE = { 'content-type': 'application/json' }
/**
 * The server runs with its old generation capped here, so the collector keeps the heap near what is live
 * instead of growing into the deletes' garbage (which made the growth below depend on the collector's
 * pace, and so on the machine's load). A collection read whole before it is deleted holds every object
 * decoded (several times its JSON), the deleted ones and the answer's string: 4.5 to 5.5 times the answer
 * here, which does not fit; a walk holds a step.
 */
const HEAP_LIMIT_MIB = 64
/** The server's anonymous memory may grow by at most this many times the answer's size. */
const GROWTH_SHARE = 1
/**
 * What the store itself holds whatever the request, kept small so as not to hide the request's own
 * memory: the watch ring of recent events (with their previous values), LevelDB's write buffer (the
 * deletes' records) and its block cache.
 */
const STORE_MEMORY = ['--watch-ring-size', '100', '--leveldb-write-buffer-size', String(1 << 20), '--leveldb-cache-size', String(8 << 20)]

const nameOf = (i: number) => `cm-${String(i).padStart(6, '0')}`
/** Nine in ten objects are doomed. */
const doomed = (i: number) => i % 10 !== 0
const storedObject = (namespace: string, i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: nameOf(i), namespace, labels: { doomed: String(doomed(i)) } },
  data: { payload: `${i}`.padEnd(900, 'x') },
})

describe('resource API: DELETE of a collection (real process)', function () {
  this.timeout(600_000)
  let server: ServerProcess

  /** Writes the objects of a namespace straight through the native API, PER_TXN at a time. */
  async function fill(namespace: string, count: number): Promise<void> {
    for (let first = 0; first < count; first += PER_TXN) {
      const ops = []
      for (let i = first; i < Math.min(count, first + PER_TXN); i++) {
        ops.push({ type: 'put', key: `/registry/configmaps/${namespace}/${nameOf(i)}`, value: JSON.stringify(storedObject(namespace, i)) })
      }
      const r = await fetch(`${server.http}/v1/txn`, { method: 'POST', body: JSON.stringify({ success: ops }), headers: JSON_TYPE })
      expect(r.status).to.equal(200)
    }
  }

  /**
   * A DELETE of the doomed objects of default, read by a client that stopped at the first chunk; once the
   * walk has stopped (the socket takes no more of the answer: the store's revision stays put) and before
   * it got to the last doomed object of COUNT_PAUSED.
   */
  async function pausedDelete(): Promise<PausedResponse> {
    const url = new URL(`${server.http}${NAMESPACE_URL}?labelSelector=${encodeURIComponent('doomed=true')}`)
    const res = await openResponse(url, 'DELETE')
    expect(res.statusCode).to.equal(200)
    const paused = await pausedAtFirstChunk(res)
    let last = await revision()
    await waitUntil(
      'the walk to stop while its answer is not read',
      async () => {
        await sleep(300)
        const now = await revision()
        const still = now === last
        last = now
        return still
      },
      120_000,
    )
    const lastDoomed = `/registry/configmaps/default/${nameOf(COUNT_PAUSED - 1)}`
    expect(await storedNames(lastDoomed), 'the walk stopped before the end').to.deep.equal([''])
    return paused
  }

  async function put(namespace: string, name: string, labels: Record<string, string>): Promise<void> {
    const value = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels } })
    const r = await fetch(`${server.http}/v1/kv`, {
      method: 'PUT',
      body: JSON.stringify({ key: `/registry/configmaps/${namespace}/${name}`, value }),
      headers: JSON_TYPE,
    })
    expect(r.status).to.equal(200)
  }

  const revision = async () =>
    ((await (await fetch(`${server.http}/v1/kv?key=none`)).json()) as { header: { revision: number } }).header.revision

  /** The names stored under a prefix (keys only). */
  async function storedNames(prefix: string): Promise<string[]> {
    const r = await fetch(`${server.http}/v1/kv?key=${encodeURIComponent(prefix)}&prefix=true&keysOnly=true`)
    const body = (await r.json()) as { kvs?: Array<{ key: string }> }
    return (body.kvs ?? []).map((kv) => kv.key.slice(prefix.length))
  }

  before(async () => {
    server = await startServerProcess(['--fsync', 'never', '--resource-delete-collection-page', String(PAGE), ...STORE_MEMORY], undefined, {
      nodeArgs: [`--max-old-space-size=${HEAP_LIMIT_MIB}`],
    })
    await fill('default', OBJECTS)
    // The same objects in another namespace: a namespace's DELETE leaves them.
    await fill('other', 1000)
    // One read first, so that the measured delete does not count LevelDB's block cache filling.
    await storedNames('/registry/configmaps/')
  })
  after(async () => {
    await server?.stop()
    await server?.cleanup()
  })

  it('deletes every matching object in bounded memory, answers them as a List, and leaves every other', async () => {
    const { result, anonBefore, anonPeak } = await peakRssDuring(server.child.pid!, async () => {
      const r = await fetch(`${server.http}${NAMESPACE_URL}?labelSelector=${encodeURIComponent('doomed=true')}`, { method: 'DELETE' })
      return { status: r.status, type: r.headers.get('content-type'), body: await r.text() }
    })
    expect(result.status).to.equal(200)
    expect(result.type).to.equal('application/json; charset=utf-8')
    const list = JSON.parse(result.body) as {
      kind: string
      apiVersion: string
      metadata: { resourceVersion: string }
      items: Array<{ metadata: { name: string; namespace: string; labels: Record<string, string> } }>
    }
    expect(list.kind).to.equal('ConfigMapList')
    expect(list.apiVersion).to.equal('v1')
    const all = Array.from({ length: OBJECTS }, (_, i) => i)
    expect(list.items.map((o) => o.metadata.name)).to.deep.equal(all.filter(doomed).map(nameOf))
    expect(list.items.every((o) => o.metadata.namespace === 'default' && o.metadata.labels.doomed === 'true')).to.equal(true)
    expect(list.metadata.resourceVersion).to.equal(String(await revision()))

    expect(await storedNames('/registry/configmaps/default/')).to.deep.equal(all.filter((i) => !doomed(i)).map(nameOf))
    expect(await storedNames('/registry/configmaps/other/')).to.have.length(1000)

    const growth = anonPeak - anonBefore
    expect(growth, `anonymous RSS growth ${growth} for a ${result.body.length}-byte answer`).to.be.below(result.body.length * GROWTH_SHARE)
  })

  it('deletes the rest across namespaces with no selector, and answers an empty List once nothing is left', async () => {
    const r = await fetch(`${server.http}/api/v1/configmaps`, { method: 'DELETE' })
    expect(r.status).to.equal(200)
    const list = (await r.json()) as { items: Array<{ metadata: { namespace: string } }> }
    expect(list.items.filter((o) => o.metadata.namespace === 'default')).to.have.length(OBJECTS / 10)
    expect(list.items.filter((o) => o.metadata.namespace === 'other')).to.have.length(1000)
    expect(await storedNames('/registry/configmaps/')).to.deep.equal([])

    const again = await fetch(`${server.http}/api/v1/configmaps`, { method: 'DELETE' })
    expect(again.status).to.equal(200)
    expect(((await again.json()) as { items: unknown[] }).items).to.deep.equal([])
  })

  it('with resourceVersionMatch=Exact deletes what the collection held at that revision, page after page; dryRun=All deletes nothing', async () => {
    const url = `${server.http}/api/v1/namespaces/exact/configmaps?labelSelector=${encodeURIComponent('doomed=true')}`
    const names = Array.from({ length: 3 * PAGE }, (_, i) => nameOf(i))
    for (const name of names.slice(0, 2 * PAGE + 1)) await put('exact', name, { doomed: 'true' })
    const at = await revision()
    for (const name of names.slice(2 * PAGE + 1)) await put('exact', name, { doomed: 'true' })

    const dry = await fetch(`${url}&dryRun=All`, { method: 'DELETE' })
    expect(dry.status).to.equal(200)
    expect(((await dry.json()) as { items: unknown[] }).items).to.have.length(names.length)
    expect(await storedNames('/registry/configmaps/exact/')).to.deep.equal(names)

    const r = await fetch(`${url}&resourceVersion=${at}&resourceVersionMatch=Exact`, { method: 'DELETE' })
    expect(r.status).to.equal(200)
    const list = (await r.json()) as { items: Array<{ metadata: { name: string } }> }
    expect(list.items.map((o) => o.metadata.name)).to.deep.equal(names.slice(0, 2 * PAGE + 1))
    expect(await storedNames('/registry/configmaps/exact/')).to.deep.equal(names.slice(2 * PAGE + 1))
  })

  it('skips an object deleted meanwhile, deletes one created ahead of the walk, leaves one created behind it', async () => {
    const COUNT = COUNT_PAUSED
    await fill('default', COUNT)
    const paused = await pausedDelete()
    const lastDoomed = nameOf(COUNT - 1)
    await fetch(`${server.http}/v1/kv?key=${encodeURIComponent(`/registry/configmaps/default/${lastDoomed}`)}`, { method: 'DELETE' })
    await put('default', 'cm-999999', { doomed: 'true' })
    await put('default', 'a-behind', { doomed: 'true' })
    const list = JSON.parse((await paused.resume()).toString('utf8')) as { items: Array<{ metadata: { name: string } }> }
    const names = list.items.map((o) => o.metadata.name)
    const all = Array.from({ length: COUNT }, (_, i) => i)
    expect(names).to.deep.equal([...all.filter((i) => doomed(i) && i !== COUNT - 1).map(nameOf), 'cm-999999'])
    expect(await storedNames('/registry/configmaps/default/')).to.deep.equal(['a-behind', ...all.filter((i) => !doomed(i)).map(nameOf)])
  })

  describe('with the whole collection one page', () => {
    before(async () => {
      await server.stop()
      await server.cleanup()
      server = await startServerProcess(['--fsync', 'never', '--resource-delete-collection-page', '100000', ...STORE_MEMORY])
    })

    it('reads on at the latest revision when the revision of the page it reads is compacted meanwhile', async () => {
      await fill('default', COUNT_PAUSED)
      const paused = await pausedDelete()
      const compact = await fetch(`${server.http}/v1/compact`, {
        method: 'POST',
        body: JSON.stringify({ revision: await revision() }),
        headers: JSON_TYPE,
      })
      expect(compact.status).to.equal(200)
      const list = JSON.parse((await paused.resume()).toString('utf8')) as { items: Array<{ metadata: { name: string } }> }
      const all = Array.from({ length: COUNT_PAUSED }, (_, i) => i)
      expect(list.items.map((o) => o.metadata.name)).to.deep.equal(all.filter(doomed).map(nameOf))
      expect(await storedNames('/registry/configmaps/default/')).to.deep.equal(all.filter((i) => !doomed(i)).map(nameOf))
    })
  })
})
