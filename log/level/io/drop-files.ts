/**
 * LevelDB's table files dropped by key range: ClassicLevel#dropFilesInRange, which kvlog's build of
 * classic-level adds (log/level/native/leveldb/: DB::DropFilesInRange in LevelDB). It removes the files
 * whose keys all lie in [start, end) in one edit of the database's version, without reading them; what
 * is left of the range is the caller's to delete. A build without it (a prebuilt addon, when the native
 * build failed) drops nothing, and the caller's deletions do all the work.
 */
import type { Db } from '../latest-view.js'

type WithDropFiles = Db & { dropFilesInRange?: (start: Buffer, end: Buffer) => Promise<[number, number]> }

export interface DroppedFiles {
  files: number
  bytes: number
}

export async function dropFilesInRange(db: Db, start: Buffer, end: Buffer): Promise<DroppedFiles> {
  const drop = (db as WithDropFiles).dropFilesInRange
  if (typeof drop !== 'function') return { files: 0, bytes: 0 }
  const [files, bytes] = await drop.call(db, start, end)
  return { files, bytes }
}
