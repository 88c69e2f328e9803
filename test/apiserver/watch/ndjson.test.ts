/**
 * The NDJSON watch (`GET /v1/watch?...`, docs/api.md): the created line, events with prevKv, idle progress
 * notices, a compacted start (a canceled line, then the response ends), bad queries (400 JSON errors),
 * a future start revision, cleanup when the client goes away, and the final progress notice on shutdown.
 */
import { expect } from 'chai'
import { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { Api, expectError, ok, useServer } from '../http/helpers.js'
import { startServerProcess } from '../../support/server-process.js'
import { openNdjson, sleep, type NdjsonStream, type Received, type WatchMessage } from '../../support/watch-client.js'
import { checkWatches, Oracle, type WatchSelection } from './checker.js'

const PROGRESS_MS = 200

function lastRevision(lines: Received[]): number {
  let r = 0
  for (const { msg } of lines)
    if ((msg.type === 'events' || msg.type === 'progress') && typeof msg.revision === 'number') r = Math.max(r, msg.revision)
  return r
}

async function metric(http: string, name: string): Promise<number> {
  const text = await (await fetch(`${http}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  if (line === undefined) throw new Error(`no metric ${name}`)
  return Number(line.split(' ')[1])
}

describe('NDJSON watch', function () {
  this.timeout(30_000)
  const server = useServer(['--watch-progress-interval', `${PROGRESS_MS}ms`])
  const streams: NdjsonStream[] = []
  const open = async (query: Record<string, string | number | boolean> | string) => {
    const s = await openNdjson(server().process.http, query)
    streams.push(s)
    return s
  }
  afterEach(() => {
    for (const s of streams.splice(0)) s.abort()
  })

  it('streams a created line, then whole revisions of events with prevKv, checked against the history', async () => {
    const { api } = server()
    const start = (await api.revision()) + 1
    await api.mustPut('/n/a', '1')
    await api.mustPut('/n/a', '2')
    await api.mustTxn({
      success: [
        { type: 'put', key: '/n/b', value: 'b' },
        { type: 'put', key: '/n/a', value: '3' },
        { type: 'put', key: '/other', value: 'o' },
      ],
    })
    ok(await api.delete({ key: '/n/', prefix: true }))
    await api.mustPut('/n/a', '4')
    const last = await api.revision()

    const spec: WatchSelection = { key: '/n/', prefix: true, prevKv: true }
    const s = await open({ key: '/n/', prefix: true, startRevision: start, prevKv: true })
    expect(s.status).to.equal(200)
    expect(s.headers.get('content-type')).to.match(/^application\/x-ndjson/)
    await s.waitFor((lines) => lastRevision(lines) >= last, 10_000, `events up to ${last}`)
    const created = s.lines[0].msg
    expect(created.type).to.equal('created')
    expect(created.revision).to.equal(last)
    // The txn's two /n/ events share one revision and one message; the range delete too.
    const events = s.lines.filter((l) => l.msg.type === 'events').flatMap((l) => l.msg.events!)
    expect(events.map((e) => `${e.type} ${e.kv.key} ${e.kv.value}`)).to.deep.equal([
      'PUT /n/a 1',
      'PUT /n/a 2',
      'PUT /n/b b',
      'PUT /n/a 3',
      'DELETE /n/a ',
      'DELETE /n/b ',
      'PUT /n/a 4',
    ])
    expect(events[1].prevKv, 'prevKv of the second put').to.include({ key: '/n/a', value: '1', version: 1 })
    expect(events[0].prevKv, 'a create has no prevKv').to.equal(undefined)
    // Each event says who wrote it (anonymous: the client's user agent), as the history does; a live event too.
    const authors = (list: typeof events) => list.map((e) => JSON.stringify((e as { author?: unknown }).author))
    expect(new Set(authors(events))).to.deep.equal(new Set([JSON.stringify({ door: 'http', agent: 'node' })]))
    await api.mustPut('/n/live', 'x')
    await s.waitFor((lines) => lastRevision(lines) >= last + 1, 10_000, 'the live event')
    const live = s.lines
      .filter((l) => l.msg.type === 'events')
      .flatMap((l) => l.msg.events!)
      .slice(events.length)
    expect(authors(live)).to.deep.equal([JSON.stringify({ door: 'http', agent: 'node' })])

    // And the same stream, checked like every other watch.
    const oracle = new Oracle(start)
    await oracle.fetch(server().process.http)
    const watches = [{ name: 'ndjson', spec, segments: [{ startRevision: start, messages: s.lines }] }]
    expect(checkWatches(oracle, watches, { finalRevision: last + 1 })).to.deep.equal([])
    expect(s.isEnded(), 'the response is still open').to.equal(false)
  })

  it('sends progress notices to an idle progressNotify watch, and none without progressNotify', async () => {
    const { api } = server()
    const quiet = await open({ key: '/idle/', prefix: true, progressNotify: true })
    const silent = await open({ key: '/idle/', prefix: true })
    await quiet.waitFor((l) => l.length > 0, 5000, 'created')
    const t0 = performance.now()
    // Writes elsewhere move the store's revision, so later notices carry later revisions.
    for (let i = 0; i < 10; i++) {
      await api.mustPut('/busy', String(i))
      await sleep(100)
    }
    await quiet.waitFor((l) => l.filter((x) => x.msg.type === 'progress').length >= 3, 20_000, 'three progress notices')
    const notices = quiet.lines.filter((l) => l.msg.type === 'progress')
    const revisions = notices.map((l) => l.msg.revision!)
    expect(revisions, 'progress revisions never go down').to.deep.equal([...revisions].sort((a, b) => a - b))
    expect(revisions[0]).to.be.at.least(quiet.lines[0].msg.revision!)
    expect(revisions[revisions.length - 1]).to.be.at.most(await api.revision())
    // The first notice came after the first write (the watch was idle since it was created).
    expect(notices[0].at).to.be.greaterThan(t0)
    expect(
      silent.lines.map((l) => l.msg.type),
      'no notices without progressNotify',
    ).to.deep.equal(['created'])
  })

  it('renews idle progress notices every watchProgressInterval, not every other one', async () => {
    const s = await open({ key: '/idle2/', prefix: true, progressNotify: true })
    await s.waitFor((l) => l.filter((x) => x.msg.type === 'progress').length >= 9, 30_000, 'nine progress notices')
    const at = s.lines.filter((l) => l.msg.type === 'progress').map((l) => l.at)
    const gaps = at.slice(1).map((t, i) => t - at[i])
    // A watch that got nothing for watchProgressInterval gets a notice; a notice is not "something". Were
    // it, every gap would be two intervals at least (timers are never early); a loaded machine stretches
    // gaps, but not all eight of them by most of an interval.
    expect(Math.min(...gaps), `gaps between idle notices: ${gaps.map(Math.round).join(', ')} ms`).to.be.below(PROGRESS_MS * 1.75)
  })

  it('a start revision below the compact revision gets created, canceled COMPACTED with the floor, and the response ends', async () => {
    const { api } = server()
    for (let i = 0; i < 5; i++) await api.mustPut('/c/k', String(i))
    const floor = (await api.revision()) - 1
    const compacted = ok(await api.compact(floor))
    expect(compacted.compactRevision).to.equal(floor)
    const s = await open({ key: '/c/', prefix: true, startRevision: floor - 1 })
    await s.ended
    const msgs: WatchMessage[] = s.lines.map((l) => l.msg)
    expect(msgs.map((m) => m.type)).to.deep.equal(['created', 'canceled'])
    expect(msgs[1]).to.include({ code: 'COMPACTED', compactRevision: floor, id: msgs[0].id })
    expect(msgs[1].reason).to.be.a('string')
    // At the floor itself: no cancel, the events from there on.
    const atFloor = await open({ key: '/c/', prefix: true, startRevision: floor })
    await atFloor.waitFor((l) => lastRevision(l) >= floor + 1, 5000, 'events from the floor')
    const events = atFloor.lines.filter((l) => l.msg.type === 'events').flatMap((l) => l.msg.events!)
    expect(events.map((e) => e.revision)).to.deep.equal([floor, floor + 1])
    expect(atFloor.isEnded()).to.equal(false)
  })

  it('a start revision in the future waits for it, then starts exactly there', async () => {
    const { api } = server()
    const now = await api.revision()
    const s = await open({ key: '/f/', prefix: true, startRevision: now + 3 })
    await s.waitFor((l) => l.length > 0, 5000, 'created')
    for (let i = 1; i <= 5; i++) await api.mustPut('/f/k', String(i))
    await s.waitFor((l) => lastRevision(l) >= now + 5, 5000, 'events up to now + 5')
    const events = s.lines.filter((l) => l.msg.type === 'events').flatMap((l) => l.msg.events!)
    expect(events.map((e) => e.revision)).to.deep.equal([now + 3, now + 4, now + 5])
  })

  it('a client that stops reading is paused (kvlog_slow_watchers), then gets every event exactly once', async () => {
    const { api, process } = server()
    const start = (await api.revision()) + 1
    const s = await open({ key: '/slow/', prefix: true, prevKv: true, startRevision: start })
    await s.waitFor((l) => l.length > 0, 5000, 'created')
    s.pause()
    const value = 'v'.repeat(1024)
    let maxSlow = 0
    for (let i = 0; i < 400; i++) {
      await api.mustTxn({ success: Array.from({ length: 8 }, (_, j) => ({ type: 'put', key: `/slow/k${j}`, value })) })
      if (i % 20 === 19) maxSlow = Math.max(maxSlow, await metric(process.http, 'kvlog_slow_watchers'))
    }
    const last = await api.revision()
    s.resume()
    await s.waitFor((l) => lastRevision(l) >= last, 20_000, `events up to ${last}`)
    expect(maxSlow, 'kvlog_slow_watchers while the client did not read').to.be.at.least(1)
    const oracle = new Oracle(start) // earlier tests compacted: the oracle starts where the watch does
    await oracle.fetch(process.http)
    const watches = [
      { name: 'slow', spec: { key: '/slow/', prefix: true, prevKv: true }, segments: [{ startRevision: start, messages: s.lines }] },
    ]
    expect(checkWatches(oracle, watches, { finalRevision: last })).to.deep.equal([])
    expect(s.lines.filter((l) => l.msg.type === 'events').flatMap((l) => l.msg.events!).length).to.equal(3200)
  })

  for (const [what, query, code] of [
    ['an unknown parameter', 'key=/a&bogus=1', 'INVALID_ARGUMENT'],
    ['no key', 'prefix=true', 'INVALID_ARGUMENT'],
    ['an empty key', 'key=', 'EMPTY_KEY'],
    ['a non-numeric startRevision', 'key=/a&startRevision=abc', 'INVALID_ARGUMENT'],
    ['a negative startRevision', 'key=/a&startRevision=-1', 'INVALID_ARGUMENT'],
    ['a bad boolean', 'key=/a&prevKv=maybe', 'INVALID_ARGUMENT'],
    ['prefix and fromKey', 'key=/a&prefix=true&fromKey=true', 'INVALID_ARGUMENT'],
    ['a parameter given twice', 'key=/a&key=/b', 'INVALID_ARGUMENT'],
    ['key and keyBase64', 'key=/a&keyBase64=L2E%3D', 'INVALID_ARGUMENT'],
    ['bad base64', 'keyBase64=%21%21', 'INVALID_ARGUMENT'],
    ['an option that only the WebSocket takes (id)', 'key=/a&id=3', 'INVALID_ARGUMENT'],
  ] as const) {
    it(`answers ${what} with a 400 JSON error (${code})`, async () => {
      const res = await fetch(`${server().process.http}/v1/watch?${query}`)
      const text = await res.text()
      expect(res.headers.get('content-type'), text).to.match(/^application\/json/)
      expectError({ status: res.status, body: JSON.parse(text), headers: res.headers }, 400, code)
    })
  }

  it('forgets a watch when its client goes away', async () => {
    const { process } = server()
    // The previous tests' streams were aborted: their watches are gone too.
    const deadline0 = performance.now() + 5000
    let before = -1
    while (performance.now() < deadline0 && (before = await metric(process.http, 'kvlog_watchers')) !== 0) await sleep(50)
    expect(before, 'watchers left over from aborted streams').to.equal(0)
    const opened = await Promise.all([1, 2, 3].map((i) => open({ key: `/gone/${i}` })))
    await Promise.all(opened.map((s) => s.waitFor((l) => l.length > 0, 5000, 'created')))
    expect(await metric(process.http, 'kvlog_watchers')).to.equal(before + 3)
    for (const s of opened) s.abort()
    const deadline = performance.now() + 5000
    let now = before + 3
    while (performance.now() < deadline && (now = await metric(process.http, 'kvlog_watchers')) !== before) await sleep(50)
    expect(now).to.equal(before)
  })

  it('on shutdown, sends each watch a final progress notice and ends the response', async () => {
    const proc = await startServerProcess([])
    try {
      const api = new Api(proc.http)
      await api.mustPut('/s/a', '1')
      const s = await openNdjson(proc.http, { key: '/s/', prefix: true, startRevision: 2 })
      await s.waitFor((l) => l.some((x) => x.msg.type === 'events'), 5000, 'events')
      const rev = await api.revision()
      const code = await proc.stop('SIGTERM')
      await Promise.race([s.ended, sleep(5000)])
      expect(s.isEnded(), 'the response ended').to.equal(true)
      const msgs = s.lines.map((l) => l.msg)
      expect(msgs.map((m) => m.type)).to.deep.equal(['created', 'events', 'progress'])
      expect(msgs[2].revision).to.equal(rev)
      expect(code).to.equal(0)
    } finally {
      await proc.cleanup()
    }
  })

  it('on shutdown, does not wait out shutdownTimeout for a client that aborted its stream (or sent no request yet)', async () => {
    const proc = await startServerProcess([])
    const idle = new Socket()
    try {
      const s = await openNdjson(proc.http, { key: '/s/', prefix: true })
      await s.waitFor((l) => l.length > 0, 5000, 'created')
      s.abort() // fetch then keeps a fresh connection to the server open, with no request on it
      const { port, hostname } = new URL(proc.http)
      await new Promise<void>((resolve, reject) => idle.connect(Number(port), hostname, resolve).once('error', reject))
      await sleep(200)
      const t0 = performance.now()
      const code = await proc.stop('SIGTERM')
      const took = performance.now() - t0
      expect({ code, slow: took > 3000 }, `exit ${code} after ${Math.round(took)} ms`).to.deep.equal({ code: 0, slow: false })
    } finally {
      idle.destroy()
      await proc.cleanup()
    }
  })
})
