/**
 * LevelDB's compactRange, started when no memtable is being flushed, so that it does not hold up writes.
 *
 * LevelDB's CompactRange (1.20, in classic-level) begins by flushing the memtable: it sends an empty write
 * through the write queue that forces a switch to a new memtable. If the previous memtable is still being
 * written out to a table file at that moment, that forced write waits at the head of the queue until the
 * flush is done, and every write queued behind it waits too. During a large compaction the deletions fill
 * the memtable every few seconds, so the compaction's closing compactRange often lands in a flush:
 * bench:compaction --trace showed one long stall of a writers' batch right when the scan ended, holding
 * about half of the whole compaction's slow puts.
 *
 * LevelDB does not say whether a flush is running, but its directory does: a switch creates the new
 * write-ahead log (NNN.log) at once, and the old one is deleted only when its memtable's table file is
 * written. So two or more *.log files mean a flush in progress. We wait (polling, bounded) until one is
 * left, then call compactRange: its forced switch then only opens a new file.
 *
 *   writes ──▶ memtable full ──▶ switch: 000012.log created ──▶ flush ──▶ 000009.log deleted
 *                                           └────────── a forced switch here waits, and so do writes ──┘
 *
 * A flush could still start between the look and the call; that is rare (flushes are seconds apart
 * under the heaviest load) and costs what it cost before. `npm run bench:flush-stall` measures both ways:
 * started as soon as a flush shows, a third of the compactRanges held a write far longer than the flush
 * alone does; started after it, none did, as without a compactRange (docs/benchmarks.md).
 */
import { readdir } from 'node:fs/promises'
import type { Db } from '../latest-view.js'

const WRITE_AHEAD_LOG = /^\d+\.log$/
/** How often the directory is looked at while a flush runs (a flush takes a large multiple of this). */
const POLL_MS = 5
/** The longest wait for a flush to end before compacting anyway. */
const MAX_WAIT_MS = 10_000

export interface FlushWait {
  pollMs?: number
  maxWaitMs?: number
}

/** Whether LevelDB's directory shows a memtable being flushed (more than one write-ahead log). */
export async function flushing(dir: string): Promise<boolean> {
  const names = await readdir(dir).catch(() => [] as string[])
  let logs = 0
  for (const name of names) if (WRITE_AHEAD_LOG.test(name)) logs++
  return logs > 1
}

/** Resolves once no memtable flush is running in `dir`, or after maxWaitMs; true if it had to wait. */
export async function flushDone(dir: string, { pollMs = POLL_MS, maxWaitMs = MAX_WAIT_MS }: FlushWait = {}): Promise<boolean> {
  const end = Date.now() + maxWaitMs
  let waited = false
  while ((await flushing(dir)) && Date.now() < end) {
    waited = true
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
  return waited
}

/** db.compactRange(start, end), once no memtable flush is running (see above). */
export async function compactRangeBetweenFlushes(db: Db, dir: string, start: Buffer, end: Buffer, wait?: FlushWait): Promise<void> {
  await flushDone(dir, wait)
  await db.compactRange(start, end)
}
