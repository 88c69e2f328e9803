/** Watch hub, catch-up: from the ring, from the log in batches, the seam with concurrent commits, compaction. */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import { type WatchHandle, type WatchSpec } from '../../../log/watch/types.js'
import { WatchHub } from '../../../log/watch/hub.js'
import { expectedEvents, gate, openTempLog, Recorder, rng, settle, SpyLog, waitFor, type TempLog } from './helpers.js'
import { randomSpec, randomWrite } from './workload.js'

describe('watch hub: catch-up', () => {
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

  async function writes(n: number, prefix = 'k'): Promise<void> {
    for (let i = 0; i < n; i++) {
      if (i % 7 === 6) await log.delete(`${prefix}${i % 3}`)
      else await log.put(`${prefix}${i % 3}`, `${i}`)
    }
  }

  async function synced(h: WatchHandle): Promise<void> {
    await waitFor(() => h.synced && h.nextRevision === log.revision + 1, `watch ${h.id} synced at ${log.revision + 1}`)
  }

  it('starts in the past from the ring, without reading the log, then continues live', async () => {
    const hub = open(64, 5)
    await writes(30)
    const from = log.revision - 20
    const spec: WatchSpec = { key: 'k', rangeEnd: prefixEnd('k'), startRevision: from, prevKv: true }
    const r = new Recorder()
    const h = hub.watch(spec, r)
    expect(h.synced).to.equal(false)
    expect(r.calls, 'nothing before watch() returns').to.deep.equal([])
    await synced(h)
    await writes(5)
    expect(r.seen).to.deep.equal(await expectedEvents(t.log, spec, from, log.revision))
    expect(log.reads).to.deep.equal([])
    // Catch-up batches span at most catchUpBatch revisions.
    for (const b of r.batches.slice(0, 4)) expect(b.revision - b.events[0].kv.modRevision).to.be.lessThan(5)
    r.check()
  })

  it('starts far in the past with a tiny ring: reads the log in steps of catchUpBatch revisions', async () => {
    const hub = open(4, 5)
    await writes(60)
    const spec: WatchSpec = { key: 'k1' }
    const r = new Recorder()
    const h = hub.watch({ ...spec, startRevision: 2 }, r)
    await synced(h)
    const end = log.revision
    await writes(6)
    expect(r.seen).to.deep.equal(await expectedEvents(t.log, spec, 2, log.revision))
    // Revisions 2..61 in steps of 5, then joined at the head (nothing committed meanwhile).
    expect(end).to.equal(61)
    expect(log.reads).to.have.length(12)
    expect(log.reads[0].from).to.equal(2)
    for (let i = 0; i < log.reads.length; i++) {
      expect(log.reads[i].to - log.reads[i].from, `read ${i}`).to.be.lessThan(5)
      if (i > 0) expect(log.reads[i].from, `read ${i} follows read ${i - 1}`).to.equal(log.reads[i - 1].to + 1)
    }
    expect(log.reads[11].to).to.equal(end)
    r.check()
  })

  it('catches up from the log when the hub started after the writes (empty ring)', async () => {
    await writes(20)
    const hub = open(100, 1000)
    const spec: WatchSpec = { key: 'k', rangeEnd: prefixEnd('k'), startRevision: 5, filters: { noDelete: true } }
    const r = new Recorder()
    const h = hub.watch(spec, r)
    await synced(h)
    expect(log.reads).to.deep.equal([{ from: 5, to: log.revision }])
    expect(r.seen).to.deep.equal(await expectedEvents(t.log, spec, 5, log.revision))
  })

  for (const during of [5, 25]) {
    it(`joins without gap or duplicate when ${during} commits land during a history read (ring 8)`, async () => {
      await writes(30)
      const hub = open(8, 1000)
      const g = gate()
      log.gate = g.promise
      const spec: WatchSpec = { key: 'k', rangeEnd: prefixEnd('k'), startRevision: 2, prevKv: true }
      const r = new Recorder()
      const h = hub.watch(spec, r)
      await waitFor(() => log.reads.length === 1, 'the first read is in flight')
      const firstTo = log.reads[0].to
      await writes(during)
      log.gate = undefined
      g.open()
      await synced(h)
      await writes(3)
      expect(r.seen).to.deep.equal(await expectedEvents(t.log, spec, 2, log.revision))
      // Up to 8 commits are bridged by the ring; more need a second read, which starts right after the first.
      if (during <= 8) expect(log.reads).to.have.length(1)
      else expect(log.reads.slice(1, 2)).to.deep.equal([{ from: firstTo + 1, to: firstTo + during }])
      r.check()
    })
  }

  for (const backedUp of [false, true]) {
    it(`streams equal history for many watchers at random past revisions during hundreds of writes${backedUp ? ', with consumers that back up' : ''}`, async function () {
      this.timeout(60_000)
      const seed = backedUp ? 4242 : 1717
      const rand = rng(seed)
      const hub = open(16, 7)
      log.delay = () => (rand() < 0.5 ? 0 : Math.floor(rand() * 4))
      const watches: Array<{ spec: WatchSpec; from: number; r: Recorder; h: WatchHandle }> = []
      let pauses = 0
      for (let wave = 0; wave < 90; wave++) {
        const batch: Array<Promise<unknown>> = []
        const size = 1 + Math.floor(rand() * 8)
        for (let i = 0; i < size; i++) batch.push(randomWrite(log, rand, `${wave}.${i}`))
        const starts = rand() < 0.6 ? 1 + Math.floor(rand() * 3) : 0
        for (let i = 0; i < starts; i++) {
          // Anywhere from the first revision to a little in the future (0 = from now).
          const choice = rand()
          const from = choice < 0.1 ? 0 : Math.max(2, Math.floor(2 + rand() * (log.revision + 3)))
          const spec = randomSpec(rand, from)
          const r = new Recorder(`seed ${seed} watch ${watches.length} ${JSON.stringify(spec)}`)
          if (backedUp) {
            r.accept = () => {
              if (rand() > 0.2) return true
              pauses++
              const delay = Math.floor(rand() * 5)
              setTimeout(() => h.resume(), delay)
              return false
            }
          }
          const h = hub.watch(spec, r)
          watches.push({ spec, from: from === 0 ? log.revision + 1 : from, r, h })
        }
        await Promise.all(batch)
        if (rand() < 0.3) await settle(1)
      }
      const end = log.revision
      expect(end).to.be.greaterThan(300)
      await waitFor(() => watches.every((w) => w.h.synced && w.h.nextRevision === Math.max(end + 1, w.from)), 'every watch synced', 30_000)
      for (const w of watches) {
        expect(w.r.seen, w.r.name).to.deep.equal(await expectedEvents(t.log, w.spec, w.from, end))
        w.r.check()
      }
      expect(watches.length).to.be.greaterThan(50)
      expect(log.reads.length, 'some watches caught up from the log').to.be.greaterThan(0)
      if (backedUp) expect(pauses).to.be.greaterThan(20)
      expect(hub.stats()).to.include({ watchers: watches.length, synced: watches.length, unsynced: 0, paused: 0, ringEntries: 16 })
    })
  }

  it('cancels a watch that starts below the compact revision with COMPACTED and the floor', async () => {
    const hub = open(64, 5)
    await writes(20)
    await log.compact(10)
    const r = new Recorder()
    const h = hub.watch({ key: 'k0', startRevision: 9 }, r)
    expect(r.calls, 'not from inside watch()').to.deep.equal([])
    await waitFor(() => r.cancellation !== undefined, 'canceled')
    expect(r.cancellation?.code).to.equal('COMPACTED')
    expect(r.cancellation?.details.compactRevision).to.equal(10)
    expect(r.batches).to.have.length(0)
    expect(h.synced).to.equal(false)
    expect(hub.stats().watchers).to.equal(0)
    await log.put('k0', 'after')
    expect(r.calls).to.have.length(1)
    r.check()

    // At the floor itself: fine.
    const ok = new Recorder('at floor')
    const spec: WatchSpec = { key: 'k', rangeEnd: prefixEnd('k'), startRevision: 10, prevKv: true }
    const h2 = hub.watch(spec, ok)
    await synced(h2)
    expect(ok.seen).to.deep.equal(await expectedEvents(t.log, spec, 10, log.revision))
    expect(ok.seen[0].revision).to.equal(10)
  })

  it('cancels with COMPACTED when compaction overtakes a catch-up in progress', async () => {
    await writes(40)
    const hub = open(4, 5)
    const g = gate()
    log.gate = g.promise
    const spec: WatchSpec = { key: 'k', rangeEnd: prefixEnd('k') }
    const r = new Recorder()
    hub.watch({ ...spec, startRevision: 2 }, r)
    await waitFor(() => log.reads.length === 1, 'the first read is in flight')
    await log.compact(20)
    log.gate = undefined
    g.open()
    await waitFor(() => r.cancellation !== undefined, 'canceled')
    expect(r.cancellation?.code).to.equal('COMPACTED')
    expect(r.cancellation?.details.compactRevision).to.equal(20)
    // What was read before the floor moved is delivered (from the read's snapshot), and nothing else.
    expect(r.seen).to.deep.equal(await expectedEventsBefore(spec, 2, 6))
    r.check()
  })

  it('cancels a catching-up watch with CLOSED when the log underneath is closed', async () => {
    await writes(10)
    const hub = open(4, 5)
    await t.log.close()
    const r = new Recorder()
    hub.watch({ key: 'k0', startRevision: 2 }, r)
    await waitFor(() => r.cancellation !== undefined, 'canceled')
    expect(r.cancellation?.code).to.equal('CLOSED')
    expect(r.batches).to.have.length(0)
    expect(hub.stats().watchers).to.equal(0)
  })

  /** Expected events of a range that has been compacted since: recomputed from a fresh log of the same writes. */
  async function expectedEventsBefore(spec: WatchSpec, from: number, to: number): Promise<unknown[]> {
    const fresh = await openTempLog()
    try {
      const saved = log
      log = new SpyLog(fresh.log)
      await writes(40)
      const out = await expectedEvents(fresh.log, spec, from, to)
      log = saved
      return out
    } finally {
      await fresh.cleanup()
    }
  }
})
