/** Watch hub, synced watchers: live events, key/prefix/range/all, filters, prevKv, future starts, cancel, close. */
import { expect } from 'chai'
import type { Log } from '../../../log/backend.js'
import { isKvlogError } from '../../../log/errors.js'
import { prefixEnd } from '../../../log/keys.js'
import { type WatchHandle, type WatchSpec } from '../../../log/watch/types.js'
import { WatchHub } from '../../../log/watch/hub.js'
import { expectedEvents, openTempLog, Recorder, settle, ZERO, type TempLog } from './helpers.js'

describe('watch hub: live events', () => {
  let t: TempLog
  let log: Log
  let hub: WatchHub

  beforeEach(async () => {
    t = await openTempLog()
    log = t.log
    hub = new WatchHub(log, { ringSize: 64, catchUpBatch: 10 })
  })
  afterEach(async () => {
    hub.close()
    await t.cleanup()
  })

  function watch(spec: WatchSpec, name = 'w'): { r: Recorder; h: WatchHandle } {
    const r = new Recorder(name)
    return { r, h: hub.watch(spec, r) }
  }

  it('delivers each commit to a watcher from now, synchronously with the commit', async () => {
    const { r, h } = watch({ key: 'a' })
    expect(h.synced).to.equal(true)
    const w1 = await log.put('a', '1')
    // The listener ran before the writer resolved the caller's promise: the event is already here.
    expect(r.seen.map((e) => [e.revision, e.type, e.value])).to.deep.equal([[w1.revision, 'PUT', '1']])
    const w2 = await log.delete('a')
    expect(r.seen.map((e) => [e.revision, e.type])).to.deep.equal([
      [w1.revision, 'PUT'],
      [w2.revision, 'DELETE'],
    ])
    expect(h.nextRevision).to.equal(log.revision + 1)
    r.check()
  })

  it('does not deliver what was committed before the watch started', async () => {
    await log.put('a', 'old')
    const { r } = watch({ key: 'a' })
    await log.put('b', 'other')
    await settle()
    expect(r.calls).to.deep.equal([])
    const w = await log.put('a', 'new')
    expect(r.seen.map((e) => [e.revision, e.value])).to.deep.equal([[w.revision, 'new']])
  })

  it('matches a single key, a prefix, a range, every key >= k, and all keys', async () => {
    const specs: Record<string, WatchSpec> = {
      key: { key: 'b/1' },
      prefix: { key: 'b/', rangeEnd: prefixEnd('b/') },
      range: { key: 'a', rangeEnd: 'b/2' },
      from: { key: 'b/1', rangeEnd: ZERO },
      all: { key: ZERO, rangeEnd: ZERO },
      binaryPrefix: { key: Buffer.from([0x62, 0xff]), rangeEnd: prefixEnd(Buffer.from([0x62, 0xff])) },
    }
    const start = log.revision + 1
    const recs = Object.fromEntries(Object.entries(specs).map(([n, s]) => [n, watch(s, n).r]))
    for (const k of ['a', 'b', 'b/', 'b/1', 'b/10', 'b/2', 'b0', 'c', 'b\xff', 'b\xffz']) {
      await log.put(Buffer.from(k, 'latin1'), 'v')
    }
    await log.delete('b/', { rangeEnd: prefixEnd('b/') })
    const end = log.revision
    const keys = (n: string): string[] => recs[n].seen.map((e) => `${e.type} ${e.key}`)
    expect(keys('key')).to.deep.equal(['PUT b/1', 'DELETE b/1'])
    expect(keys('prefix')).to.deep.equal([
      'PUT b/',
      'PUT b/1',
      'PUT b/10',
      'PUT b/2',
      'DELETE b/',
      'DELETE b/1',
      'DELETE b/10',
      'DELETE b/2',
    ])
    expect(keys('range')).to.deep.equal(['PUT a', 'PUT b', 'PUT b/', 'PUT b/1', 'PUT b/10', 'DELETE b/', 'DELETE b/1', 'DELETE b/10'])
    expect(keys('binaryPrefix')).to.deep.equal(['PUT b\xff', 'PUT b\xffz'])
    expect(recs.all.seen).to.have.length(14)
    for (const [n, s] of Object.entries(specs)) {
      expect(recs[n].seen, n).to.deep.equal(await expectedEvents(log, s, start, end))
      recs[n].check()
    }
  })

  it('delivers a transaction (one revision, many keys) in one call, in op order', async () => {
    const { r } = watch({ key: 'k', rangeEnd: prefixEnd('k') })
    const other = watch({ key: 'k2' }).r
    await log.put('k1', 'x')
    const t1 = await log.txn({
      success: [
        { type: 'put', key: 'k3', value: 'a' },
        { type: 'delete', key: 'k1' },
        { type: 'put', key: 'k2', value: 'b' },
        { type: 'put', key: 'z', value: 'outside' },
      ],
    })
    const last = r.batches[r.batches.length - 1]
    expect(last.revision).to.equal(t1.revision)
    expect(last.events.map((e) => `${e.type} ${e.kv.key.toString()}`)).to.deep.equal(['PUT k3', 'DELETE k1', 'PUT k2'])
    expect(other.batches.map((b) => b.events.map((e) => e.kv.key.toString()))).to.deep.equal([['k2']])
    r.check()
  })

  it('merges one group commit into one call per watcher, never splitting a revision', async () => {
    const { r } = watch({ key: 'g', rangeEnd: prefixEnd('g') })
    const start = log.revision + 1
    // Issued together, these share group commits: several revisions per commit batch.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        log.txn({
          success: [
            { type: 'put', key: `g${i % 5}`, value: `${i}` },
            { type: 'put', key: `g-${i}`, value: 'x' },
          ],
        }),
      ),
    )
    expect(r.seen).to.deep.equal(await expectedEvents(log, { key: 'g', rangeEnd: prefixEnd('g') }, start, log.revision))
    expect(r.batches.length).to.be.lessThan(40)
    for (const b of r.batches) {
      const revs = new Set(b.events.map((e) => e.kv.modRevision))
      for (const rev of revs) expect(b.events.filter((e) => e.kv.modRevision === rev)).to.have.length(2)
    }
    r.check()
  })

  it('applies the noPut and noDelete filters', async () => {
    const noPut = watch({ key: 'f', filters: { noPut: true } }, 'noPut').r
    const noDelete = watch({ key: 'f', filters: { noDelete: true } }, 'noDelete').r
    const neither = watch({ key: 'f', filters: { noPut: true, noDelete: true } }, 'neither').r
    await log.put('f', '1')
    await log.put('f', '2')
    await log.delete('f')
    await log.put('f', '3')
    expect(noPut.seen.map((e) => e.type)).to.deep.equal(['DELETE'])
    expect(noDelete.seen.map((e) => e.value)).to.deep.equal(['1', '2', '3'])
    expect(neither.calls).to.deep.equal([])
  })

  it('includes prevKv only when asked, and it is the previous version', async () => {
    await log.put('p', 'v0')
    const withPrev = watch({ key: 'p', prevKv: true }, 'with').r
    const without = watch({ key: 'p' }, 'without').r
    const r1 = await log.put('p', 'v1')
    const r2 = await log.delete('p')
    const r3 = await log.put('p', 'v2')
    expect(withPrev.batches.map((b) => b.events.map((e) => e.prevKv?.value.toString()))).to.deep.equal([['v0'], ['v1'], [undefined]])
    expect(withPrev.batches[1].events[0].prevKv?.modRevision).to.equal(r1.revision)
    expect(without.batches.flatMap((b) => b.events).every((e) => !('prevKv' in e) || e.prevKv === undefined)).to.equal(true)
    // The created flag: version 1 on the put after the delete.
    expect(without.seen.map((e) => [e.revision, e.version])).to.deep.equal([
      [r1.revision, 2],
      [r2.revision, 0],
      [r3.revision, 1],
    ])
  })

  it('hands the same batch object to watchers with the same range and options', async () => {
    const a = watch({ key: 's', rangeEnd: prefixEnd('s') }, 'a').r
    const b = watch({ key: 's', rangeEnd: prefixEnd('s') }, 'b').r
    const c = watch({ key: 's', rangeEnd: prefixEnd('s'), prevKv: true }, 'c').r
    await log.put('s1', 'x')
    expect(a.batches[0]).to.equal(b.batches[0])
    expect(c.batches[0]).to.not.equal(a.batches[0])
    expect(hub.stats()).to.include({ watchers: 3, synced: 3, unsynced: 0 })
  })

  it('waits for a future start revision without error, then delivers from exactly there', async () => {
    const from = log.revision + 3
    const { r, h } = watch({ key: 'x', startRevision: from })
    expect(h.synced).to.equal(true)
    expect(h.nextRevision).to.equal(from)
    await log.put('x', '1')
    await settle()
    expect(r.calls).to.deep.equal([])
    // One group commit that straddles the start revision: only the part at or after it is delivered.
    await Promise.all([log.put('x', '2'), log.put('x', '3'), log.put('x', '4')])
    expect(r.seen.map((e) => [e.revision, e.value])).to.deep.equal([
      [from, '3'],
      [from + 1, '4'],
    ])
    expect(r.batches).to.have.length(1)
    expect(h.nextRevision).to.equal(from + 2)
    r.check()
  })

  it('stops delivery on cancel, without calling canceled()', async () => {
    const { r, h } = watch({ key: 'c' })
    const other = watch({ key: 'c' }, 'other').r
    await log.put('c', '1')
    h.cancel()
    h.cancel()
    await log.put('c', '2')
    expect(r.seen.map((e) => e.value)).to.deep.equal(['1'])
    expect(r.cancellation).to.equal(undefined)
    expect(other.seen.map((e) => e.value)).to.deep.equal(['1', '2'])
    expect(hub.stats()).to.include({ watchers: 1, synced: 1 })
  })

  it('cancels a watch whose sink throws (INTERNAL), and nobody else notices', async () => {
    const bad = new Recorder('bad')
    bad.accept = () => {
      throw new Error('boom')
    }
    hub.watch({ key: 'e' }, bad)
    const good = watch({ key: 'e' }, 'good').r
    await log.put('e', '1')
    await log.put('e', '2')
    expect(bad.cancellation?.code).to.equal('INTERNAL')
    expect(bad.batches).to.have.length(1)
    expect(good.seen.map((e) => e.value)).to.deep.equal(['1', '2'])
    bad.check()
  })

  it('close() cancels every watch with CLOSED and unsubscribes; watch() then fails with CLOSED', async () => {
    const a = watch({ key: 'a' }, 'a').r
    const b = watch({ key: 'b', startRevision: log.revision + 100 }, 'b').r
    hub.close()
    hub.close()
    expect(a.cancellation?.code).to.equal('CLOSED')
    expect(b.cancellation?.code).to.equal('CLOSED')
    await log.put('a', '1')
    expect(a.batches).to.have.length(0)
    expect(() => hub.watch({ key: 'a' }, new Recorder()))
      .to.throw()
      .that.satisfies((e: unknown) => isKvlogError(e, 'CLOSED'))
    expect(hub.stats()).to.include({ watchers: 0 })
  })

  it('rejects bad specs with stable codes and bad sinks with TypeError', () => {
    const code = (f: () => unknown): string | undefined => {
      try {
        f()
      } catch (e) {
        return isKvlogError(e) ? e.code : (e as Error).name
      }
      return undefined
    }
    const r = new Recorder()
    expect(code(() => hub.watch({ key: '' }, r))).to.equal('EMPTY_KEY')
    expect(code(() => hub.watch({ key: 'a', startRevision: -1 }, r))).to.equal('INVALID_ARGUMENT')
    expect(code(() => hub.watch({ key: 'a', startRevision: 1.5 }, r))).to.equal('INVALID_ARGUMENT')
    expect(code(() => hub.watch({ key: 'a', prevKv: 'yes' as unknown as boolean }, r))).to.equal('INVALID_ARGUMENT')
    expect(code(() => hub.watch({ key: 42 as unknown as string }, r))).to.equal('INVALID_ARGUMENT')
    expect(code(() => hub.watch({ key: 'a' }, {} as unknown as Recorder))).to.equal('TypeError')
    expect(() => new WatchHub(log, { ringSize: -1, catchUpBatch: 1 })).to.throw(TypeError)
    expect(() => new WatchHub(log, { ringSize: 1, catchUpBatch: 0 })).to.throw(TypeError)
    expect(hub.stats().watchers).to.equal(0)
  })
})
