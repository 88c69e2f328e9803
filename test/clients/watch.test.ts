/**
 * The client's auto-resuming Watch against real `kvlog serve` processes, through a TCP proxy that can cut
 * or black-hole connections: resume across a server restart and forced disconnects (the stitched stream
 * equals GET /v1/history exactly), progress advancing nextRevision, COMPACTED as CompactedError (iterator
 * and callbacks), heartbeat-silence detection, and starting from a consumer cursor.
 */
import { rm } from 'node:fs/promises'
import { expect } from 'chai'
import { CompactedError, KvlogClient, KvlogClientError, type WatchBatch, type WatchEvent } from '../../clients/index.js'
import { sleep, waitFor } from '../support/wait.js'
import { collect, fullHistory, processFixtures, show, writer } from './watch-helpers.js'

describe('Watch (client, real server)', function () {
  this.timeout(40_000)
  const { server, proxyTo, track } = processFixtures()

  it('resumes across a server restart (SIGTERM, same data dir): the stream equals the history, no gap, no duplicate', async () => {
    const s1 = await server()
    const proxy = await proxyTo(s1)
    let direct = new KvlogClient({ endpoint: s1.http })
    await direct.put('/rs/before-watch', 'x')
    const start = ((await direct.status()).revision as number) + 1
    const w = track(
      new KvlogClient({ endpoint: proxy.url }).watch('/rs/', {
        prefix: true,
        startRevision: start,
        prevKv: true,
        minBackoffMs: 20,
        maxBackoffMs: 200,
      }),
    )
    const got = collect(w)

    const wr = writer(() => direct, '/rs/k', { pauseMs: 5 })
    await waitFor('writes before the restart', () => wr.ok >= 30)
    expect(await s1.stop('SIGTERM')).to.equal(0)
    // The stopped server leaves its ready file; startServerProcess would read the old address from it.
    await rm(`${s1.dataDir}.ready.json`, { force: true })
    const beforeStop = wr.last
    await waitFor('the writer to notice the server is down', () => wr.failed >= 1)

    const s2 = await server([], s1.dataDir)
    direct = new KvlogClient({ endpoint: s2.http })
    proxy.setTarget(s2.http)
    await waitFor('writes after the restart', () => wr.last > beforeStop + 30)
    await wr.stop()
    await direct.put('/rs/last', 'end')
    const end = (await direct.status()).revision as number

    await waitFor('the watch to catch up', () => (w.nextRevision ?? 0) > end)
    w.close()
    expect(await got.done).to.equal(undefined)
    expect(w.reconnects).to.be.at.least(1)
    const history = await fullHistory(direct, '/rs/', start)
    expect(history.length).to.be.greaterThan(60)
    expect(got.events().map(show)).to.deep.equal(history)
    for (const b of got.batches) expect(b.revision).to.equal(b.events[b.events.length - 1].revision)
  })

  it('resumes across forced disconnects while writing (iterator and callbacks): no gap, no duplicate', async () => {
    const s = await server()
    const proxy = await proxyTo(s)
    const direct = new KvlogClient({ endpoint: s.http })
    const start = ((await direct.status()).revision as number) + 1
    const via = new KvlogClient({ endpoint: proxy.url })
    const opts = { prefix: true, startRevision: start, prevKv: true, minBackoffMs: 10, maxBackoffMs: 100 }
    const w1 = track(via.watch('/fd/', opts))
    const got1 = collect(w1)
    const w2 = track(via.watch('/fd/', opts))
    const cb: WatchEvent[] = []
    const errors: Error[] = []
    w2.on('events', (b: WatchBatch) => cb.push(...b.events)).on('error', (e: Error) => errors.push(e))

    const wr = writer(() => direct, '/fd/k', { pauseMs: 2 })
    let cuts = 0
    // At least 6 cuts, and enough writes around them (a loaded machine writes slowly).
    while (cuts < 6 || ((await direct.status()).revision as number) < start + 25) {
      await waitFor('both watches connected', () => proxy.open >= 2)
      await sleep(60)
      proxy.cutAll()
      cuts++
    }
    await wr.stop()
    const end = (await direct.put('/fd/last', 'end')).revision
    await waitFor('both watches to catch up', () => (w1.nextRevision ?? 0) > end && (w2.nextRevision ?? 0) > end)
    w1.close()
    w2.close()
    expect(await got1.done).to.equal(undefined)
    expect(errors).to.deep.equal([])
    expect(w1.reconnects).to.be.at.least(cuts)
    expect(w2.reconnects).to.be.at.least(cuts)
    const history = await fullHistory(direct, '/fd/', start)
    expect(history.length).to.be.greaterThan(20)
    expect(got1.events().map(show)).to.deep.equal(history)
    expect(cb.map(show)).to.deep.equal(history)
  })

  it('progress notices advance nextRevision, so a resume after a compaction past the old start still works', async () => {
    const s = await server(['--watch-progress-interval', '200ms'])
    const proxy = await proxyTo(s)
    const direct = new KvlogClient({ endpoint: s.http })
    const start = ((await direct.status()).revision as number) + 1
    const via = new KvlogClient({ endpoint: proxy.url })
    const w = track(via.watch('/pg/', { prefix: true, startRevision: start, progressNotify: true, minBackoffMs: 10, maxBackoffMs: 100 }))
    const progress: number[] = []
    w.on('progress', (r: number) => progress.push(r))
    const got = collect(w)
    // Control: the same watch without progressNotify learns nothing from the writes to other keys.
    const control = track(via.watch('/pg/', { prefix: true, startRevision: start, minBackoffMs: 10, maxBackoffMs: 100 }))
    const gotControl = collect(control)

    let last = 0
    for (let i = 0; i < 10; i++) last = (await direct.put(`/elsewhere/${i}`, 'x')).revision
    await waitFor('a progress notice at the last revision', () => progress.some((r) => r >= last), 5_000)
    expect(w.nextRevision).to.equal(last + 1)
    expect(control.nextRevision).to.equal(start)

    // The history the watches started from is gone; only the one that tracked progress can resume.
    await direct.compact(last - 2)
    proxy.cutAll()
    const p = await direct.put('/pg/after', 'y')
    await waitFor('the event after the resume', () => got.events().length > 0)
    expect(got.events().map((e) => [e.revision, e.kv.key.toString()])).to.deep.equal([[p.revision, '/pg/after']])
    expect(w.reconnects).to.be.at.least(1)

    const err = await gotControl.done
    expect(err).to.be.instanceOf(CompactedError)
    expect((err as CompactedError).compactRevision).to.equal(last - 2)
    w.close()
    expect(await got.done).to.equal(undefined)
  })

  it('a start revision below the floor: the iterator throws CompactedError with the floor; callbacks get "compacted"', async () => {
    const s = await server()
    const kv = new KvlogClient({ endpoint: s.http })
    let rev = 0
    for (let i = 0; i < 6; i++) rev = (await kv.put('/cp/a', String(i))).revision
    await kv.compact(rev - 1)

    const it = kv.watch('/cp/', { prefix: true, startRevision: 2 })
    const batches: WatchBatch[] = []
    let thrown: unknown
    try {
      for await (const b of it) batches.push(b)
    } catch (err) {
      thrown = err
    }
    expect(batches).to.deep.equal([])
    expect(thrown).to.be.instanceOf(CompactedError)
    expect((thrown as CompactedError).code).to.equal('COMPACTED')
    expect((thrown as CompactedError).compactRevision).to.equal(rev - 1)

    const cb = track(kv.watch('/cp/', { prefix: true, startRevision: 3 }))
    const seen: string[] = []
    const compacted = new Promise<CompactedError>((resolve) => {
      cb.on('events', () => seen.push('events'))
        .on('error', () => seen.push('error'))
        .on('close', () => seen.push('close'))
        .on('compacted', (e: CompactedError) => resolve(e))
    })
    const e = await compacted
    expect(e).to.be.instanceOf(CompactedError)
    expect(e.compactRevision).to.equal(rev - 1)
    await sleep(50)
    expect(seen).to.deep.equal(['close'])

    // At the floor itself the watch works and replays from there.
    const ok = track(kv.watch('/cp/', { prefix: true, startRevision: rev - 1 }))
    const okGot = collect(ok)
    await waitFor('the replay', () => okGot.events().length === 2)
    expect(okGot.events().map((x) => x.revision)).to.deep.equal([rev - 1, rev])
  })

  it('a bad watch request ends the watch with a KvlogClientError carrying the server code (iterator and "error" event)', async () => {
    const s = await server()
    const kv = new KvlogClient({ endpoint: s.http })
    let thrown: unknown
    try {
      for await (const b of kv.watch('', {})) expect.fail(`unexpected batch at ${b.revision}`)
    } catch (err) {
      thrown = err
    }
    expect(thrown).to.be.instanceOf(KvlogClientError)
    expect(thrown).to.not.be.instanceOf(CompactedError)
    expect((thrown as KvlogClientError).code).to.equal('EMPTY_KEY')
    const cb = track(kv.watch('/a', { rangeEnd: '/a', prefix: true }))
    const err = await new Promise<KvlogClientError>((resolve) => cb.on('events', () => undefined).on('error', resolve))
    expect(err.code).to.equal('INVALID_ARGUMENT')
  })

  it('a watch that falls below the floor while disconnected stops with CompactedError when it resumes', async () => {
    const s = await server()
    const proxy = await proxyTo(s)
    const kv = new KvlogClient({ endpoint: s.http })
    const first = (await kv.put('/fb/a', '0')).revision
    const w = track(
      new KvlogClient({ endpoint: proxy.url }).watch('/fb/', { prefix: true, startRevision: first, minBackoffMs: 20, maxBackoffMs: 50 }),
    )
    const got = collect(w)
    await waitFor('the first event', () => got.events().length === 1)
    proxy.refuse = true
    proxy.cutAll()
    let rev = 0
    for (let i = 1; i < 6; i++) rev = (await kv.put('/fb/a', String(i))).revision
    await kv.compact(rev)
    proxy.refuse = false
    const err = await got.done
    expect(err).to.be.instanceOf(CompactedError)
    expect((err as CompactedError).compactRevision).to.equal(rev)
    expect(got.events().map((e) => e.revision)).to.deep.equal([first])
  })

  it('heartbeat: a black-holed connection is dropped after heartbeatTimeoutMs and the watch resumes without loss', async () => {
    const s = await server(['--ws-heartbeat-interval', '200ms'])
    const proxy = await proxyTo(s)
    const kv = new KvlogClient({ endpoint: s.http })
    const start = ((await kv.status()).revision as number) + 1
    const via = new KvlogClient({ endpoint: proxy.url })
    const w = track(
      via.watch('/hb/', { prefix: true, startRevision: start, prevKv: true, heartbeatTimeoutMs: 500, minBackoffMs: 10, maxBackoffMs: 50 }),
    )
    const got = collect(w)
    // Control: the same, but with a long heartbeat timeout: it must still be stuck when `w` has resumed.
    const slow = track(via.watch('/hb/', { prefix: true, startRevision: start, heartbeatTimeoutMs: 20_000 }))
    const gotSlow = collect(slow)

    for (let i = 0; i < 5; i++) await kv.put(`/hb/${i}`, 'a')
    await waitFor('both watches to catch up', () => got.events().length === 5 && gotSlow.events().length === 5)
    // Idle for a few heartbeats first: pings alone must keep a healthy connection open.
    await sleep(1_000)
    expect(w.reconnects).to.equal(0)

    proxy.blackholeAll()
    const silentAt = Date.now()
    let end = 0
    for (let i = 0; i < 5; i++) end = (await kv.put(`/hb/${i}`, 'b')).revision
    await waitFor('the reconnect', () => w.reconnects >= 1, 15_000)
    const after = Date.now() - silentAt
    expect(after).to.be.at.least(250) // the last ping came at most one interval (200 ms) before the silence
    // The control with a 20 s heartbeat timeout is still stuck (checked below): the 500 ms timeout dropped it.
    await waitFor('the resumed watch to catch up', () => (w.nextRevision ?? 0) > end, 20_000)
    expect(got.events().map(show)).to.deep.equal(await fullHistory(kv, '/hb/', start))
    expect(slow.reconnects).to.equal(0)
    expect(gotSlow.events()).to.have.length(5)
  })

  it('a watch from a consumer cursor starts after the cursor’s revision', async () => {
    const s = await server()
    const kv = new KvlogClient({ endpoint: s.http })
    const r1 = (await kv.put('/cw/a', '1')).revision
    await kv.commitCursor('ctl', r1)
    const r2 = (await kv.put('/cw/a', '2')).revision
    const r3 = (await kv.put('/cw/b', '3')).revision
    const w = track(kv.watch('/cw/', { prefix: true, cursor: 'ctl' }))
    const got = collect(w)
    await sleep(300)
    const r4 = (await kv.put('/cw/c', '4')).revision
    await waitFor('the live event', () => (w.nextRevision ?? 0) > r4)
    expect(got.events().map((e) => e.revision)).to.deep.equal([r2, r3, r4])
  })

  it('a watch from now (no start revision) delivers only later writes, and a resume does not skip any', async () => {
    const s = await server()
    const proxy = await proxyTo(s)
    const kv = new KvlogClient({ endpoint: s.http })
    await kv.put('/nw/old', 'x')
    const w = track(new KvlogClient({ endpoint: proxy.url }).watch('/nw/', { prefix: true, minBackoffMs: 200, maxBackoffMs: 200 }))
    const got = collect(w)
    await waitFor('the watch to be created', () => w.nextRevision !== undefined)
    const from = w.nextRevision!
    proxy.cutAll()
    const a = (await kv.put('/nw/a', '1')).revision // while disconnected
    await waitFor('the reconnect', () => w.reconnects >= 1)
    const b = (await kv.put('/nw/b', '2')).revision
    await waitFor('both events', () => (w.nextRevision ?? 0) > b)
    expect(from).to.equal(a)
    expect(got.events().map((e) => e.revision)).to.deep.equal([a, b])
  })
})
