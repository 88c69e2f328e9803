/**
 * Snapshots: a consistent copy of the whole database (every table: log, kv, hist, meta — so revisions,
 * the compact revision, segments, leases and cursors come back as they were), as one byte stream:
 *
 *   "KVLOGSNAP1\n" ‖ frame* ‖ FFFFFFFF ‖ zero padding ‖ sha256(everything before)
 *   frame = u32 keyLength ‖ key ‖ u32 valueLength ‖ value
 *
 * The padding makes the checksummed part a multiple of 512 bytes, so the whole stream is 32 bytes over a
 * multiple of 512: the shape etcdctl's `snapshot save` checks for before it accepts a download.
 *
 * Written from one LevelDB snapshot, so writes go on meanwhile and the copy is exactly the state at the
 * snapshot's revision. The trailing checksum (like etcd's snapshot hash) lets a restore refuse a truncated
 * or corrupted file before it writes anything it would have to trust.
 */
import { createHash } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { ClassicLevel } from './classic-level.js'
import { KvlogError } from '../errors.js'
import type { Db, Snapshot } from './latest-view.js'

const SNAPSHOT_MAGIC = Buffer.from('KVLOGSNAP1\n', 'ascii')
const HASH_BYTES = 32
const END_MARK = 0xffffffff
const ALIGN = 512
const RESTORE_BATCH_BYTES = 4 * 1024 * 1024

/** Frames every record of `snapshot` into chunks of about `chunkBytes`, then the end mark, padding, checksum. */
export async function* snapshotChunks(db: Db, snapshot: Snapshot, chunkBytes: number): AsyncGenerator<Buffer> {
  const hash = createHash('sha256')
  let parts: Buffer[] = [SNAPSHOT_MAGIC]
  let size = SNAPSHOT_MAGIC.length
  let hashed = 0
  const flush = (): Buffer => {
    const chunk = Buffer.concat(parts, size)
    hash.update(chunk)
    hashed += chunk.length
    parts = []
    size = 0
    return chunk
  }
  for await (const [key, value] of db.iterator({ snapshot, keyEncoding: 'buffer', valueEncoding: 'buffer' })) {
    const head = Buffer.allocUnsafe(4)
    head.writeUInt32BE(key.length)
    const mid = Buffer.allocUnsafe(4)
    mid.writeUInt32BE(value.length)
    parts.push(head, key, mid, value)
    size += 8 + key.length + value.length
    if (size >= chunkBytes) yield flush()
  }
  const end = Buffer.alloc(4)
  end.writeUInt32BE(END_MARK)
  parts.push(end)
  size += 4
  const padding = Buffer.alloc((ALIGN - ((hashed + size) % ALIGN)) % ALIGN)
  parts.push(padding)
  size += padding.length
  yield flush()
  yield hash.digest()
}

export interface RestoreResult {
  records: number
  bytes: number
}

/**
 * Writes a snapshot stream into a new database at `dir` (which must not exist or be empty). The checksum
 * is verified before the last batch is written; on a mismatch or a truncated stream nothing usable is
 * left (the caller removes `dir`). `onProgress` gets the bytes read so far.
 */
export async function restoreSnapshot(
  source: AsyncIterable<Buffer>,
  dir: string,
  onProgress?: (bytes: number) => void,
): Promise<RestoreResult> {
  const existing = await readdir(dir).catch(() => [])
  if (existing.length > 0) throw new KvlogError('INVALID_ARGUMENT', `restore: ${dir} is not empty`, { field: 'dataDir' })
  const db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
  await db.open()
  try {
    const hash = createHash('sha256')
    let pending: Buffer = Buffer.alloc(0)
    let bytes = 0
    let records = 0
    let checkedMagic = false
    let ended = false
    let batch = db.batch()
    let batchBytes = 0
    for await (const chunk of source) {
      bytes += chunk.length
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      if (!checkedMagic) {
        if (pending.length < SNAPSHOT_MAGIC.length) continue
        if (!pending.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC)) throw corrupt('not a kvlog snapshot')
        hash.update(SNAPSHOT_MAGIC)
        pending = pending.subarray(SNAPSHOT_MAGIC.length)
        checkedMagic = true
      }
      // Parse whole frames, keeping back the last 32 bytes seen: they may be the checksum.
      const usable = pending.length - HASH_BYTES
      let offset = 0
      while (!ended && usable - offset >= 4) {
        const keyLength = pending.readUInt32BE(offset)
        if (keyLength === END_MARK) {
          ended = true
          offset += 4
          break
        }
        if (usable - offset < 8) break
        if (usable - offset < 8 + keyLength) break
        const valueLength = pending.readUInt32BE(offset + 4 + keyLength)
        const end = offset + 8 + keyLength + valueLength
        if (end > usable) break
        batch.put(pending.subarray(offset + 4, offset + 4 + keyLength), pending.subarray(offset + 8 + keyLength, end))
        records++
        offset = end
      }
      // After the end mark only padding (zeros) comes before the checksum.
      if (ended && usable > offset) {
        if (pending.subarray(offset, usable).some((b) => b !== 0)) throw corrupt('data after the end mark')
        offset = usable
      }
      hash.update(pending.subarray(0, offset))
      batchBytes += offset
      pending = pending.subarray(offset)
      if (batchBytes >= RESTORE_BATCH_BYTES) {
        await batch.write()
        batch = db.batch()
        batchBytes = 0
      }
      onProgress?.(bytes)
    }
    if (!checkedMagic) throw corrupt('the stream is too short')
    if (!ended || pending.length !== HASH_BYTES) throw corrupt('the stream is truncated')
    if (!hash.digest().equals(pending)) throw corrupt('checksum mismatch')
    await batch.write({ sync: true })
    return { records, bytes }
  } finally {
    await db.close()
  }
}

function corrupt(what: string): KvlogError {
  return new KvlogError('INVALID_ARGUMENT', `restore: ${what}`, { field: 'snapshot' })
}
