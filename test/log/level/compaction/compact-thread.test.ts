/**
 * log/level/compaction/compact-thread.ts + compact-worker.ts: the compaction thread shares the open log's LevelDB handle,
 * scans a job and sends its batches to be written one at a time in revision order, fails the scan when a
 * write fails (and takes the next one), fails the scan if it dies (and a new thread takes the next one),
 * stops at a batch boundary when asked, sends the batches of a read in one message and takes an answer
 * only for the message it names, reads its spans with the size the main thread gives after each write,
 * and lets the log close and open again; a log's thread runs at compactionThreadNice, the writers' as it
 * was. The log-level
 * semantics with the thread are in test/log/level/compaction/semantics.test.ts.
 */
import { expect } from 'chai'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { CompactionThread, type FromCompactionThread, type ToCompactionThread } from '../../../../log/level/compaction/compact-thread.js'
import { unpackPlan, type PlannedWrite } from '../../../../log/level/compaction/compact-transfer.js'
import { openLevelLog, type LevelLog } from '../../../../log/level/level-log.js'
import type { BatchOp } from '../../../../log/level/segments.js'
import { processThreadsNice, threadNice } from '../../../support/threads.js'
import { waitFor } from '../../../support/wait.js'

const BATCH = 10

describe('log/compact-thread: the compaction thread', function () {
  this.timeout(30_000)
  let dir = ''
  let log: LevelLog
  let thread: CompactionThread
  let first = 0

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-compact-thread-'))
    log = await openLevelLog({ dir, fsync: 'never', compactionBatchRevisions: BATCH })
    first = log.revision + 1
    for (let i = 0; i < 95; i++) await log.put(`k${i % 5}`, `v${i}`)
    thread = new CompactionThread(dir, 0)
  })
  afterEach(async () => {
    await thread.close()
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** Records every batch it is sent; `onWrite` may fail or stop one. */
  function recorder(onWrite: (n: number) => void = () => undefined) {
    const batches: Array<{ last: number; revs: number[]; ops: number }> = []
    const write = async (last: number, plan: PlannedWrite) => {
      batches.push({ last, revs: plan.scanned.map((s) => s.rev), ops: plan.ops.length })
      onWrite(batches.length)
    }
    return { batches, write }
  }

  it('scans the job in batches, in revision order, one write at a time, and reports what it removed', async () => {
    const to = log.revision - 4
    const { batches, write } = recorder()
    const result = await thread.scan({ to, next: first }, { batchRevisions: () => BATCH, batchesPerRead: 1, pauseFactor: 0 }, write)
    const revs = batches.flatMap((b) => b.revs)
    expect(revs).to.deep.equal(Array.from({ length: to - first }, (_, i) => first + i))
    expect(batches.map((b) => b.last)).to.deep.equal(batches.map((b) => b.revs[b.revs.length - 1]))
    expect(batches.every((b) => b.revs.length <= BATCH && b.ops > 0)).to.equal(true)
    expect(result.removedRevisions).to.equal(to - first)
    // 5 keys written in turn: every put below the target but the last 5 supersedes one (its hist record goes)
    expect(result.removedVersions).to.equal(to - first - 5)
  })

  it("fails the scan with the write's error, and takes the next scan", async () => {
    const failing = recorder((n) => {
      if (n === 2) throw new Error('the disk is on fire')
    })
    const to = log.revision - 4
    let err: unknown
    await thread
      .scan({ to, next: first }, { batchRevisions: () => BATCH, batchesPerRead: 1, pauseFactor: 0 }, failing.write)
      .catch((e: unknown) => (err = e))
    expect(err).to.be.instanceOf(Error)
    expect((err as Error).message).to.equal('the disk is on fire')
    expect(failing.batches).to.have.length(2)

    const next = recorder()
    const result = await thread.scan(
      { to, next: first + BATCH },
      { batchRevisions: () => BATCH, batchesPerRead: 1, pauseFactor: 0 },
      next.write,
    )
    expect(next.batches[0].revs[0]).to.equal(first + BATCH)
    expect(result.removedRevisions).to.equal(to - first - BATCH)
  })

  it('fails the scan if the thread dies, and starts a new one for the next scan', async () => {
    // The thread is private; terminating it from the test stands in for a crash inside it.
    const worker = () => (thread as unknown as { worker: Worker | undefined }).worker
    const dying = recorder((n) => {
      if (n === 1) void worker()!.terminate()
    })
    let err: unknown
    await thread
      .scan({ to: log.revision, next: first }, { batchRevisions: () => BATCH, batchesPerRead: 1, pauseFactor: 0 }, dying.write)
      .catch((e: unknown) => (err = e))
    expect((err as Error).message).to.match(/compaction thread exited/)
    expect(worker()).to.equal(undefined)

    const next = recorder()
    const result = await thread.scan(
      { to: log.revision, next: first },
      { batchRevisions: () => BATCH, batchesPerRead: 1, pauseFactor: 0 },
      next.write,
    )
    expect(result.removedRevisions).to.equal(log.revision - first)
  })

  it('stops at the next batch boundary when asked', async () => {
    const stopping = recorder(() => thread.stop())
    const result = await thread.scan(
      { to: log.revision, next: first },
      { batchRevisions: () => BATCH, batchesPerRead: 1, pauseFactor: 0 },
      stopping.write,
    )
    expect(stopping.batches).to.have.length(1)
    expect(result.removedRevisions).to.equal(BATCH)
  })

  it("the thread sends a read's batches in one message, and takes an answer only for the message it names (a late answer to a failed scan's is not the next one's)", async () => {
    // The protocol spoken to the thread directly: the main thread's side would never send a wrong number.
    const worker = new Worker(new URL('../../../../log/level/compaction/compact-worker.js', import.meta.url), {
      workerData: { dir, nice: 0 },
    })
    const received: FromCompactionThread[] = []
    let arrived: () => void = () => undefined
    worker.on('message', (m: FromCompactionThread) => {
      received.push(m)
      arrived()
    })
    /** The next message, or undefined if none comes within `ms`. */
    const next = (ms: number) =>
      new Promise<FromCompactionThread | undefined>((resolve) => {
        if (received.length > 0) return resolve(received.shift())
        const t = setTimeout(() => {
          arrived = () => undefined
          resolve(undefined)
        }, ms)
        arrived = () => {
          arrived = () => undefined
          clearTimeout(t)
          resolve(received.shift())
        }
      })
    const post = (m: ToCompactionThread) => worker.postMessage(m)
    try {
      post({ kind: 'scan', job: { to: log.revision, next: first }, batchRevisions: BATCH, batchesPerRead: 3 })
      const b1 = await next(5_000)
      expect(b1).to.include({ kind: 'batches', seq: 1 })
      // Three spans of BATCH revisions from one read, each its own batch with its own progress (`last`).
      const spans = (b1 as Extract<FromCompactionThread, { kind: 'batches' }>).batches.map((b) => ({
        last: b.last,
        revs: unpackPlan(b.plan).scanned.map((r) => r.rev),
      }))
      expect(spans.map((b) => b.revs)).to.deep.equal([0, 1, 2].map((i) => Array.from({ length: BATCH }, (_, j) => first + i * BATCH + j)))
      expect(spans.map((b) => b.last)).to.deep.equal(spans.map((b) => b.revs[BATCH - 1]))
      post({ kind: 'written', seq: 0, batchSize: BATCH })
      expect(await next(300), 'no batches after an answer to another message').to.equal(undefined)
      post({ kind: 'written', seq: 1, batchSize: BATCH })
      const b2 = await next(5_000)
      expect(b2).to.include({ kind: 'batches', seq: 2 })
      const firsts = (b2 as Extract<FromCompactionThread, { kind: 'batches' }>).batches.map((b) => unpackPlan(b.plan).scanned[0].rev)
      expect(firsts, 'the next read goes on where the first ended').to.deep.equal([3, 4, 5].map((i) => first + i * BATCH))
    } finally {
      // It closes its share of the database handle, then ends.
      const exited = once(worker, 'exit')
      post({ kind: 'close' })
      await exited
    }
  })

  it('reads the spans after each write with the size the main thread gives in its answer', async () => {
    const { batches, write } = recorder()
    let asked = 0
    const size = () => (asked++ === 0 ? BATCH : 3)
    const result = await thread.scan({ to: log.revision, next: first }, { batchRevisions: size, batchesPerRead: 1, pauseFactor: 0 }, write)
    const lengths = batches.map((b) => b.revs.length)
    expect(lengths[0]).to.equal(BATCH)
    // Spans read before the first answer came keep its size; every span read after it holds 3 (the last
    // may hold fewer).
    expect(
      lengths.slice(0, 3).every((n) => n === BATCH || n === 3),
      lengths.join(' '),
    ).to.equal(true)
    expect(
      lengths.slice(3, -1).every((n) => n === 3),
      lengths.join(' '),
    ).to.equal(true)
    expect(lengths.length).to.be.greaterThan(20)
    expect(batches.flatMap((b) => b.revs)).to.deep.equal(Array.from({ length: log.revision - first }, (_, i) => first + i))
    expect(result.removedRevisions).to.equal(log.revision - first)
  })

  /** Records every walk batch it is sent; `onWrite` may fail or stop one. */
  function walkRecorder(onWrite: (n: number) => void = () => undefined) {
    const batches: Array<{ position: Buffer | undefined; dels: number; puts: number }> = []
    const write = async (ops: BatchOp[], position: Buffer | undefined) => {
      batches.push({ position, dels: ops.filter((o) => o.type === 'del').length, puts: ops.filter((o) => o.type === 'put').length })
      onWrite(batches.length)
    }
    return { batches, write }
  }

  /** More versions of the 5 keys: the walk reads 256 hist records a step, so a batch holds at least that many. */
  async function moreVersions(): Promise<void> {
    for (let i = 0; i < 2_000; i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => log.put(`k${(i + j) % 5}`, `w${i + j}`)))
  }

  it('walks the hist index in batches, each with its position in key order, one write at a time, and reports what it removed', async () => {
    await moreVersions()
    const to = log.revision - 4
    const { batches, write } = walkRecorder()
    const result = await thread.walk(to, undefined, { batchRecords: () => BATCH, pauseFactor: 0 }, write)
    expect(result.finished).to.equal(true)
    expect(batches.length).to.be.greaterThan(5)
    const positions = batches.map((b) => b.position!)
    for (let i = 1; i < positions.length; i++) expect(Buffer.compare(positions[i - 1], positions[i]), `batch ${i}`).to.equal(-1)
    // 5 keys written in turn: every version below the target but each key's newest goes; each key was
    // written at or above the target, so its survivor is copied into hist (a put).
    expect(batches.reduce((n, b) => n + b.dels, 0)).to.equal(to - first - 5)
    expect(batches.reduce((n, b) => n + b.puts, 0)).to.equal(5)
    expect(result.removedVersions).to.equal(to - first - 5)

    // Resumed after a batch's position, it goes on from there.
    const rest = walkRecorder()
    const again = await thread.walk(to, positions[2], { batchRecords: () => BATCH, pauseFactor: 0 }, rest.write)
    const after = batches.slice(3)
    expect(rest.batches.reduce((n, b) => n + b.dels, 0)).to.equal(after.reduce((n, b) => n + b.dels, 0))
    expect(again.finished).to.equal(true)
  })

  it("fails the walk with the write's error once no write is in flight, and stops at a batch boundary when asked", async () => {
    await moreVersions()
    const to = log.revision - 4
    const options = { batchRecords: () => BATCH, pauseFactor: 0 }
    const failing = walkRecorder((n) => {
      if (n === 2) throw new Error('the disk is on fire')
    })
    let err: unknown
    await thread.walk(to, undefined, options, failing.write).catch((e: unknown) => (err = e))
    expect((err as Error).message).to.equal('the disk is on fire')
    expect(failing.batches).to.have.length(2)

    // The batch read while the one that asked to stop was written still goes out, and no more.
    const stopping = walkRecorder(() => thread.stop())
    const stopped = await thread.walk(to, undefined, options, stopping.write)
    expect(stopped.finished).to.equal(false)
    expect(stopping.batches.length).to.be.within(1, 2)
  })

  it('refuses a second job while one runs', async () => {
    const slow = recorder()
    const running = thread.scan(
      { to: log.revision, next: first },
      { batchRevisions: () => BATCH, batchesPerRead: 1, pauseFactor: 0 },
      slow.write,
    )
    let err: unknown
    await thread
      .scan({ to: log.revision, next: first }, { batchRevisions: () => BATCH, batchesPerRead: 1, pauseFactor: 0 }, slow.write)
      .catch((e: unknown) => (err = e))
    expect((err as Error).message).to.match(/a job is already running/)
    await running
  })
})

