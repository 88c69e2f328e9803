/**
 * A range read in steps at one revision, for a door that streams it: each step is one Log.rangeInto of a
 * chunk of kvs (chunk-size.ts), handed kv by kv to the door's sink, so the server holds one chunk's
 * encoding at a time whatever the range holds. The first step pins the revision (the latest unless the
 * options give one); later steps read that revision from the key after the last kv taken.
 *
 * The sink answers whether it took the kv: false ends the range there (the door has what it wants). A step
 * whose kvs come out larger than the target stops taking at it; the next step reads the rest again.
 */
import type { Log } from '../log/backend.js'
import type { KvSink, RangeOptions } from '../log/types.js'
import { FIRST_CHUNK, kvBytes, nextChunk } from './chunk-size.js'

/** A KvSink that answers whether it took the kv. */
export type TakingSink = (...kv: Parameters<KvSink>) => boolean

export interface RangeStep {
  /** The revision every step reads. */
  revision: number
  /** The count of the first step: the keys from the range's start at that revision. */
  count: number
  /** How many kvs the sink took, all steps together. */
  taken: number
  /** Whether this is the last step. */
  last: boolean
  /** A copy of the last key taken so far (empty before any). */
  lastKey(): Buffer
}

/**
 * Yields after each step (the sink has had its kvs). `options` must ask for key order with no revision
 * filters and no countOnly; `options.limit` (0 = none) bounds the kvs taken in all.
 */
export async function* rangeSteps(
  log: Pick<Log, 'rangeInto'>,
  key: Buffer,
  options: RangeOptions,
  targetBytes: number,
  sink: TakingSink,
): AsyncGenerator<RangeStep, void, undefined> {
  const total = (options.limit ?? 0) > 0 ? options.limit! : Infinity
  let from = key
  let revision = options.revision
  let count: number | undefined
  let taken = 0
  let chunk = FIRST_CHUNK
  /** The last key taken (a copy: the sink's key is valid only during its call), in a reused buffer. */
  let lastKey = Buffer.alloc(64)
  let lastLength = 0
  for (;;) {
    let bytes = 0
    let readBytes = 0
    let full = false
    let declined = false
    let read = 0
    let takenHere = 0
    const step: KvSink = (k, v, c, m, ver, lease) => {
      read++
      const size = kvBytes(k, v)
      readBytes += size
      if (full || declined) return
      // A kv that would take the step past the target starts the next one (a step takes at least one).
      if (takenHere > 0 && bytes + size > targetBytes) {
        full = true
        return
      }
      if (!sink(k, v, c, m, ver, lease)) {
        declined = true
        return
      }
      taken++
      takenHere++
      bytes += size
      if (k.length > lastKey.length) lastKey = Buffer.allocUnsafe(Math.max(k.length, lastKey.length * 2))
      k.copy(lastKey)
      lastLength = k.length
    }
    const r = await log.rangeInto(from, { ...options, revision, limit: Math.min(chunk, total - taken) }, step)
    revision = r.revision
    count ??= r.count
    // Kvs read past a full step are read again by the next one.
    const last = declined || taken >= total || read === 0 || (!r.more && takenHere === read)
    const [end, length] = [lastKey, lastLength]
    yield { revision, count, taken, last, lastKey: () => Buffer.from(end.subarray(0, length)) }
    if (last) return
    from = Buffer.concat([lastKey.subarray(0, lastLength), Buffer.from([0])])
    chunk = nextChunk(chunk, readBytes, targetBytes)
  }
}
