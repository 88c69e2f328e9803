/**
 * The compaction thread's entry point (compact-thread.ts has the protocol and the main thread's side).
 * It opens the database the main thread has open (the same LevelDB handle, shared through classic-level's
 * `multithreading`) and runs each job's scan, sending every planned batch to the main thread to be
 * written. It never writes to the database itself. It runs at a lower CPU priority than the writers
 * (compactionThreadNice).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { ClassicLevel } from 'classic-level'
import { SingleOpEntries } from './compact-batch.js'
import { scanJob, type PlannedBatch } from './compact-scan.js'
import type { FromCompactionThread, ToCompactionThread } from './compact-thread.js'
import { packPlan } from './compact-transfer.js'
import type { Db } from '../latest-view.js'
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
/** The batches the main thread is writing: one message at most (scanJob waits for each before sending the next). */
let inflight: { seq: number; resolve(): void; reject(err: Error): void } | undefined
/** The size of the spans the running scan reads next, as the main thread last said (compact-thread.ts). */
let batchRevisions = 1
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
  const seq = ++sent
  return new Promise<void>((resolve, reject) => {
    inflight = { seq, resolve, reject }
    send({ kind: 'batches', seq, batches: packed }, transfer)
  })
}

async function scan(m: Extract<ToCompactionThread, { kind: 'scan' }>): Promise<void> {
  stopping = false
  try {
    await opened
    batchRevisions = m.batchRevisions
    const result = await scanJob(
      {
        db,
        batchRevisions: () => batchRevisions,
        batchesPerRead: m.batchesPerRead,
        singles,
        stopping: () => stopping,
        write,
      },
      m.job,
    )
    send({ kind: 'done', result })
  } catch (err) {
    const e = err as Error & { code?: unknown }
    send({ kind: 'failed', message: e.message, ...(typeof e.code === 'string' ? { code: e.code } : {}) })
  }
}

port.on('message', (m: ToCompactionThread) => {
  switch (m.kind) {
    case 'scan':
      void scan(m)
      break
    case 'written':
    case 'writeFailed':
      // The answer to the batches of a scan that failed meanwhile is not this one's.
      if (inflight?.seq !== m.seq) break
      if (m.kind === 'written') {
        batchRevisions = m.batchRevisions
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
