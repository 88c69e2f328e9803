/**
 * etcd's HashKV over a store: CRC-32 (IEEE, as etcd) of every key's key, value, create and mod revision
 * and version at one revision. The etcd door answers Hash/HashKV with it, and the cluster engine's
 * corruption check compares members' copies with it (jetstream/corruption-check.ts).
 */
import { crc32 } from 'node:zlib'
import type { Log } from './backend.js'

const ALL_KEYS = Buffer.from([0])
/** Keys per read while hashing, so a big store is hashed in bounded memory. */
const HASH_PAGE = 1000

/**
 * CRC-32 (IEEE, as etcd) over every key's key, value, create and mod revision and version at `revision`
 * (0 = the latest), read page by page at one revision. Equal states give equal hashes.
 */
export async function hashState(log: Pick<Log, 'range'>, revision: number): Promise<{ hash: number; revision: number }> {
  let hash = 0
  let at = revision
  let from = ALL_KEYS
  for (;;) {
    const page = await log.range(from, { rangeEnd: ALL_KEYS, revision: at, limit: HASH_PAGE })
    at = page.revision
    for (const kv of page.kvs) {
      const meta = Buffer.allocUnsafe(24)
      meta.writeBigUInt64BE(BigInt(kv.createRevision), 0)
      meta.writeBigUInt64BE(BigInt(kv.modRevision), 8)
      meta.writeBigUInt64BE(BigInt(kv.version), 16)
      hash = crc32(kv.value, crc32(meta, crc32(kv.key, hash)))
    }
    if (!page.more) return { hash, revision: at }
    from = Buffer.concat([page.kvs[page.kvs.length - 1].key, ALL_KEYS])
  }
}
