/**
 * etcd's KV service: Range, Put, DeleteRange, Txn, Compact, over the log. Header revisions as etcd gives
 * them: a write's own revision (or the store's, when it wrote nothing); a read's snapshot revision.
 *
 * Every call is authorized first (apiserver/auth/): READ on a Range's keys; WRITE on a Put's key and on
 * the keys already attached to its lease, and READ too with prev_kv; WRITE on a DeleteRange's range (READ
 * too with prev_kv); a Txn as a whole (authorizer.ts); Compact needs role root. Writes are recorded with
 * their author (door 'etcd' and the caller's user).
 */
import type { ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js'
import type { EtcdDeps } from './deps.js'
import { deleteOp, int, kvMessage, putOp, rangeRequest, responseOps, txnRequest } from './convert.js'
import { authorOf } from '../auth/guarded-log.js'
import { callerOf } from './caller.js'
import type { Message } from './proto.js'
import { streamRange } from './range-stream.js'

/** The door name recorded with this door's writes. */
const DOOR = 'etcd'
import { unary } from './unary.js'
import { putResponse, rangeResponse } from './wire.js'

export function kvService(deps: EtcdDeps): UntypedServiceImplementation {
  const { log, headers, compactor, auth } = deps
  return {
    RangeStream: (call: ServerWritableStream<Message, Message>) => void streamRange(call, deps),

    Range: unary(async (request, call) => {
      const { key, options } = rangeRequest(request)
      auth.checkRange(callerOf(auth, call), key, options.rangeEnd, 'read')
      const r = await log.range(key, options)
      // A read at an older revision still reports the store's revision, as etcd does. Encoded by hand
      // (wire.ts): a list of a thousand keys through protobufjs cost about as much as reading it.
      return rangeResponse(headers.encoded(Math.max(r.revision, options.revision ? log.revision : 0)), r)
    }),

    Put: unary(async (request, call) => {
      const op = putOp(request)
      if (op.type !== 'put') throw new TypeError('putOp')
      const who = callerOf(auth, call)
      if (auth.enabled) {
        auth.checkRange(who, op.key, undefined, 'write')
        if (op.prevKv === true) auth.checkRange(who, op.key, undefined, 'read')
        const lease = op.lease === undefined ? 0n : BigInt(op.lease)
        for (const key of lease === 0n ? [] : (log.leaseTimeToLive(lease, { keys: true })?.keys ?? []))
          auth.checkRange(who, key, undefined, 'write')
      }
      const r = await log.put(op.key, op.value ?? '', { ...op, author: authorOf(who, DOOR) })
      // The hottest response: encoded by hand (wire.ts).
      return putResponse(headers.encoded(r.revision), r.prevKv)
    }),

    DeleteRange: unary(async (request, call) => {
      const op = deleteOp(request)
      if (op.type !== 'delete') throw new TypeError('deleteOp')
      const who = callerOf(auth, call)
      if (auth.enabled) {
        auth.checkRange(who, op.key, op.rangeEnd, 'write')
        if (op.prevKv === true) auth.checkRange(who, op.key, op.rangeEnd, 'read')
      }
      const r = await log.delete(op.key, { ...op, author: authorOf(who, DOOR) })
      return { header: headers.header(r.revision), deleted: r.deleted, prev_kvs: (r.prevKvs ?? []).map(kvMessage) }
    }),

    Txn: unary(async (request, call) => {
      const txn = txnRequest(request)
      const who = callerOf(auth, call)
      auth.checkTxn(who, txn)
      const r = await log.txn({ ...txn, author: authorOf(who, DOOR) })
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
