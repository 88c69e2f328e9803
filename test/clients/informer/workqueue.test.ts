/**
 * The work queue: dedupe while queued, one worker per key, re-add while processing → processed again
 * after done(), rate-limited retries with per-key backoff and forget, delayed adds, clean shutdown (with
 * and without drain); and a model check over random operations.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { ExponentialBackoffRateLimiter, WorkQueue, runWorkers } from '../../../clients/index.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('WorkQueue', () => {
  it('dedupes an item while it is queued, keeps FIFO order', async () => {
    const q = new WorkQueue<string>()
    for (const k of ['a', 'b', 'a', 'c', 'b', 'a']) q.add(k)
    expect(q.length).to.equal(3)
    expect([await q.get(), await q.get(), await q.get()]).to.deep.equal(['a', 'b', 'c'])
    expect(q.inFlight).to.equal(3)
  })

  it('never hands an item to two workers; an add during processing comes back once after done()', async () => {
    const q = new WorkQueue<string>()
    q.add('a')
    expect(await q.get()).to.equal('a')
    q.add('a')
    q.add('a')
    expect(q.length).to.equal(0) // not queued while processing
    let second: string | undefined
    void q.get().then((k) => (second = k))
    await sleep(5)
    expect(second).to.equal(undefined)
    q.done('a')
    await sleep(0)
    expect(second).to.equal('a')
    q.done('a')
    expect(q.length).to.equal(0)
    expect(q.inFlight).to.equal(0)
  })

  it('a waiting worker gets an item as soon as it is added', async () => {
    const q = new WorkQueue<string>()
    const got = q.get()
    q.add('x')
    expect(await got).to.equal('x')
    expect(q.length).to.equal(0)
  })

  it('addAfter delays, earliest wins; addRateLimited backs off per key; forget resets', async () => {
    const q = new WorkQueue<string>(new ExponentialBackoffRateLimiter(20, 1000))
    const t0 = performance.now()
    q.addAfter('a', 200)
    q.addAfter('a', 30)
    q.addAfter('a', 300)
    // Markers due after the superseded adds: the order they come in shows which adds fired.
    q.addAfter('z', 200)
    q.addAfter('y', 310)
    expect(q.length).to.equal(0)
    expect(await q.get()).to.equal('a')
    // A timer may fire a millisecond early; it never fires at once.
    expect(performance.now() - t0).to.be.at.least(25)
    q.done('a')
    expect(await q.get(), 'the 30 ms add came before the 200 ms marker').to.equal('z')
    q.done('z')
    expect(await q.get(), 'the 200 and 300 ms adds of a were superseded by the earlier one').to.equal('y')
    q.done('y')
    expect(q.length).to.equal(0)

    q.addRateLimited('b') // 20 ms
    q.addRateLimited('b') // 40 ms (the earlier pending add wins)
    expect(q.numRequeues('b')).to.equal(2)
    q.forget('b')
    expect(q.numRequeues('b')).to.equal(0)
  })

  it('shutDown: adds ignored, delayed adds dropped, queued items still handed out, then undefined', async () => {
    const q = new WorkQueue<string>()
    q.add('a')
    q.add('b')
    q.addAfter('late', 10)
    expect(await q.get()).to.equal('a')
    q.add('a') // re-added while processing, before shutdown: still processed
    q.shutDown()
    q.add('c')
    expect(await q.get()).to.equal('b')
    q.done('a')
    expect(await q.get()).to.equal('a')
    expect(await q.get()).to.equal(undefined)
    await sleep(30)
    expect(q.length).to.equal(0)
  })

  it('shutDown wakes idle workers; shutDownWithDrain waits for the items in flight', async () => {
    const q = new WorkQueue<string>()
    const idle = q.get()
    q.shutDown()
    expect(await idle).to.equal(undefined)

    const q2 = new WorkQueue<string>()
    q2.add('x')
    const k = await q2.get()
    let drained = false
    const d = q2.shutDownWithDrain().then(() => (drained = true))
    await sleep(10)
    expect(drained).to.equal(false)
    q2.done(k!)
    await d
    expect(drained).to.equal(true)
  })

  it('model check: random adds, gets and dones keep the invariants', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('add' as const), key: fc.constantFrom('a', 'b', 'c') }),
            fc.record({ op: fc.constant('get' as const) }),
            fc.record({ op: fc.constant('done' as const), i: fc.nat(5) }),
          ),
          { maxLength: 80 },
        ),
        async (ops) => {
          const q = new WorkQueue<string>()
          const processing: string[] = []
          // Model: keys waiting (queued or to requeue after processing), in order.
          const waiting = new Set<string>()
          for (const o of ops) {
            if (o.op === 'add') {
              q.add(o.key)
              waiting.add(o.key)
            } else if (o.op === 'get') {
              const ready = [...waiting].filter((k) => !processing.includes(k))
              if (ready.length === 0) {
                expect(q.length).to.equal(0)
                continue
              }
              const k = await q.get()
              expect(k).to.equal(ready[0])
              expect(processing).to.not.include(k)
              processing.push(k!)
              waiting.delete(k!)
            } else if (processing.length > 0) {
              const [k] = processing.splice(o.i % processing.length, 1)
              q.done(k)
              if (waiting.has(k)) {
                // Re-queued at the back: keep the model's order the same.
                waiting.delete(k)
                waiting.add(k)
              }
            }
            expect(q.inFlight).to.equal(processing.length)
            expect(q.length).to.equal([...waiting].filter((k) => !processing.includes(k)).length)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('runWorkers', () => {
  it('reconciles each key, retries failures with backoff, drops after maxRetries, stops cleanly', async () => {
    const q = new WorkQueue<string>(new ExponentialBackoffRateLimiter(2, 20))
    const calls: string[] = []
    let active = 0
    let maxActivePerKey = 0
    const perKey = new Map<string, number>()
    const errors: Array<[string, boolean]> = []
    for (const k of ['ok', 'flaky', 'broken', 'ok', 'ok']) q.add(k) // queued before the workers start: 'ok' once
    const w = runWorkers({
      queue: q,
      workers: 3,
      maxRetries: 3,
      onError: (key, _err, dropped) => errors.push([key, dropped]),
      reconcile: async (key) => {
        active++
        perKey.set(key, (perKey.get(key) ?? 0) + 1)
        maxActivePerKey = Math.max(maxActivePerKey, perKey.get(key)!)
        calls.push(key)
        await sleep(5)
        perKey.set(key, perKey.get(key)! - 1)
        active--
        if (key === 'flaky' && calls.filter((k) => k === 'flaky').length < 3) throw new Error('try again')
        if (key === 'broken') throw new Error('never works')
      },
    })
    const deadline = Date.now() + 5000
    while (errors.filter(([, d]) => d).length < 1 || calls.filter((k) => k === 'flaky').length < 3) {
      if (Date.now() > deadline) throw new Error('timed out')
      await sleep(5)
    }
    await w.stop()
    expect(active).to.equal(0)
    expect(maxActivePerKey).to.equal(1)
    expect(calls.filter((k) => k === 'ok')).to.have.length(1)
    expect(calls.filter((k) => k === 'flaky')).to.have.length(3)
    expect(calls.filter((k) => k === 'broken')).to.have.length(4) // 1 + maxRetries
    expect(errors.map(([k, d]) => `${k}:${d}`).sort()).to.deep.equal([
      'broken:false',
      'broken:false',
      'broken:false',
      'broken:true',
      'flaky:false',
      'flaky:false',
    ])
    expect(q.numRequeues('flaky')).to.equal(0)
    expect(w.succeeded).to.equal(2)
  })
})
