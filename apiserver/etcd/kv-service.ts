/**
 * etcd's KV service: Range, Put, DeleteRange, Txn, Compact, over the log. Header revisions as etcd gives
 * them: a write's own revision (or the store's, when it wrote nothing); a read's snapshot revision.
 */
import type { UntypedServiceImplementation } from '@grpc/grpc-js'
import type { EtcdDeps } from './deps.js'
import { deleteOp, int, kvMessage, putOp, rangeRequest, responseOps, txnRequest } from './convert.js'
import { unary } from './unary.js'
import { putResponse, rangeResponse } from './wire.js'

export function kvService({ log, headers, compactor }: EtcdDeps): UntypedServiceImplementation {
  return {
    Range: unary(async (request) => {
      const { key, options } = rangeRequest(request)
      const r = await log.range(key, options)
      // A read at an older revision still reports the store's revision, as etcd does. Encoded by hand
      // (wire.ts): a list of a thousand keys through protobufjs cost about as much as reading it.
      return rangeResponse(headers.encoded(Math.max(r.revision, options.revision ? log.revision : 0)), r)
    }),

    Put: unary(async (request) => {
      const op = putOp(request)
      if (op.type !== 'put') throw new TypeError('putOp')
      const r = await log.put(op.key, op.value ?? '', op)
      // The hottest response: encoded by hand (wire.ts).
      return putResponse(headers.encoded(r.revision), r.prevKv)
    }),

    DeleteRange: unary(async (request) => {
      const op = deleteOp(request)
      if (op.type !== 'delete') throw new TypeError('deleteOp')
      const r = await log.delete(op.key, op)
      return { header: headers.header(r.revision), deleted: r.deleted, prev_kvs: (r.prevKvs ?? []).map(kvMessage) }
    }),

    Txn: unary(async (request) => {
      const r = await log.txn(txnRequest(request))
      // etcd gives the ops' own responses a header with only the revision.
      return { header: headers.header(r.revision), succeeded: r.succeeded, responses: responseOps(r.results, { revision: r.revision }) }
    }),

    Compact: unary(async (request) => {
      await compactor.compactNow(int(request.revision, 'revision'), { physical: request.physical === true })
      return { header: headers.header() }
    }),
  }
}
