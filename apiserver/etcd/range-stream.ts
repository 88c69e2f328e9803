/**
 * KV.RangeStream, etcd 3.7's streamed Range: the same RangeRequest, answered in chunks of kvs at one
 * pinned revision, so neither side holds the whole result at once; concatenated (proto.Merge) they are
 * what Range answers. Only the last chunk carries header, more and count. The first chunk has 10 kvs,
 * each next one is sized so that its bytes come near maxRequestBytes (as etcd sizes them) and cut at it; a chunk waits
 * until the client took the one before (backpressure), so the server holds about one chunk per stream.
 * Sort orders other than by key ascending and revision filters are UNIMPLEMENTED, as in etcd.
 */
import type { ServerWritableStream } from '@grpc/grpc-js'
import { drainedOrGone } from '../drained.js'
import type { Log } from '../../log/backend.js'
import { rangeSteps } from '../range-steps.js'
import type { CredentialCarrier } from './caller.js'
import { kvMessage, rangeRequest } from './convert.js'
import type { EtcdDeps } from './deps.js'
import { toGrpcError, unimplemented } from './errors.js'
import type { Message } from './proto.js'

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
    let kvs: Message[] = []
    // The sink's key and value are views valid during its call: a message keeps copies.
    const steps = rangeSteps(log, key, options, config.maxRequestBytes, (k, v, createRevision, modRevision, version, lease) => {
      kvs.push(kvMessage({ key: Buffer.from(k), value: Buffer.from(v), createRevision, modRevision, version, lease }))
      return true
    })
    for await (const step of steps) {
      if (call.cancelled) return
      const message = step.last
        ? {
            range_response: {
              header: headers.header(headerRevision(step.revision)),
              kvs,
              more: step.count > step.taken,
              count: step.count,
            },
          }
        : { range_response: { kvs } }
      kvs = []
      if (!call.write(message)) await drainedOrGone(call)
    }
    if (!call.cancelled) call.end()
  } catch (err) {
    // The transport sends the status with destroy(err) (transport/grpc-call.ts).
    call.destroy(toGrpcError(err) as unknown as Error)
  }
}
