/** Watch hub, backpressure: a sink that returns false is paused, catches up on resume, or is canceled as COMPACTED. */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import { type WatchHandle, type WatchSpec } from '../../../log/watch/types.js'
import { WatchHub } from '../../../log/watch/hub.js'
import { expectedEvents, openTempLog, Recorder, settle, SpyLog, waitFor, type TempLog } from './helpers.js'

describe('watch hub: backpressure', () => {
  let t: TempLog
  let log: SpyLog
  let hub: WatchHub | undefined

  beforeEach(async () => {
    t = await openTempLog()
    log = new SpyLog(t.log)
  })
  afterEach(async () => {
    hub?.close()
    hub = undefined
    await t.cleanup()
  })

  function open(ringSize: number, catchUpBatch: number): WatchHub {
    hub = new WatchHub(log, { ringSize, catchUpBatch })
    return hub
  }

  async function writes(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      if (i % 5 === 4) await log.delete(`k${i % 3}`)
      else await log.put(`k${i % 3}`, `${i}`)
    }
  }

  /** A recorder whose `n`-th batch (1-based) reports a backed-up consumer; the others are taken. */
  function backedUp(n: number, name?: string): Recorder {
    const r = new Recorder(name)
    let count = 0
    r.accept = () => ++count !== n
    return r
  }

  const spec: WatchSpec = { key: 'k', rangeEnd: prefixEnd('k'), prevKv: true }

  for (const ringSize of [4, 256]) {
    it(`pauses a synced watcher that backs up, then delivers everything on resume (ring ${ringSize})`, async () => {
      const hub = open(ringSize, 3)
      const start = log.revision + 1
      const r = backedUp(1)
      const h = hub.watch(spec, r)
      const first = await log.put('k0', 'first')
      // The batch that reported backpressure was delivered; the watcher is out of the synced set.
      expect(r.batches).to.have.length(1)
      expect(h.synced).to.equal(false)
      expect(h.nextRevision).to.equal(first.revision + 1)
      expect(hub.stats()).to.include({ synced: 0, unsynced: 1, paused: 1 })
      await writes(30)
      await settle()
      expect(r.batches, 'no pushes while paused').to.have.length(1)
      expect(h.nextRevision).to.equal(first.revision + 1)
      h.resume()
      await waitFor(() => h.synced, 'synced again')
      await writes(3)
      expect(r.seen).to.deep.equal(await expectedEvents(t.log, spec, start, log.revision))
      if (ringSize === 4) expect(log.reads.length, 'fell out of the ring: read the log').to.be.greaterThan(0)
      else expect(log.reads, 'still in the ring').to.deep.equal([])
      r.check()
    })
  }

  it('pauses during catch-up and resumes from exactly where it stopped', async () => {
    const hub = open(4, 3)
    await writes(30)
    const r = backedUp(2)
    const h = hub.watch({ ...spec, startRevision: 2 }, r)
    await waitFor(() => r.batches.length === 2 && !h.synced, 'paused after two catch-up batches')
    await settle()
    expect(r.batches).to.have.length(2)
    const next = h.nextRevision
    // Each catch-up step covers 3 revisions; the watcher stopped right after its second batch's step.
    expect(next).to.be.greaterThan(r.batches[1].revision)
    expect(next - r.batches[1].revision).to.be.lessThanOrEqual(3)
    await writes(5)
    h.resume()
    await waitFor(() => h.synced, 'synced')
    expect(r.seen).to.deep.equal(await expectedEvents(t.log, spec, 2, log.revision))
    r.check()
  })

  it('keeps going when the sink calls resume() from inside events() before returning false', async () => {
    const hub = open(16, 3)
    const r = new Recorder()
    let once = true
    r.accept = () => {
      if (!once) return true
      once = false
      h.resume() // the sink is never called from inside watch(), so h is set by then
      return false
    }
    const h: WatchHandle = hub.watch(spec, r)
    const start = log.revision + 1
    await writes(5)
    expect(h.synced).to.equal(true)
    expect(r.seen).to.deep.equal(await expectedEvents(t.log, spec, start, log.revision))
  })

  it('cancels a paused watcher with COMPACTED on resume when compaction passed its next revision', async () => {
    const hub = open(256, 3)
    const r = backedUp(1)
    const h = hub.watch(spec, r)
    await log.put('k0', 'x')
    const next = h.nextRevision
    await writes(20)
    await log.compact(next + 5)
    h.resume()
    await waitFor(() => r.cancellation !== undefined, 'canceled')
    expect(r.cancellation?.code).to.equal('COMPACTED')
    expect(r.cancellation?.details.compactRevision).to.equal(next + 5)
    expect(r.batches, 'nothing after the pause: the ring is not used below the floor').to.have.length(1)
    expect(hub.stats()).to.include({ watchers: 0, paused: 0 })
    r.check()
  })

  it('notices a paused watcher fell below the compact revision at the next commit, without resume', async () => {
    const hub = open(256, 3)
    const r = backedUp(1)
    const other = new Recorder('other')
    const h = hub.watch(spec, r)
    hub.watch({ key: 'z' }, other)
    await log.put('k0', 'x')
    const next = h.nextRevision
    await writes(10)
    await log.compact(next + 1)
    expect(r.cancellation).to.equal(undefined)
    await log.put('z', 'any commit')
    expect(r.cancellation?.code).to.equal('COMPACTED')
    expect(r.cancellation?.details.compactRevision).to.equal(next + 1)
    h.resume()
    await settle()
    expect(r.calls).to.have.length(2)
    expect(other.seen).to.have.length(1)
    r.check()
  })

  it('resumes normally when compaction stayed at or below its next revision', async () => {
    const hub = open(4, 3)
    const start = log.revision + 1
    await writes(3)
    const r = backedUp(1)
    const h = hub.watch({ ...spec, startRevision: start }, r)
    await waitFor(() => r.batches.length === 1, 'first batch')
    const next = h.nextRevision
    await writes(20)
    await log.compact(next)
    await log.put('k9', 'after compaction')
    h.resume()
    await waitFor(() => h.synced, 'synced')
    expect(r.cancellation).to.equal(undefined)
    // From `next` on, the log still has it all; before it, the stream was delivered before compaction.
    expect(r.seen.filter((e) => e.revision >= next)).to.deep.equal(await expectedEvents(t.log, spec, next, log.revision))
    expect(r.seen.filter((e) => e.revision < next)).to.have.length(r.batches[0].events.length)
    r.check()
  })

  it('ignores resume() on a synced or canceled watcher', async () => {
    const hub = open(16, 3)
    const r = new Recorder()
    const h = hub.watch(spec, r)
    h.resume()
    expect(h.synced).to.equal(true)
    await log.put('k1', 'a')
    h.cancel()
    h.resume()
    await settle()
    await log.put('k1', 'b')
    expect(r.seen.map((e) => e.value)).to.deep.equal(['a'])
    expect(hub.stats().watchers).to.equal(0)
  })
})
