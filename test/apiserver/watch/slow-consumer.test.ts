/**
 * Slow consumers (docs/api.md, "Watch"): a WebSocket client that stops reading is paused by backpressure,
 * never dropped; it shows in kvlog_slow_watchers; after it reads again it gets every event exactly once,
 * in order; and watches on other connections keep getting live events meanwhile.
 */
import { expect } from 'chai'
import { performance } from 'node:perf_hooks'
import { Api, useServer } from '../http/helpers.js'
import { startServerProcess } from '../../support/server-process.js'
import { sleep, WatchConnection, type Received } from '../../support/watch-client.js'
import { checkWatches, Oracle, summarizeSegment, type LogicalWatch } from './checker.js'

const PAUSE_MS = 2000
const VALUES = 3000
const VALUE = 'v'.repeat(1024)

async function metric(http: string, name: string): Promise<number> {
  const text = await (await fetch(`${http}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  if (line === undefined) throw new Error(`no metric ${name}`)
  return Number(line.split(' ')[1])
}

describe('WebSocket watch: slow consumer', function () {
  this.timeout(60_000)
  // A small buffer so the pause bites quickly; a small ring so catching up reads the log.
  const server = useServer(['--ws-max-buffered-bytes', '64KiB', '--watch-ring-size', '300', '--watch-catch-up-batch', '100'])
  const conns: WatchConnection[] = []
  after(() => {
    for (const c of conns) c.terminate()
  })

  it('pauses a client that stops reading, then delivers everything exactly once; other connections stay live', async () => {
    const { api, process } = server()
    const http = process.http
    const start = (await api.revision()) + 1
    const slow = await WatchConnection.connect(http, 'slow')
    const peer = await WatchConnection.connect(http, 'peer')
    const other = await WatchConnection.connect(http, 'other')
    conns.push(slow, peer, other)
    const slowId = await slow.createAndWait({ key: '/slow/', prefix: true, prevKv: true, startRevision: start })
    const peerId = await peer.createAndWait({ key: '/slow/', prefix: true, prevKv: true, startRevision: start })
    const otherId = await other.createAndWait({ key: '/other/', prefix: true, startRevision: start })
    // A second watch on the slow connection: it backs up with its connection, and must catch up too.
    const slowOtherId = await slow.createAndWait({ key: '/other/', prefix: true, prevKv: true, startRevision: start })
    expect(await metric(http, 'kvlog_slow_watchers')).to.equal(0)

    slow.pauseSocket()
    const pausedAt = performance.now()
    let written = 0
    let stop = false
    // Writers: txns of 8 puts of 1 KiB each to /slow/, until VALUES are written.
    const writers = Array.from({ length: 12 }, async (_, w) => {
      const a = new Api(http)
      let i = 0
      while (written < VALUES) {
        const success = Array.from({ length: 8 }, (_, j) => ({ type: 'put', key: `/slow/w${w}/k${(i * 8 + j) % 40}`, value: VALUE }))
        i++
        const reply = await a.txn({ success })
        expect(reply.status, JSON.stringify(reply.body)).to.equal(200)
        written += 8
      }
    })
    // A trickle on /other/ the whole time.
    const trickle = (async () => {
      const a = new Api(http)
      for (let i = 0; !stop; i++) {
        await a.mustPut(`/other/k${i % 5}`, String(i))
        await sleep(20)
      }
    })()
    // Poll the gauge while paused; the paused client still writes: progress requests (answered once caught up).
    let maxSlow = 0
    const poll = (async () => {
      while (performance.now() - pausedAt < PAUSE_MS) {
        maxSlow = Math.max(maxSlow, await metric(http, 'kvlog_slow_watchers'))
        slow.requestProgress()
        await sleep(100)
      }
    })()
    await Promise.all([...writers, poll])
    const remaining = PAUSE_MS - (performance.now() - pausedAt)
    if (remaining > 0) await sleep(remaining)
    const resumedAt = performance.now()
    const receivedWhilePaused = slow.messagesFor(slowId).filter((r) => r.msg.type === 'events').length
    slow.resumeSocket()
    stop = true
    await trickle

    expect(written, 'values written').to.be.at.least(VALUES)
    expect(maxSlow, 'kvlog_slow_watchers while the client did not read').to.be.at.least(1)

    // Everyone catches up to the final revision.
    const last = await api.revision()
    for (const [c, id] of [
      [slow, slowId],
      [slow, slowOtherId],
      [peer, peerId],
      [other, otherId],
    ] as const) {
      const list = c.messagesFor(id)
      c.requestProgress()
      await c.waitFor(
        () => summarizeSegment({ startRevision: start, messages: list }).lastSeen >= last,
        20_000,
        `${c.label} to reach ${last}`,
      )
    }
    const oracle = new Oracle(start)
    await oracle.fetch(http)
    const watches: LogicalWatch[] = [
      {
        name: 'slow',
        spec: { key: '/slow/', prefix: true, prevKv: true },
        segments: [{ startRevision: start, messages: slow.messagesFor(slowId) }],
      },
      {
        name: 'peer',
        spec: { key: '/slow/', prefix: true, prevKv: true },
        segments: [{ startRevision: start, messages: peer.messagesFor(peerId) }],
      },
      { name: 'other', spec: { key: '/other/', prefix: true }, segments: [{ startRevision: start, messages: other.messagesFor(otherId) }] },
      {
        name: 'slowOther',
        spec: { key: '/other/', prefix: true, prevKv: true },
        segments: [{ startRevision: start, messages: slow.messagesFor(slowOtherId) }],
      },
    ]
    expect(checkWatches(oracle, watches, { finalRevision: last })).to.deep.equal([])
    const slowEvents = summarizeSegment({ startRevision: start, messages: slow.messagesFor(slowId) }).events
    expect(slowEvents, 'events on the slow watch').to.equal(oracle.events.filter((e) => e.kv.key?.startsWith('/slow/')).length)
    expect(slowEvents).to.be.at.least(VALUES)
    expect(
      slow.messagesFor(slowId).some((r) => r.msg.type === 'canceled'),
      'the slow watch was not canceled',
    ).to.equal(false)

    // The other connections kept receiving live events while the slow one was paused.
    const during = (list: Received[]) => list.filter((r) => r.msg.type === 'events' && r.at > pausedAt + 200 && r.at < resumedAt).length
    expect(during(peer.messagesFor(peerId)), 'peer events during the pause').to.be.at.least(5)
    expect(during(other.messagesFor(otherId)), 'other events during the pause').to.be.at.least(5)
    // The slow one could not have read much meanwhile (it was paused), and it is not slow any more.
    expect(receivedWhilePaused, 'events messages read by the paused client').to.be.below(
      slow.messagesFor(slowId).filter((r) => r.msg.type === 'events').length,
    )
    const deadline = performance.now() + 5000
    let slowNow = -1
    while (performance.now() < deadline && (slowNow = await metric(http, 'kvlog_slow_watchers')) !== 0) await sleep(50)
    expect(slowNow, 'kvlog_slow_watchers after catching up').to.equal(0)
    console.log(
      `      written ${written} values, max slow watchers ${maxSlow}, slow watch got ${slowEvents} events, ` +
        `peer got ${during(peer.messagesFor(peerId))} messages during the pause`,
    )
  })

  it('cancels a paused watch with COMPACTED (and the floor) when compaction overtakes it; what came before is exact', async () => {
    const { api, process } = server()
    const http = process.http
    const start = (await api.revision()) + 1
    const slow = await WatchConnection.connect(http, 'slow2')
    conns.push(slow)
    const id = await slow.createAndWait({ key: '/slow2/', prefix: true, prevKv: true, startRevision: start })
    slow.pauseSocket()
    const a = new Api(http)
    let paused = false
    for (let i = 0; i < 2000 && !paused; i++) {
      const success = Array.from({ length: 8 }, (_, j) => ({ type: 'put', key: `/slow2/k${j}`, value: VALUE }))
      expect((await a.txn({ success })).status).to.equal(200)
      if (i % 20 === 19) paused = (await metric(http, 'kvlog_slow_watchers')) >= 1
    }
    expect(paused, 'the watch paused').to.equal(true)
    const oracle = new Oracle(start)
    const floor = await oracle.fetch(http)
    expect((await a.compact(floor)).status).to.equal(200)
    await a.mustPut('/slow2/after', 'x') // the hub notices the new floor on the next commit
    slow.resumeSocket()
    const list = slow.messagesFor(id)
    await slow.waitFor(() => list.some((r) => r.msg.type === 'canceled'), 20_000, 'the cancel')
    const canceled = list.find((r) => r.msg.type === 'canceled')!.msg
    expect(canceled).to.include({ code: 'COMPACTED', compactRevision: floor })
    // Everything delivered before the cancel is exact, and the cancel came only because it had to.
    const watches: LogicalWatch[] = [
      { name: 'slow2', spec: { key: '/slow2/', prefix: true, prevKv: true }, segments: [{ startRevision: start, messages: list }] },
    ]
    expect(checkWatches(oracle, watches)).to.deep.equal([])
    expect(summarizeSegment({ startRevision: start, messages: list }).lastSeen).to.be.below(floor)
    // Like a client: relist, watch from the list's revision + 1, and that works.
    const listRevision = (await a.mustRange({ key: '/slow2/', prefix: true, countOnly: true })).header.revision
    const again = await slow.createAndWait({ key: '/slow2/', prefix: true, startRevision: listRevision + 1 })
    const rev = (await a.mustPut('/slow2/later', 'y')).header.revision
    await slow.waitFor(() => slow.messagesFor(again).some((r) => r.msg.revision === rev), 5000, 'the event after the relist')
  })
})

describe('WebSocket watch: heartbeat', function () {
  this.timeout(30_000)
  const server = useServer(['--ws-heartbeat-interval', '200ms'])

  it('terminates a peer that stops answering pings; an answering peer stays', async () => {
    const { process } = server()
    const quiet = await WatchConnection.connect(process.http, 'quiet')
    const chatty = await WatchConnection.connect(process.http, 'chatty')
    try {
      await quiet.createAndWait({ key: '/hb' })
      await chatty.createAndWait({ key: '/hb' })
      expect(await metric(process.http, 'kvlog_watchers')).to.equal(2)
      quiet.pauseSocket() // it cannot see pings, so it cannot answer them
      // The paused client cannot notice the disconnect (it reads nothing); the server's gauge shows it.
      const t0 = performance.now()
      let watchers = 2
      while (performance.now() - t0 < 3000 && (watchers = await metric(process.http, 'kvlog_watchers')) !== 1) await sleep(50)
      expect(watchers, 'watchers once the silent peer is terminated').to.equal(1)
      quiet.resumeSocket()
      const closed = await Promise.race([quiet.closed, sleep(2000).then(() => undefined)])
      expect(closed, 'the silent peer sees the disconnect once it reads').to.not.equal(undefined)
      await sleep(500) // a few more heartbeats
      expect(chatty.isOpen, 'the answering peer is still connected').to.equal(true)
      expect(await metric(process.http, 'kvlog_watchers')).to.equal(1)
    } finally {
      quiet.terminate()
      chatty.terminate()
    }
  })
})

describe('WebSocket watch: shutdown while a watch is paused', function () {
  this.timeout(30_000)

  it('sends every watch a final progress notice, the paused one too, then closes with 1001', async () => {
    const proc = await startServerProcess(['--ws-max-buffered-bytes', '64KiB'])
    const conns: WatchConnection[] = []
    try {
      const http = proc.http
      const a = new Api(http)
      const start = (await a.revision()) + 1
      const slow = await WatchConnection.connect(http, 'slow')
      const live = await WatchConnection.connect(http, 'live')
      conns.push(slow, live)
      const slowId = await slow.createAndWait({ key: '/p/', prefix: true, startRevision: start })
      const liveId = await live.createAndWait({ key: '/p/', prefix: true, startRevision: start })
      slow.pauseSocket()
      const value = 'v'.repeat(1024)
      let paused = false
      for (let i = 0; i < 2000 && !paused; i++) {
        await a.mustTxn({ success: Array.from({ length: 8 }, (_, j) => ({ type: 'put', key: `/p/k${j}`, value })) })
        if (i % 20 === 19) paused = (await metric(http, 'kvlog_slow_watchers')) >= 1
      }
      expect(paused, 'the slow watch paused').to.equal(true)
      const last = await a.revision()
      await live.waitFor(
        () => summarizeSegment({ startRevision: start, messages: live.messagesFor(liveId) }).lastSeen >= last,
        10_000,
        'live to catch up',
      )
      const stopped = proc.stop('SIGTERM')
      await sleep(300)
      slow.resumeSocket()
      const closes = await Promise.all([slow.closed, live.closed])
      const code = await stopped
      expect(code, 'exit code').to.equal(0)
      expect(
        closes.map((c) => c.code),
        'close codes',
      ).to.deep.equal([1001, 1001])
      const final = (c: WatchConnection, id: number) => {
        const list = c.messagesFor(id)
        return list[list.length - 1].msg.type
      }
      expect(final(live, liveId), 'the synced watch').to.equal('progress')
      expect(final(slow, slowId), 'the paused watch').to.equal('progress')
    } finally {
      for (const c of conns) c.terminate()
      await proc.cleanup()
    }
  })

  it('does not let a client that stopped reading hold up the shutdown (exit 0, well before shutdownTimeout)', async () => {
    const proc = await startServerProcess([])
    let conn: WatchConnection | undefined
    try {
      conn = await WatchConnection.connect(proc.http, 'stuck')
      await conn.createAndWait({ key: '/stuck' })
      conn.pauseSocket() // it will never read the close frame, nor answer it
      const t0 = performance.now()
      const code = await proc.stop('SIGTERM')
      const took = performance.now() - t0
      expect({ code, slow: took > 5000 }, `exit ${code} after ${Math.round(took)} ms`).to.deep.equal({ code: 0, slow: false })
    } finally {
      conn?.terminate()
      await proc.cleanup()
    }
  })
})