describe('log/level-log: a log with the compaction thread', function () {
  this.timeout(30_000)
  let dir = ''

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-compact-thread-log-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it("runs its compaction thread at compactionThreadNice and leaves the writers' thread as it was", async () => {
    const before = threadNice()
    // Above the nice value this process runs at, and below the default (19) of any other log's thread.
    const target = Math.min(18, before + 13)
    expect(target, 'room to raise the nice value').to.be.greaterThan(before)
    const atNice = () => [...processThreadsNice().values()].filter((n) => n === target).length
    expect(atNice(), 'no thread at the target nice value before the log opens').to.equal(0)
    const log = await openLevelLog({ dir, fsync: 'never', compactionMethod: 'scan', compactionThreadNice: target })
    try {
      await waitFor(`the compaction thread at nice ${target}`, () => atNice() === 1, 5_000)
      expect(threadNice()).to.equal(before)
    } finally {
      await log.close()
    }
    await waitFor('the compaction thread to end with the log', () => atNice() === 0, 5_000)
  })

  it('compacts, closes (ending the thread) and opens again with the floor kept', async () => {
    const log = await openLevelLog({ dir, fsync: 'never', compactionMethod: 'scan', compactionBatchRevisions: 7 })
    for (let i = 0; i < 100; i++) await log.put(`k${i % 3}`, `v${i}`)
    const floor = log.revision - 5
    const result = await log.compact(floor)
    expect(result.removedRevisions).to.be.greaterThan(90)
    await log.close()
    const again = await openLevelLog({ dir, fsync: 'never' })
    try {
      expect(again.compactRevision).to.equal(floor)
      expect((await again.get('k0'))?.value.toString()).to.equal('v99')
    } finally {
      await again.close()
    }
  })

  it('refuses a second open of a directory this process has open (the shared handle would allow it)', async () => {
    const log = await openLevelLog({ dir, fsync: 'never' })
    try {
      let err: unknown
      await openLevelLog({ dir: join(dir, '.'), fsync: 'never' }).catch((e: unknown) => (err = e))
      expect((err as Error).message).to.match(/is already open in this process/)
      await log.put('still', 'writable')
    } finally {
      await log.close()
    }
    // and once closed, it opens again
    const again = await openLevelLog({ dir, fsync: 'never' })
    expect((await again.get('still'))?.value.toString()).to.equal('writable')
    await again.close()
  })
})
