/**
 * How many kvs a streamed range reads per step (etcd's RangeStream and the streamed lists of the native
 * and resource doors): the first step reads a few, each next one is scaled so that its bytes come near a
 * target (maxRequestBytes, as etcd sizes RangeStream's chunks).
 */
export const FIRST_CHUNK = 10
const MAX_CHUNK = 10_000
/** Per kv beyond key and value: revisions, version, lease and the encoding's field names. */
const KV_OVERHEAD_BYTES = 32

export const kvBytes = (key: Uint8Array, value: Uint8Array): number => key.length + value.length + KV_OVERHEAD_BYTES

/** The next step's kv count: `chunk` kvs came to `bytes`; scaled so that the next comes near `target`. */
export function nextChunk(chunk: number, bytes: number, target: number): number {
  return Math.max(1, Math.min(MAX_CHUNK, Math.floor((chunk * target) / Math.max(bytes, 1))))
}
