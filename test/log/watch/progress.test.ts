/** Watch hub, progress: a notice at R only when every matching event <= R has been delivered. */
import { expect } from 'chai'
import { prefixEnd } from '../../../log/keys.js'
import { type WatchSpec } from '../../../log/watch/types.js'
import { WatchHub } from '../../../log/watch/hub.js'
import { expectedEvents, gate, openTempLog, Recorder, settle, SpyLog, waitFor, type EventView, type TempLog } from './helpers.js'

describe('watch hub: progress', () => {
  let t: TempLog
  let log: SpyLog
  let hub: WatchHub

  beforeEach(async () => {
    t = await openTempLog()
    log = new SpyLog(t.log)
    hub = new WatchHub(log, { ringSize: 4, catchUpBatch: 3 })
  })
  afterEach(async () => {
    hub.close()
    await t.cleanup()
  })

  async function writes(n: number, key = 'k'): Promise<void> {
    for (let i = 0; i < n; i++) await log.put(`${key}${i % 3}`, `${i}`)
  }

  /**
   * Checks bookmarkability over the whole call sequence: at each progress(R), the events delivered so far
   * include exactly the expected events up to R (the Recorder checks R is not below what was delivered).
   */
  async function checkProgress(r: Recorder, spec: WatchSpec, from: number): Promise<void> {
    const seen: EventView[] = []
    for (const call of r.calls) {
      if (call.kind === 'events') {
        seen.push(...r.seen.slice(seen.length, seen.length + call.batch.events.length))
      } else if (call.kind === 'progress') {
        const upTo = seen.filter((e) => e.revision <= call.revision)
        expect(upTo, `${r.name}: delivered at progress(${call.revision})`).to.deep.equal(
          await expectedEvents(t.log, spec, from, call.revision),
        )
      }
    }
  }

  const spec: WatchSpec = { key: 'k', rangeEnd: prefixEnd('k') }

  it('progressAll() notifies synced watchers at the current revision, and only them', async () => {
    await writes(20)
    const synced = new Recorder('synced')
    const idle = new Recorder('idle, other key')
    const start = log.revision + 1
    hub.watch(spec, synced)
    hub.watch({ key: 'zzz' }, idle)
    const g = gate()
    log.gate = g.promise
    const catching = new Recorder('catching up')
    const hc = hub.watch({ ...spec, startRevision: 2 }, catching)
    const paused = new Recorder('paused')
    paused.accept = () => false
    const hp = hub.watch(spec, paused)
    await writes(3)
    await waitFor(() => log.reads.length === 1, 'the catch-up read is in flight')
    expect(hp.synced).to.equal(false)

    hub.progressAll()
    expect(synced.progressRevisions).to.deep.equal([log.revision])
    expect(idle.progressRevisions).to.deep.equal([log.revision])
    expect(catching.progressRevisions).to.deep.equal([])
    expect(paused.progressRevisions).to.deep.equal([])
    await checkProgress(synced, spec, start)

    // progressAll is not remembered for the unsynced: after catching up, no notice unless requested.
    log.gate = undefined
    g.open()
    await waitFor(() => hc.synced, 'caught up')
    await settle()
    expect(catching.progressRevisions).to.deep.equal([])
    synced.check()
    catching.check()
  })

  it('requestProgress() answers at once when synced, and after catching up otherwise', async () => {
    await writes(20)
    const now = new Recorder('synced')
    hub.watch(spec, now).requestProgress()
    expect(now.progressRevisions).to.deep.equal([log.revision])

    const g = gate()
    log.gate = g.promise
    const r = new Recorder('catching up')
    const h = hub.watch({ ...spec, startRevision: 2 }, r)
    h.requestProgress()
    h.requestProgress()
    await waitFor(() => log.reads.length === 1, 'the catch-up read is in flight')
    await writes(6)
    expect(r.progressRevisions, 'deferred').to.deep.equal([])
    log.gate = undefined
    g.open()
    await waitFor(() => h.synced, 'caught up')
    expect(r.progressRevisions).to.deep.equal([log.revision])
    expect(r.calls[r.calls.length - 1].kind).to.equal('progress')
    await checkProgress(r, spec, 2)
    r.check()
  })

  it('defers requestProgress() of a paused watcher until it has resumed and caught up', async () => {
    const start = log.revision + 1
    const r = new Recorder()
    let backUp = true
    r.accept = () => !backUp
    const h = hub.watch(spec, r)
    await writes(2)
    expect(h.synced).to.equal(false)
    h.requestProgress()
    await writes(10)
    expect(r.progressRevisions).to.deep.equal([])
    backUp = false
    h.resume()
    await waitFor(() => h.synced, 'synced')
    expect(r.progressRevisions).to.deep.equal([log.revision])
    await checkProgress(r, spec, start)
    r.check()
  })

  it('never claims a revision a synced watcher has not been given, even when asked from inside a dispatch', async () => {
    // `first` (exact key) is dispatched before `second` (prefix) for an event on k1, and asks for progress
    // for everyone from inside its events(): `second` must not hear of the new revision before its events.
    const first = new Recorder('first')
    const second = new Recorder('second')
    const start = log.revision + 1
    first.accept = () => {
      hub.progressAll()
      return true
    }
    hub.watch({ key: 'k1' }, first)
    hub.watch(spec, second)
    await writes(6)
    hub.progressAll()
    expect(second.progressRevisions.length).to.be.greaterThan(2)
    expect(second.progressRevisions[second.progressRevisions.length - 1]).to.equal(log.revision)
    await checkProgress(second, spec, start)
    await checkProgress(first, { key: 'k1' }, start)
    // `first` asked from inside its own events(): its notice covers the batch it was just given.
    expect(first.progressRevisions[0]).to.equal(first.batches[0].revision)
    first.check()
    second.check()
  })

  it('gives a watcher waiting for a future revision no progress until the store reached its start - 1; a sink without progress() is skipped', async () => {
    await writes(3)
    const future = new Recorder('future')
    const start = log.revision + 3
    hub.watch({ key: 'k1', startRevision: start }, future)
    const noProgress = { batches: 0, events: (): boolean => true, canceled: (): void => undefined }
    const h = hub.watch(spec, noProgress)
    hub.progressAll()
    h.requestProgress()
    expect(future.progressRevisions).to.deep.equal([])
    await writes(2)
    await settle()
    hub.progressAll()
    expect(future.progressRevisions).to.deep.equal([start - 1])
    expect(h.synced).to.equal(true)
    expect(hub.stats()).to.include({ watchers: 2, synced: 2 })
  })
})
