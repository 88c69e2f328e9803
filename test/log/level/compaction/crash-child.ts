/**
 * The victim of the compaction crash test (crash.test.ts): `node crash-child.js <dir> <R> <cycle>`.
 *
 * Opens the LevelLog on <dir> (fsync always, compaction batches of 50 revisions), starts three writers
 * (crash-workload.ts), and once they have HEAD_START_ACKS writes acknowledged, compacts to R — or, if the
 * floor is already R because an interrupted compaction was found on open, lets that resume — and keeps
 * writing until it is killed. (The parent kills only after the compaction starts, so every cycle has
 * acknowledged writes to check, however early its kill comes.) One JSON object per line on stdout, each
 * with a single write (a pipe write is synchronous on Linux, so a printed line survives SIGKILL):
 *
 *   {"ready":true,"revision":N,"floor":F,"job":{target,progress}|null}
 *   {"compacting":R}  or  {"resuming":R}         the compaction starts now
 *   {"i":w,"n":seq,"ops":[[key,value|null],...]}  writer w is about to write (an intent)
 *   {"a":w,"n":seq,"rev":r}                      ... and it is acknowledged at revision r
 *   {"p":next,"durable":d?}                      the compaction's progress (the next revision to remove);
 *                                                `durable`: a state with progress >= d is on disk
 *   {"done":R}                                   compact(R) resolved: finished and durable
 *
 * Why `durable` is safe to claim: the job's progress lives in memory from the moment its batch is built,
 * before that batch is durable; but batches go through the writer's queue one at a time, so once a newer
 * progress is visible, the batch that carried the previous one has been written.
 */
import { openLevelLog } from '../../../../log/level/level-log.js'
import { CRASH_LOG_OPTIONS, HEAD_START_ACKS, KeyWriter, WRITERS } from './crash-workload.js'
import { rng } from '../../../compaction/helpers.js'

function emit(line: unknown): void {
  process.stdout.write(`${JSON.stringify(line)}\n`)
}

async function main(): Promise<void> {
  const [dir, rArg, cycle = '0', method = 'drop'] = process.argv.slice(2)
  const R = Number(rArg)
  if (dir === undefined || !Number.isSafeInteger(R)) throw new Error('usage: crash-child.js <dir> <R> [cycle]')
  const log = await openLevelLog({ dir, ...CRASH_LOG_OPTIONS, compactionMethod: method === 'scan' ? 'scan' : 'drop' })
  const status = await log.status()
  emit({ ready: true, revision: log.revision, floor: log.compactRevision, job: status.compaction ?? null })

  const writers = await Promise.all(
    Array.from({ length: WRITERS }, (_, w) => KeyWriter.resume(log, w, rng(Number(cycle) * 100 + w), `c${cycle}`)),
  )
  let acked = 0
  let headStart!: () => void
  const headStarted = new Promise<void>((resolve) => (headStart = resolve))
  const write = async (writer: KeyWriter): Promise<void> => {
    for (;;) {
      const { seq, ops } = writer.next()
      emit({ i: writer.id, n: seq, ops })
      const rev = await writer.write(log, ops)
      emit({ a: writer.id, n: seq, rev })
      if (++acked === HEAD_START_ACKS) headStart()
    }
  }
  const writing = writers.map(write)
  await headStarted

  let finished = false
  const watchProgress = async (): Promise<void> => {
    let last: number | undefined
    while (!finished) {
      const job = (await log.status()).compaction
      if (job !== undefined && job.progress !== last) {
        emit(last === undefined ? { p: job.progress } : { p: job.progress, durable: last })
        last = job.progress
      }
      await new Promise((r) => setImmediate(r))
    }
  }

  // A compact() queued behind the resumed job settles when that job is done: COMPACTED, as the floor is R.
  const compaction =
    log.compactRevision < R
      ? (emit({ compacting: R }), log.compact(R))
      : (emit({ resuming: R }),
        log.compact(R).catch((err: { code?: string }) => {
          if (err.code !== 'COMPACTED') throw err
        }))
  const progress = watchProgress()
  await Promise.all([
    ...writing,
    compaction.then(() => {
      finished = true
      emit({ done: R })
    }),
    progress,
  ])
}

main().catch((err: unknown) => {
  process.stderr.write(`crash-child failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
