/**
 * The compaction thread: a worker thread that runs a job's reading part on its own event loop and V8
 * heap, sharing the process's LevelDB handle (classic-level's `multithreading`): the scan of method
 * "scan" (compact-scan.ts: reading the log entries, decoding them, planning each batch) or the hist walk
 * of method "drop" (drop-job.ts: reading the hist index, deciding each version). The main thread only
 * writes the batches it is sent (compactor.ts: through the writer's queue, with the job's progress), so
 * the writers' event loop is no longer held up by that JavaScript nor paused by the collections of its
 * garbage.
 *
 *   main thread (Compactor)                        compaction thread (compact-worker.ts)
 *     scan {job, batchRevisions, batchesPerRead} ─▶  scanJob: read, decode, plan batchesPerRead batches
 *                                                ◀─  batches {seq, [last, packed plan]…} (compact-transfer.ts)
 *     writeInTurn: writer.submitRaw(plan + progress),
 *       then a pause, for each batch in turn
 *     written {seq, batchRevisions}              ─▶  the next read's batches (planned meanwhile) go out;
 *       | writeFailed {seq}                           the reads from now on hold spans of batchRevisions
 *                                                ◀─  done {removed…} | failed {message}
 *
 *     walk {to, after, batchRecords}             ─▶  walkHist: read hist records, decide, collect ops
 *                                                ◀─  walkBatch {seq, ops (packed), position}
 *     writer.submitRaw(ops + position), a pause
 *     written {seq, batchSize}                   ─▶  (the next batch, read meanwhile, goes out)
 *                                                ◀─  done {removedVersions, finished} | failed {message}
 *
 * At most one job at a time (the compactor serializes them), and at most one message of batches of it in
 * flight. Each message has a sequence number that its answer repeats: a failed job can leave a write in
 * flight on the main thread, and its late answer must not be taken for the answer to the next job's first.
 * The thread starts when the log opens (warm()) or with the first job, holds the process open only while
 * a job runs, and ends on close(). If it dies, the job fails (and resumes on the next open, like any
 * failed job); the next job starts a new thread.
 */
import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import { writeInTurn, type ScanDeps, type ScanJob, type ScanResult } from './compact-scan.js'
import { unpackOps, unpackPlan, type PackedPlan, type PlannedWrite } from './compact-transfer.js'
import type { WalkResult } from './drop-job.js'
import type { BatchOp } from '../segments.js'

/** Messages to the compaction thread. */
export type ToCompactionThread =
  | { kind: 'scan'; job: ScanJob; batchRevisions: number; batchesPerRead: number }
  | { kind: 'walk'; to: number; after: Uint8Array | undefined; batchRecords: number }
  /** `batchSize`: what the reads from now on take per batch, revisions for a scan and hist records for a walk. */
  | { kind: 'written'; seq: number; batchSize: number }
  | { kind: 'writeFailed'; seq: number; message: string }
  | { kind: 'stop' }
  | { kind: 'close' }

/** Messages from the compaction thread. */
export type FromCompactionThread =
  | { kind: 'batches'; seq: number; batches: Array<{ last: number; plan: PackedPlan }> }
  /** `position`: the last hist key the walk looked at, to be made durable with the ops (drop-job.ts). */
  | { kind: 'walkBatch'; seq: number; ops: ArrayBuffer; position: Uint8Array | undefined }
  | { kind: 'done'; result: ScanResult | WalkResult }
  | { kind: 'failed'; message: string; code?: string }

/** How long close() waits for the thread to close its database handle before terminating it. */
const CLOSE_TIMEOUT_MS = 10_000

/**
 * A scan's settings: the spans per read as scanJob takes them, their size asked again after each read's
 * batches are written, and the pause after each batch's write (writeInTurn's).
 */
export type ScanOptions = Pick<ScanDeps, 'batchRevisions' | 'batchesPerRead'> & { pauseFactor: number }

/** A walk's settings: hist records per batch, asked again after each write, and the pause after each write. */
export interface WalkOptions {
  batchRecords(): number
  pauseFactor: number
}

/** The running job's side on the main thread: how it writes what the thread sends. */
interface Running {
  /** Writes (and pauses after) what one message brought. */
  write(m: Extract<FromCompactionThread, { kind: 'batches' | 'walkBatch' }>): Promise<void>
  batchSize(): number
  resolve(result: ScanResult | WalkResult): void
  reject(err: Error): void
}

export class CompactionThread {
  private worker: Worker | undefined
  private running: Running | undefined

