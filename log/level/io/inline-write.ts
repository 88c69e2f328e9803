/**
 * LevelDB's write on the calling thread: ClassicLevel#batchSync, which kvlog's build of classic-level has
 * (log/level/native/). The writer uses it for a small group while nothing else is being written: the
 * thread-pool write costs two thread hand-offs (to LevelDB's thread and back), more than the write itself
 * when one put waits for its fsync, and the event loop has nothing else to do meanwhile.
 */
import type { Db } from '../latest-view.js'
import type { BatchOp } from '../segments.js'

/** Writes ops as one atomic batch before returning (fsynced if `sync`); throws what LevelDB reports. */
export type InlineWrite = (ops: readonly BatchOp[], sync: boolean) => void

type WithBatchSync = Db & { batchSync?: (ops: readonly BatchOp[], options: { sync: boolean }) => void }

/** The inline write of `db`, or undefined where the prebuilt addon (thread-pool writes only) is loaded. */
export function inlineWrite(db: Db): InlineWrite | undefined {
  const batchSync = (db as WithBatchSync).batchSync
  if (typeof batchSync !== 'function') return undefined
  return (ops, sync) => batchSync.call(db, ops, { sync })
}
