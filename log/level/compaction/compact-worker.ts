/**
 * The compaction thread's entry point (compact-thread.ts has the protocol and the main thread's side).
 * It opens the database the main thread has open (the same LevelDB handle, shared through classic-level's
 * `multithreading`) and runs each job's scan or hist walk, sending every batch to the main thread to be
 * written. It never writes to the database itself. It runs at a lower CPU priority than the writers
 * (compactionThreadNice).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { ClassicLevel } from '../classic-level.js'
import { SingleOpEntries } from './compact-batch.js'
import { scanJob, type PlannedBatch } from './compact-scan.js'
import type { FromCompactionThread, ToCompactionThread } from './compact-thread.js'
import { packOps, packPlan } from './compact-transfer.js'
import { walkHist } from './drop-job.js'
import type { Db } from '../latest-view.js'
import type { BatchOp } from '../segments.js'
import { lowerThreadPriority } from '../io/thread-priority.js'

const port = parentPort!
const { dir, nice } = workerData as { dir: string; nice: number }
// Before any work: the scan's JavaScript and its garbage give the cores to the writers (thread-priority.ts).
lowerThreadPriority(nice)
const db: Db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer', multithreading: true })
// Opened now, not with the first job (compact-thread.ts: warm()); a failure is the first scan's to report.
const opened = db.open()
opened.catch(() => undefined)
/** Lives as long as the thread, as the compactor's own does on the main thread (compact-batch.ts). */
const singles = new SingleOpEntries()
let stopping = false
/** The batches the main thread is writing: one message at most (each job waits for it before sending the next). */
let inflight: { seq: number; resolve(): void; reject(err: Error): void } | undefined
/** The size of the running job's next batches, as the main thread last said (compact-thread.ts). */
let batchSize = 1
/** Numbers the messages of batches sent, so that an answer is matched to its message (compact-thread.ts). */
let sent = 0

function send(m: FromCompactionThread, transfer: ArrayBuffer[] = []): void {
  port.postMessage(m, transfer)
}

function write(batches: PlannedBatch[]): Promise<void> {
  const transfer: ArrayBuffer[] = []
  const packed = batches.map(({ last, plan }) => {
    const p = packPlan(plan)
    transfer.push(...p.transfer)
    return { last, plan: p.packed }
  })
  return inFlight((seq) => send({ kind: 'batches', seq, batches: packed }, transfer))
}

/** Sends a message of batches (`post` with its sequence number); resolves once the main thread has written it. */
function inFlight(post: (seq: number) => void): Promise<void> {
  const seq = ++sent
  return new Promise<void>((resolve, reject) => {
    inflight = { seq, resolve, reject }
    post(seq)
  })
}

/**
 * A walk's batch goes out as soon as the one before is written, and the walk reads the next meanwhile
 * (its records lie after this batch's position, which nothing else changes); the last is awaited before
 * the walk reports.
 */
let walkWritten: Promise<void> = Promise.resolve()
async function writeWalkBatch(ops: BatchOp[], position: Buffer | undefined): Promise<void> {
  await walkWritten
  const packed = packOps(ops)
  walkWritten = inFlight((seq) => send({ kind: 'walkBatch', seq, ops: packed, position }, [packed]))
  // A failed write is reported by the next batch's wait, or by the walk's last.
  walkWritten.catch(() => undefined)
}

async function scan(m: Extract<ToCompactionThread, { kind: 'scan' }>): Promise<void> {
  stopping = false
  try {
    await opened
    batchSize = m.batchRevisions
    const result = await scanJob(
      {
        db,
        batchRevisions: () => batchSize,
        batchesPerRead: m.batchesPerRead,
        singles,
        stopping: () => stopping,
        write,
      },
      m.job,
    )
    send({ kind: 'done', result })
  } catch (err) {
    fail(err)
  }
}

async function walk(m: Extract<ToCompactionThread, { kind: 'walk' }>): Promise<void> {
  stopping = false
  walkWritten = Promise.resolve()
  try {
    await opened
    batchSize = m.batchRecords
    const after = m.after && Buffer.from(m.after.buffer, m.after.byteOffset, m.after.byteLength)
    // The main thread pauses after each write (compact-thread.ts), so none here.
    const result = await walkHist(
      { db, batchRecords: () => batchSize, pauseFactor: 0, stopping: () => stopping, write: writeWalkBatch },
      m.to,
      after,
    )
    await walkWritten
    send({ kind: 'done', result })
  } catch (err) {
    // Reported once no write of this walk is in flight on the main thread.
    await walkWritten.catch(() => undefined)
    fail(err)
  }
}

function fail(err: unknown): void {
  const e = err as Error & { code?: unknown }
  send({ kind: 'failed', message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) })
}

port.on('message', (m: ToCompactionThread) => {
  switch (m.kind) {
    case 'scan':
      void scan(m)
      break
    case 'walk':
      void walk(m)
      break
    case 'written':
    case 'writeFailed':
      // The answer to the batches of a scan that failed meanwhile is not this one's.
      if (inflight?.seq !== m.seq) break
      if (m.kind === 'written') {
        batchSize = m.batchSize
        inflight.resolve()
      } else inflight.reject(new Error(m.message))
      inflight = undefined
      break
    case 'stop':
      stopping = true
      break
    case 'close':
      // Closing releases this thread's share of the handle; the main thread closes the database after.
      void db.close().finally(() => port.close())
      break
  }
})
