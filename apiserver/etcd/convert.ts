/**
 * etcd's protobuf shapes ↔ the log's types. Requests arrive decoded by proto.ts (64-bit integers as decimal
 * strings, enums as names, every field present); responses leave as plain objects for encode().
 *
 * etcd's conventions kept here: revision ≤ 0 = the latest; limit ≤ 0 = no limit; a zero min/max filter is
 * no filter; range_end "\0" = every key ≥ key; a Compare reads the target_union field its target names.
 */
import { invalid } from '../../log/errors.js'
import type {
  Compare,
  CompareResult,
  CompareTarget,
  KeyValue,
  Op,
  OpResult,
  RangeOptions,
  SortOrder,
  SortTarget,
  TxnRequest,
} from '../../log/types.js'
import type { Message } from './proto.js'

const EMPTY = Buffer.alloc(0)

/** A decimal int64 from a decoded request as a safe integer (revisions, limits, counts). */
export function int(value: unknown, field: string): number {
  const n = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : NaN
  if (!Number.isSafeInteger(n)) throw invalid(field, `${String(value)} is not a safe integer`)
  return n
}

/** A decimal int64 as a bigint (lease ids). */
export function int64(value: unknown, field: string): bigint {
  if (typeof value !== 'string' && typeof value !== 'number') throw invalid(field, 'not an integer')
  try {
    return BigInt(value)
  } catch {
    throw invalid(field, `${String(value)} is not an integer`)
  }
}

function bytes(value: unknown): Buffer {
  return Buffer.isBuffer(value) ? value : value instanceof Uint8Array ? Buffer.from(value) : EMPTY
}

/** range_end: empty = just the key (undefined for the log). */
function rangeEnd(value: unknown): Buffer | undefined {
  const b = bytes(value)
  return b.length === 0 ? undefined : b
}

// ---------------------------------------------------------------------------------------------------------
// Requests

export function rangeRequest(r: Message): { key: Buffer; options: RangeOptions } {
  const revision = int(r.revision, 'revision')
  const limit = int(r.limit, 'limit')
  const nonNegative = (name: string) => Math.max(0, int(r[name], name))
  return {
    key: bytes(r.key),
    options: {
      rangeEnd: rangeEnd(r.range_end),
      revision: revision <= 0 ? 0 : revision,
      limit: limit <= 0 ? 0 : limit,
      sortOrder: r.sort_order as SortOrder,
      sortTarget: r.sort_target as SortTarget,
      keysOnly: r.keys_only === true,
      countOnly: r.count_only === true,
      minModRevision: nonNegative('min_mod_revision'),
      maxModRevision: nonNegative('max_mod_revision'),
      minCreateRevision: nonNegative('min_create_revision'),
      maxCreateRevision: nonNegative('max_create_revision'),
      // Cluster mode: answered from this member's copy without catching up with the log first (etcd's).
      serializable: r.serializable === true,
    },
  }
}

export function putOp(r: Message): Op {
  return {
    type: 'put',
    key: bytes(r.key),
    value: bytes(r.value),
    lease: int64(r.lease, 'lease'),
    prevKv: r.prev_kv === true,
    ignoreValue: r.ignore_value === true,
    ignoreLease: r.ignore_lease === true,
  }
}

export function deleteOp(r: Message): Op {
  return { type: 'delete', key: bytes(r.key), rangeEnd: rangeEnd(r.range_end), prevKv: r.prev_kv === true }
}

const UNION_FIELD: Record<CompareTarget, string> = {
  VERSION: 'version',
  CREATE: 'create_revision',
  MOD: 'mod_revision',
  VALUE: 'value',
  LEASE: 'lease',
}

function compare(c: Message): Compare {
  const target = c.target as CompareTarget
  const result = c.result as CompareResult
  if (!(target in UNION_FIELD)) throw invalid('compare.target', `unknown target ${String(target)}`)
  const raw = c[UNION_FIELD[target]]
  const value =
    target === 'VALUE' ? bytes(raw) : target === 'LEASE' ? int64(raw, 'compare.lease') : int(raw, `compare.${UNION_FIELD[target]}`)
  return { key: bytes(c.key), rangeEnd: rangeEnd(c.range_end), target, result, value }
}

function requestOp(op: Message, depth: number): Op {
  switch (op.request) {
    case 'request_range': {
      const { key, options } = rangeRequest(op.request_range as Message)
      return { type: 'range', key, ...options }
    }
    case 'request_put':
      return putOp(op.request_put as Message)
    case 'request_delete_range':
      return deleteOp(op.request_delete_range as Message)
    case 'request_txn':
      return { type: 'txn', ...txnRequest(op.request_txn as Message, depth + 1) }
    default:
      throw invalid('request', 'a RequestOp holds none of request_range, request_put, request_delete_range, request_txn')
  }
}

/** Depth is bounded by the log (maxTxnDepth); protobuf decoding bounds it before that. */
export function txnRequest(t: Message, depth = 0): TxnRequest {
  const list = (v: unknown) => (Array.isArray(v) ? (v as Message[]) : [])
  return {
    compare: list(t.compare).map(compare),
    success: list(t.success).map((op) => requestOp(op, depth)),
    failure: list(t.failure).map((op) => requestOp(op, depth)),
  }
}

// ---------------------------------------------------------------------------------------------------------
// Responses

/** A KeyValue; zero fields are left out (proto3 reads them as 0). */
export function kvMessage(kv: KeyValue): Message {
  const m: Message = { key: kv.key, create_revision: kv.createRevision, mod_revision: kv.modRevision, version: kv.version }
  if (kv.value.length > 0) m.value = kv.value
  if (kv.lease !== 0n) m.lease = kv.lease.toString()
  return m
}

export function rangeResponse(header: Message, r: { kvs: KeyValue[]; more: boolean; count: number }): Message {
  return { header, kvs: r.kvs.map(kvMessage), more: r.more, count: r.count }
}

export function responseOps(results: OpResult[], header: Message): Message[] {
  return results.map((r): Message => {
    switch (r.type) {
      case 'range':
        return { response_range: rangeResponse(header, r) }
      case 'put':
        return { response_put: r.prevKv ? { header, prev_kv: kvMessage(r.prevKv) } : { header } }
      case 'delete':
        return { response_delete_range: { header, deleted: r.deleted, prev_kvs: (r.prevKvs ?? []).map(kvMessage) } }
      case 'txn':
        return { response_txn: { header, succeeded: r.succeeded, responses: responseOps(r.results, header) } }
    }
  })
}
