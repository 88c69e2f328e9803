/** put() and delete() answers from the one-op transaction every engine runs them as. */
import type { DeleteResponse, PutResponse } from './backend.js'
import type { TxnResult } from './types.js'

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
