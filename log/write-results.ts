/** put() and delete() as the one-op transaction every engine runs them as, and their answers. */
import type { DeleteResponse, PutResponse } from './backend.js'
import type { Author, Op, TxnRequest, TxnResult } from './types.js'

/**
 * The one-op transaction of a put() or delete() whose options may carry the author: the author goes to
 * the transaction (recorded with its entry), not into the op.
 */
export function oneOpTxn<O extends { author?: Author }>(options: O, op: (rest: Omit<O, 'author'>) => Op): TxnRequest {
  const { author, ...rest } = options
  return { success: [op(rest)], ...(author === undefined ? {} : { author }) }
}

export function putResponse(r: TxnResult): PutResponse {
  const put = r.results[0]
  return put.type === 'put' && put.prevKv !== undefined
    ? { revision: r.revision, wrote: r.wrote, prevKv: put.prevKv }
    : { revision: r.revision, wrote: r.wrote }
}

export function deleteResponse(r: TxnResult): DeleteResponse {
  const del = r.results[0]
  if (del.type !== 'delete') throw new TypeError('delete: unexpected result')
  return { revision: r.revision, wrote: r.wrote, deleted: del.deleted, ...(del.prevKvs ? { prevKvs: del.prevKvs } : {}) }
}
