/**
 * The bytes of a store's data files, as status reports them (dbSize) and the quota compares them: tables
 * (*.ldb, *.sst) and the write-ahead log (*.log). LevelDB's text info log (LOG, LOG.old), LOCK, CURRENT
 * and MANIFEST are left out: the info log grows with every compaction, so counting it would make
 * reclaiming space look like growth (and could hold the NOSPACE alarm on).
 *
 * A write-ahead log allocated ahead of its records (leveldbWalPreallocateBytes) counts up to its last
 * record, not to its allocated size: otherwise every store would look a chunk (4 MiB) bigger than its
 * data, and a small quota would raise NOSPACE on an empty store. LevelDB's log is a sequence of 32 KiB
 * blocks, each starting with a record header whose type byte (offset 6) is 1-4; the space allocated
 * past the last record reads as zeros. So the records end within the last block whose header has a
 * type, which a binary search over the blocks finds in a few one-byte reads (an overestimate by less
 * than one block).
 */
import { open, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** LevelDB's log block (db/log_format.h, kBlockSize) and where a block's header keeps its type. */
const LOG_BLOCK = 32 * 1024
const HEADER_TYPE_OFFSET = 6

export async function dataFileBytes(dir: string): Promise<number> {
  let total = 0
  for (const name of await readdir(dir)) {
    if (!/\.(ldb|sst|log)$/.test(name)) continue
    const path = join(dir, name)
    const s = await stat(path).catch(() => undefined)
    if (!s?.isFile()) continue
    total += name.endsWith('.log') ? await logRecordBytes(path, s.size).catch(() => s.size) : s.size
  }
  return total
}

/** The bytes of a LevelDB log of `size` bytes up to the end of the block holding its last record. */
export async function logRecordBytes(path: string, size: number): Promise<number> {
  if (size <= LOG_BLOCK) return size
  const file = await open(path, 'r')
  try {
    const type = Buffer.alloc(1)
    // Blocks below lo hold records; blocks from hi on do not.
    let lo = 0
    let hi = Math.ceil(size / LOG_BLOCK)
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const { bytesRead } = await file.read(type, 0, 1, mid * LOG_BLOCK + HEADER_TYPE_OFFSET)
      if (bytesRead === 1 && type[0] !== 0) lo = mid + 1
      else hi = mid
    }
    return Math.min(size, lo * LOG_BLOCK)
  } finally {
    await file.close()
  }
}
