/**
 * Streamed lists against a real `kvlog serve`: a range of the native door, a List of the resource door
 * and the pages of a paged List over 40,000 objects of about 1 KiB answer the same JSON as an unstreamed
 * answer would, while the server's resident memory grows by well under the response's size (it holds a
 * chunk, not the response), also while a client reads slowly.
 */
import { expect } from 'chai'
import { peakRssDuring, memoryOf } from '../../bench/compare/peak-rss.js'
import { encodeContinue } from '../../apiserver/paging.js'
import { prefixEnd } from '../../log/keys.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { openResponse, pausedAtFirstChunk } from '../support/slow-reader.js'
import { sleep } from '../support/wait.js'

const OBJECTS = 40_000
const PER_TXN = 128
const PREFIX = '/registry/configmaps/default/'
const NAMESPACE_URL = '/api/v1/namespaces/default/configmaps'

const JSON_TYPE = { 'content-type': 'application/json' }
/**
 * The server's memory may grow by at most this share of the response: a buffered answer holds the whole
 * body and more (its objects, its string), a streamed one a chunk and the collector's slack, which grows
 * with the list on a loaded machine.
 */
const GROWTH_SHARE = 0.5

const nameOf = (i: number) => `cm-${String(i).padStart(6, '0')}`
const storedObject = (i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: nameOf(i), namespace: 'default', labels: { n: String(i % 7) } },
  data: { payload: `${i}`.padEnd(900, 'x') },
})

