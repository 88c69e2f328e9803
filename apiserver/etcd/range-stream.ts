/**
 * KV.RangeStream, etcd 3.7's streamed Range: the same RangeRequest, answered in chunks of kvs at one
 * pinned revision, so neither side holds the whole result at once; concatenated (proto.Merge) they are
 * what Range answers. Only the last chunk carries header, more and count. The first chunk has 10 kvs,
 * each next one is sized so that its bytes come near maxRequestBytes (as etcd sizes them) and cut at it; a chunk waits
 * until the client took the one before (backpressure), so the server holds about one chunk per stream.
 * Sort orders other than by key ascending and revision filters are UNIMPLEMENTED, as in etcd.
 */
import type { ServerWritableStream } from '@grpc/grpc-js'
import type { KeyValue } from '../../log/types.js'
import { drainedOrGone } from '../drained.js'
import type { Log } from '../../log/backend.js'
import type { CredentialCarrier } from './caller.js'
import { kvMessage, rangeRequest } from './convert.js'
import type { EtcdDeps } from './deps.js'
import { toGrpcError, unimplemented } from './errors.js'
import type { Message } from './proto.js'

const FIRST_CHUNK = 10
const MAX_CHUNK = 10_000
/** Per kv on the wire beyond key and value: revisions, version, lease and tags. */
const KV_OVERHEAD_BYTES = 32

export async function streamRange(
  call: ServerWritableStream<Message, Message>,
  { headers, config }: EtcdDeps,
  as: (call: CredentialCarrier) => Log,
): Promise<void> {
  try {
    // The caller's view: each chunk's read is checked, a sub-range of the request's.
    const log = as(call)
    const { key, options } = rangeRequest(call.request)
    const defaultOrder =
      (options.sortOrder ?? 'NONE') === 'NONE' || (options.sortOrder === 'ASCEND' && (options.sortTarget ?? 'KEY') === 'KEY')
    if (!defaultOrder) throw unimplemented('RangeStream does not support custom sort orders')
    if (options.minModRevision || options.maxModRevision || options.minCreateRevision || options.maxCreateRevision)
      throw unimplemented('RangeStream does not support revision filters')
    const headerRevision = (read: number) => Math.max(read, options.revision ? log.revision : 0)
    if (options.countOnly) {
      const r = await log.range(key, options)
      call.write({ range_response: { header: headers.header(headerRevision(r.revision)), count: r.count } })
      call.end()
      return
    }
    const total = (options.limit ?? 0) > 0 ? options.limit! : Infinity
    let from = key
    let revision = options.revision
    let count: number | undefined
    let sent = 0
    let chunk = FIRST_CHUNK
    for (;;) {
      const r = await log.range(from, { ...options, revision, limit: Math.min(chunk, total - sent) })
      revision = r.revision
      count ??= r.count
      // A read that came out larger than the target (its values grew) is cut there; the rest is read again.
      const taken = r.kvs.slice(0, fitting(r.kvs, config.maxRequestBytes))
      sent += taken.length
      const last = taken.length === r.kvs.length && (!r.more || sent >= total || r.kvs.length === 0)
      if (call.cancelled) return
      const kvs = taken.map(kvMessage)
      const message = last
        ? { range_response: { header: headers.header(headerRevision(revision)), kvs, more: count > sent, count } }
        : { range_response: { kvs } }
      if (!call.write(message)) await drainedOrGone(call)
      if (last) break
      from = Buffer.concat([taken[taken.length - 1]!.key, Buffer.from([0])])
      chunk = nextChunk(chunk, r.kvs, config.maxRequestBytes)
    }
    if (!call.cancelled) call.end()
  } catch (err) {
    // The transport sends the status with destroy(err) (transport/grpc-call.ts).
    call.destroy(toGrpcError(err) as unknown as Error)
  }
}

const wireBytes = (kv: KeyValue) => kv.key.length + kv.value.length + KV_OVERHEAD_BYTES

/** How many of `kvs` fit in `target` bytes (at least one). */
function fitting(kvs: readonly KeyValue[], target: number): number {
  let bytes = 0
  for (let i = 0; i < kvs.length; i++) {
    bytes += wireBytes(kvs[i]!)
    if (bytes > target) return Math.max(1, i)
  }
  return kvs.length
}

/** The next chunk's kv count: this one's scaled so that its bytes would be near `target`. */
function nextChunk(chunk: number, kvs: readonly KeyValue[], target: number): number {
  let bytes = 0
  for (const kv of kvs) bytes += wireBytes(kv)
  return Math.max(1, Math.min(MAX_CHUNK, Math.floor((chunk * target) / Math.max(bytes, 1))))
}
