/**
 * Grows a kvlog store for bench:scale offline, through the import path (log/level/import.ts: the records a
 * commit leaves, so `kvlog serve` then opens it as any other store). Every key is written twice, one
 * revision per put (a create, then an update: two versions of history per key), with values of 1–2 KiB
 * that do not compress (slices of random bytes), until the writes add up to the target size.
 */
import { randomBytes } from 'node:crypto'
import { OP_PUT, type LoggedOp } from '../../log/ops.js'
import { StoreImport } from '../../log/level/import.js'

/** The keys' names: PREFIX + the index zero-padded to 8 digits (load-worker.ts's keys, so its loads hit them). */
export const SCALE_PREFIX = '/bench/scale/'
export const scaleKey = (i: number): Buffer => Buffer.from(SCALE_PREFIX + i.toString().padStart(8, '0'))

const MIN_VALUE = 1024
const MAX_VALUE = 2048
/** Bytes a version adds to the store: its value twice (the log entry and the kv record) and the records' keys and headers. */
const BYTES_PER_VERSION = 2 * ((MIN_VALUE + MAX_VALUE) / 2) + 150

/** The number of keys whose two versions each make about `bytes` of store. */
export function keysFor(bytes: number): number {
  return Math.max(1, Math.round(bytes / (2 * BYTES_PER_VERSION)))
}

export interface Grown {
  keys: number
  revisions: number
  /** Bytes of keys and values written (before LevelDB's own overhead and compression). */
  written: number
}

/**
 * The value of key i at a version: 1–2 KiB, its length a function of (i, version), its bytes a slice of
 * random bytes (a new pool per call of scaleValues), so that it does not compress.
 */
export function scaleValues(): (i: number, version: number) => Buffer {
  const pool = randomBytes(1 << 22)
  return (i, version) => {
    const length = MIN_VALUE + ((i * 7919 + version * 104_729) % (MAX_VALUE - MIN_VALUE + 1))
    const start = (i * 2_654_435_761 + version * 40_503) % (pool.length - length)
    return pool.subarray(start, start + length)
  }
}

/** Builds the store in `dir` (missing or empty) with `keys` keys of two versions each. */
export async function growStore(dir: string, keys: number, onProgress: (done: number, total: number) => void): Promise<Grown> {
  const valueOf = scaleValues()
  const store = await StoreImport.create(dir, { floor: 0, timestamp: Date.now() })
  let revision = store.revision
  let written = 0
  const total = 2 * keys
  try {
    for (let version = 1; version <= 2; version++) {
      for (let i = 0; i < keys; i++) {
        const key = scaleKey(i)
        const value = valueOf(i, version)
        const op: LoggedOp = {
          kind: OP_PUT,
          key,
          value,
          createRevision: createRevisionOf(i),
          version,
          lease: 0n,
          prevRevision: version === 1 ? 0 : createRevisionOf(i),
        }
        const prevKv =
          version === 1
            ? undefined
            : { key, value: valueOf(i, 1), createRevision: createRevisionOf(i), modRevision: createRevisionOf(i), version: 1, lease: 0n }
        revision++
        await store.append(revision, Date.now(), [{ op, prevKv }])
        written += key.length + value.length
        const done = (version - 1) * keys + i + 1
        if (done % 10_000 === 0) onProgress(done, total)
      }
    }
    await store.finish([])
  } catch (err) {
    await store.abandon()
    throw err
  }
  onProgress(total, total)
  return { keys, revisions: revision, written }

  /** Key i was created by the (i + 1)-th put: the store starts at revision 1. */
  function createRevisionOf(i: number): number {
    return 2 + i
  }
}