describe('streamed lists (real process)', function () {
  this.timeout(300_000)
  let server: ServerProcess
  /** The revision each object was written at. */
  const revisions: number[] = []

  before(async () => {
    server = await startServerProcess()
    for (let first = 0; first < OBJECTS; first += PER_TXN) {
      const ops = []
      for (let i = first; i < Math.min(OBJECTS, first + PER_TXN); i++) {
        ops.push({ type: 'put', key: PREFIX + nameOf(i), value: JSON.stringify(storedObject(i)) })
      }
      const r = await fetch(`${server.http}/v1/txn`, {
        method: 'POST',
        body: JSON.stringify({ success: ops }),
        headers: JSON_TYPE,
      })
      expect(r.status).to.equal(200)
      const revision = ((await r.json()) as { header: { revision: number } }).header.revision
      for (let i = first; i < first + ops.length; i++) revisions[i] = revision
    }
    // One read first, so that the measured ones do not count LevelDB's block cache filling.
    await (await fetch(`${server.http}/v1/kv?key=${encodeURIComponent(PREFIX)}&prefix=true&keysOnly=true`)).text()
  })
  after(async () => {
    await server?.stop()
    await server?.cleanup()
  })

  const pid = () => server.child.pid!

  /**
   * The growth of the server's anonymous resident memory (heap and buffers; RSS also counts the pages of
   * the LevelDB tables it maps to read them) while `fn` runs, and its result.
   */
  async function growthDuring<T>(fn: () => Promise<T>): Promise<{ result: T; growth: number }> {
    const { result, anonBefore, anonPeak } = await peakRssDuring(pid(), fn)
    return { result, growth: anonPeak - anonBefore }
  }

  const nativeUrl = () => `${server.http}/v1/kv?key=${encodeURIComponent(PREFIX)}&prefix=true`

  /** The native range of every object as a response the test reads at its own pace. */
  const openNative = () => openResponse(new URL(nativeUrl()))

  /** The native range's answer built as the unstreamed route builds it: JSON.stringify of the body. */
  function expectedNative(revision: number): string {
    const kvs = revisions.map((rev, i) => ({
      key: PREFIX + nameOf(i),
      value: JSON.stringify(storedObject(i)),
      createRevision: rev,
      modRevision: rev,
      version: 1,
    }))
    return JSON.stringify({ header: { revision }, kvs, more: false, count: OBJECTS })
  }

  // First: the memory a test's response took stays resident for the next, hiding its growth.
  it('with a reader that stops reading, holds about a chunk, and finishes the response once it reads again', async () => {
    const before = (await memoryOf(pid())).anon
    const response = await pausedAtFirstChunk(await openNative())
    // The server writes on while the socket takes it; then the client's and the kernel's buffers are full.
    await sleep(1500)
    const paused = (await memoryOf(pid())).anon
    const body = (await response.resume()).toString('utf8')
    const revision = (JSON.parse(body) as { header: { revision: number } }).header.revision
    expect(body === expectedNative(revision)).to.equal(true)
    expect(paused - before, `growth while paused, for a ${body.length}-byte response`).to.be.below(body.length * GROWTH_SHARE)
  })

  it('answers a native range of every object with the unstreamed bytes, the server growing by well under the response', async () => {
    const { result: response, growth } = await growthDuring(async () => {
      const r = await fetch(nativeUrl())
      return { status: r.status, type: r.headers.get('content-type'), chunked: r.headers.get('transfer-encoding'), body: await r.text() }
    })
    expect(response.status).to.equal(200)
    expect(response.type).to.equal('application/json; charset=utf-8')
    expect(response.chunked).to.equal('chunked')
    const revision = (JSON.parse(response.body) as { header: { revision: number } }).header.revision
    expect(revision).to.equal(revisions.at(-1))
    expect(response.body === expectedNative(revision), 'the same bytes as JSON.stringify of the unstreamed body').to.equal(true)
    expect(growth, `anonymous RSS growth ${growth} for a ${response.body.length}-byte response`).to.be.below(
      response.body.length * GROWTH_SHARE,
    )
  })

  it('answers a resource List of every object with the bytes of the paged (unstreamed) lists put together', async () => {
    const { result: body, growth } = await growthDuring(async () => (await fetch(`${server.http}${NAMESPACE_URL}`)).text())
    const list = JSON.parse(body) as { metadata: { resourceVersion: string }; items: unknown[] }
    expect(list.items).to.have.length(OBJECTS)
    // Pages (limit) read the same revision.
    const items: unknown[] = []
    let token: string | undefined
    do {
      const page = (await (
        await fetch(`${server.http}${NAMESPACE_URL}?limit=5000${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`)
      ).json()) as { metadata: { continue?: string }; items: unknown[] }
      items.push(...page.items)
      token = page.metadata.continue
    } while (token !== undefined)
    const reference = JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: list.metadata, items })
    expect(body === reference, 'the same bytes as the unstreamed List').to.equal(true)
    expect(growth, `anonymous RSS growth ${growth} for a ${body.length}-byte response`).to.be.below(body.length * GROWTH_SHARE)
  })

  /** A ConfigMap as the resource door lists it: the stored object, its resourceVersion the revision it was written at. */
  const listedObject = (i: number) => {
    const stored = storedObject(i)
    return { ...stored, metadata: { ...stored.metadata, resourceVersion: String(revisions[i]) } }
  }

  it('answers each page of a paged List as the buffered page would, continue and remainingItemCount included, in bounded memory', async () => {
    const LIMIT = 32_000
    const revision = revisions.at(-1)!
    const prefix = Buffer.from(PREFIX)
    const pages: Array<{ status: number; chunked: string | null; body: string }> = []
    const { growth } = await growthDuring(async () => {
      let token: string | undefined
      do {
        const r = await fetch(
          `${server.http}${NAMESPACE_URL}?limit=${LIMIT}${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`,
        )
        const page = { status: r.status, chunked: r.headers.get('transfer-encoding'), body: await r.text() }
        pages.push(page)
        token = (JSON.parse(page.body) as { metadata: { continue?: string } }).metadata.continue
      } while (token !== undefined)
    })
    expect(pages).to.have.length(Math.ceil(OBJECTS / LIMIT))
    const largest = Math.max(...pages.map((p) => p.body.length))
    expect(growth, `anonymous RSS growth ${growth} for pages of up to ${largest} bytes`).to.be.below(largest * GROWTH_SHARE)
    let taken = 0
    for (const page of pages) {
      expect(page.status).to.equal(200)
      expect(page.chunked).to.equal('chunked')
      const items = []
      for (let i = taken; i < Math.min(OBJECTS, taken + LIMIT); i++) items.push(listedObject(i))
      taken += items.length
      // The buffered page: its metadata from the revision of the walk's first page and the last key it took.
      const metadata =
        taken < OBJECTS
          ? {
              resourceVersion: String(revision),
              continue: encodeContinue(revision, Buffer.from(PREFIX + nameOf(taken - 1)), prefix, prefixEnd(prefix)),
              remainingItemCount: OBJECTS - taken,
            }
          : { resourceVersion: String(revision) }
      expect(JSON.parse(page.body)).to.deep.equal({ kind: 'ConfigMapList', apiVersion: 'v1', metadata, items })
    }
  })

  // Last: it writes and compacts.
  it('ends a response whose revision is compacted while it streams as a broken body, not a short answer', async () => {
    const res = await openNative()
    expect(res.statusCode).to.equal(200)
    res.pause()
    const put = await fetch(`${server.http}/v1/kv`, {
      method: 'PUT',
      body: JSON.stringify({ key: `${PREFIX}zz`, value: '{}' }),
      headers: JSON_TYPE,
    })
    const { header } = (await put.json()) as { header: { revision: number } }
    const compact = await fetch(`${server.http}/v1/compact`, {
      method: 'POST',
      body: JSON.stringify({ revision: header.revision }),
      headers: JSON_TYPE,
    })
    expect(compact.status).to.equal(200)
    const outcome = await new Promise<string>((resolve) => {
      res.on('data', () => {})
      res.once('end', () => resolve('end'))
      res.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
      res.resume()
    })
    expect(outcome).to.equal('ECONNRESET')
  })
})