  /** `nice`: the thread's CPU priority (compactionThreadNice), set by the thread itself as it starts. */
  constructor(
    private readonly dir: string,
    private readonly nice: number,
  ) {}

  /**
   * Starts the thread ahead of the first job: starting one (a V8 isolate, its modules, the database
   * handle) takes a core for a moment, and at the start of a job that moment landed on the writers.
   */
  warm(): void {
    this.start()
  }

  /** Runs a job's scan in the thread; `write` makes each batch it plans durable, one after another. */
  scan(job: ScanJob, options: ScanOptions, write: (last: number, plan: PlannedWrite) => Promise<void>): Promise<ScanResult> {
    return this.run(
      {
        write: async (m) => {
          if (m.kind !== 'batches') throw new Error(`compaction thread: a scan got ${m.kind}`)
          // Unpacked in an async function, so that a batch that cannot be unpacked fails the scan, not the process.
          await writeInTurn(m.batches, async (b) => write(b.last, unpackPlan(b.plan)), options.pauseFactor)
        },
        batchSize: options.batchRevisions,
      },
      { kind: 'scan', job, batchRevisions: options.batchRevisions(), batchesPerRead: options.batchesPerRead },
    ) as Promise<ScanResult>
  }

  /**
   * Runs a job's hist walk (drop-job.ts: walkHist) below `to` from after `after` in the thread; `write`
   * makes each batch's ops durable together with the walk's position, one batch after another.
   */
  walk(
    to: number,
    after: Buffer | undefined,
    options: WalkOptions,
    write: (ops: BatchOp[], position: Buffer | undefined) => Promise<void>,
  ): Promise<WalkResult> {
    return this.run(
      {
        write: async (m) => {
          if (m.kind !== 'walkBatch') throw new Error(`compaction thread: a walk got ${m.kind}`)
          const position = m.position && Buffer.from(m.position.buffer, m.position.byteOffset, m.position.byteLength)
          await writeInTurn([m.ops], async (ops) => write(unpackOps(ops), position), options.pauseFactor)
        },
        batchSize: options.batchRecords,
      },
      { kind: 'walk', to, after, batchRecords: options.batchRecords() },
    ) as Promise<WalkResult>
  }

  /** Asks a running job to end once the batches it has sent are written (for a scan, one read's: compactionBatchesPerRead). */
  stop(): void {
    if (this.running !== undefined) this.post({ kind: 'stop' })
  }

  /** Ends the thread (after any job has ended): it closes its database handle first. */
  async close(): Promise<void> {
    const worker = this.worker
    if (worker === undefined) return
    this.worker = undefined
    const exited = once(worker, 'exit')
    worker.postMessage({ kind: 'close' } satisfies ToCompactionThread)
    const timer = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS)
    try {
      await exited
    } finally {
      clearTimeout(timer)
    }
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker
    const worker = new Worker(new URL('./compact-worker.js', import.meta.url), { workerData: { dir: this.dir, nice: this.nice } })
    worker.on('message', (m: FromCompactionThread) => this.receive(m))
    worker.on('error', (err) => this.fail(err))
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined
      this.fail(new Error(`compaction thread exited (code ${code})`))
    })
    worker.unref()
    this.worker = worker
    return worker
  }

  private run(running: Omit<Running, 'resolve' | 'reject'>, start: ToCompactionThread): Promise<ScanResult | WalkResult> {
    if (this.running !== undefined) return Promise.reject(new Error('compaction thread: a job is already running'))
    const worker = this.start()
    return new Promise<ScanResult | WalkResult>((resolve, reject) => {
      this.running = { ...running, resolve, reject }
      worker.ref()
      this.post(start)
    }).finally(() => {
      this.running = undefined
      this.worker?.unref()
    })
  }

  private receive(m: FromCompactionThread): void {
    const running = this.running
    if (running === undefined) return
    switch (m.kind) {
      case 'batches':
      case 'walkBatch':
        running.write(m).then(
          () => this.post({ kind: 'written', seq: m.seq, batchSize: running.batchSize() }),
          (err: unknown) => this.post({ kind: 'writeFailed', seq: m.seq, message: err instanceof Error ? err.message : String(err) }),
        )
        break
      case 'done':
        running.resolve(m.result)
        break
      case 'failed':
        running.reject(Object.assign(new Error(m.message), m.code === undefined ? {} : { code: m.code }))
        break
    }
  }

  /** The thread died: a running job fails. */
  private fail(err: Error): void {
    this.running?.reject(err)
  }

  private post(m: ToCompactionThread): void {
    this.worker?.postMessage(m)
  }
}
