/**
 * Reading a LevelDB iterator to its end, in steps. kvlog's build of classic-level (log/level/native/) has
 * Iterator#readSync: a step read on the main thread into one buffer of length-prefixed records, with no
 * round trip through LevelDB's thread pool and no buffer per key and value. The prebuilt addon has only
 * nextv, through the thread pool, which the reads fall back to.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Db } from './latest-view.js'

type LevelIterator = ReturnType<Db['iterator']>
type WithReadSync = LevelIterator & { readSync?: (size: number, maxBytes: number) => Buffer }

/** Receives a record: `key` and `value` are views into the step's buffer, valid as long as it is kept. */
export type RecordVisit = (key: Buffer, value: Buffer) => void

/**
 * How much one synchronous step reads. The event loop waits for the whole step (and for the disk, for
 * blocks not in LevelDB's cache or the page cache), so a step is bounded: a few hundred microseconds of
 * reading from cache, and a 1,000-key list of small values still in one step. Between steps the read
 * yields to the event loop, so a range of any size never holds it for longer than a step.
 */
export const SYNC_STEP_BYTES = 512 * 1024
export const SYNC_STEP_RECORDS = 4096

/** Whether `it` can be read synchronously (kvlog's build of classic-level). */
export function hasReadSync(it: LevelIterator): boolean {
  return typeof (it as WithReadSync).readSync === 'function'
}

/**
 * Calls `visit` with each record `it` yields until its end, `records` at most per thread-pool step on the
 * fallback path (the iterator's own highWaterMarkBytes bounds those steps' bytes). Does not close `it`.
 */
export function eachRecord(it: LevelIterator, records: number, visit: RecordVisit): Promise<void> {
  return readToEnd(
    it,
    records,
    (entries) => {
      for (const [k, v] of entries) visit(k, v)
    },
    (step) => visitStep(step, visit),
  )
}

/** How many records `it` yields until its end (their bytes are not looked at). Does not close `it`. */
export async function countRecords(it: LevelIterator, records: number): Promise<number> {
  let n = 0
  await readToEnd(
    it,
    records,
    (entries) => (n += entries.length),
    (step) => {
      for (let pos = 0; pos < step.length; n++) pos = recordEnd(step, pos)
    },
  )
  return n
}

/** The records of a readSync step: [key length u32 LE][key][value length u32 LE][value], repeated. */
export function visitStep(step: Buffer, visit: RecordVisit): void {
  for (let pos = 0; pos < step.length;) {
    const keyEnd = pos + 4 + step.readUInt32LE(pos)
    const end = recordEnd(step, pos)
    visit(step.subarray(pos + 4, keyEnd), step.subarray(keyEnd + 4, end))
    pos = end
  }
}

/** Where the record at `pos` of a readSync step ends. */
function recordEnd(step: Buffer, pos: number): number {
  const keyEnd = pos + 4 + step.readUInt32LE(pos)
  return keyEnd + 4 + step.readUInt32LE(keyEnd)
}

/** Reads `it` to its end: synchronous steps where it can, else nextv steps of `records`. */
async function readToEnd(
  it: LevelIterator,
  records: number,
  onEntries: (entries: Array<[Buffer, Buffer]>) => void,
  onStep: (step: Buffer) => void,
): Promise<void> {
  const readSync = (it as WithReadSync).readSync
  if (typeof readSync !== 'function') {
    while (true) {
      const entries = (await it.nextv(records)) as Array<[Buffer, Buffer]>
      if (entries.length === 0) return
      onEntries(entries)
    }
  }
  for (let first = true; ; first = false) {
    if (!first) await nextTurn()
    const step = readSync.call(it, SYNC_STEP_RECORDS, SYNC_STEP_BYTES)
    if (step.length === 0) return
    onStep(step)
  }
}
