/**
 * etcd's KV service: Range, Put, DeleteRange, Txn, Compact, over the log. Header revisions as etcd gives
 * them: a write's own revision (or the store's, when it wrote nothing); a read's snapshot revision.
 *
 * Every call reads and writes the log as its caller (auth/guarded-log.ts), which authorizes it first:
 * READ on a Range's keys; WRITE on a Put's key and on the keys already attached to its lease, and READ too
 * with prev_kv; WRITE on a DeleteRange's range (READ too with prev_kv); a Txn as a whole, its puts' leases
 * as a Put's (authorizer.ts). Writes are recorded with their author (door 'etcd' and the caller's user).
 */
import type { ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js'
import type { EtcdDeps } from './deps.js'
import { deleteOp, int, kvMessage, putOp, rangeRequest, responseOps, txnRequest } from './convert.js'
import { callerOf, logAsCaller } from './caller.js'
import type { Message } from './proto.js'
import { streamRange } from './range-stream.js'
import { unary } from './unary.js'
import { putResponse, RangeEncoder } from './wire.js'

/** The door name recorded with this door's writes. */
export const DOOR = 'etcd'

export function kvService(deps: EtcdDeps): UntypedServiceImplementation {
  const { headers, compactor, auth } = deps
  const as = logAsCaller(deps, DOOR)
  return {
    RangeStream: (call: ServerWritableStream<Message, Message>) => void streamRange(call, deps, as),

    Range: unary(async (request, call) => {
      const { key, options } = rangeRequest(request)
      const log = as(call)
      // Each kv is written into the response as the log reads it (wire.ts): no KeyValue object, no protobufjs.
      const encoder = new RangeEncoder()
      const r = await log.rangeInto(key, options, encoder.sink)
      // A read at an older revision still reports the store's revision, as etcd does.
      return encoder.finish(headers.encoded(Math.max(r.revision, options.revision ? log.revision : 0)), r)
    }),

    Put: unary(async (request, call) => {
      const op = putOp(request)
      if (op.type !== 'put') throw new TypeError('putOp')
      const r = await as(call).put(op.key, op.value ?? '', op)
      // The hottest response: encoded by hand (wire.ts).
      return putResponse(headers.encoded(r.revision), r.prevKv)
    }),

    DeleteRange: unary(async (request, call) => {
      const op = deleteOp(request)
      if (op.type !== 'delete') throw new TypeError('deleteOp')
      const r = await as(call).delete(op.key, op)
      return { header: headers.header(r.revision), deleted: r.deleted, prev_kvs: (r.prevKvs ?? []).map(kvMessage) }
    }),

    Txn: unary(async (request, call) => {
      const r = await as(call).txn(txnRequest(request))
      // etcd gives the ops' own responses a header with only the revision.
      return { header: headers.header(r.revision), succeeded: r.succeeded, responses: responseOps(r.results, { revision: r.revision }) }
    }),

    // etcd 3.4 checks no permission for Compact (its auth applier has no rule for it): any caller may,
    // but a token that is sent must be valid.
    Compact: unary(async (request, call) => {
      callerOf(auth, call)
      await compactor.compactNow(int(request.revision, 'revision'), { physical: request.physical === true })
      return { header: headers.header() }
    }),
  }
}
