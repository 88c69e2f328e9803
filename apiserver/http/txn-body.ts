/**
 * The JSON shapes of transactions on the native API, converted to the log's TxnRequest, and the results
 * back to JSON. Same semantics as etcd's Txn (docs/api.md):
 *
 *   { "compare": [{ "key": "a", "target": "MOD", "result": "EQUAL", "value": 7 }],
 *     "success": [{ "type": "put", "key": "a", "value": "x" }],
 *     "failure": [{ "type": "range", "key": "a" }] }
 *
 * VALUE compares take `value` (UTF-8) or `valueBase64`; LEASE compares a decimal string; the others a
 * number. Ops: put (key, value, lease, prevKv, ignoreValue, ignoreLease), delete (key selection, prevKv),
 * range (key selection and range options), txn (nested).
 */
import { invalid } from '../../log/errors.js'
import type { Compare, CompareResult, CompareTarget, Op, OpResult, TxnRequest, TxnResult } from '../../log/types.js'
import { getBytes, kvToJson, leaseFromJson, type JsonObject } from '../codec.js'
import { asObject, bodyBool, bodyInt, keySelection, onlyFields } from '../params.js'

const TARGETS: readonly CompareTarget[] = ['VALUE', 'VERSION', 'CREATE', 'MOD', 'LEASE']
const RESULTS: readonly CompareResult[] = ['EQUAL', 'NOT_EQUAL', 'LESS', 'GREATER']
const KEY_FIELDS = ['key', 'keyBase64', 'rangeEnd', 'rangeEndBase64', 'prefix', 'fromKey']
const RANGE_FIELDS = [
  'revision',
  'limit',
  'keysOnly',
  'countOnly',
  'sortOrder',
  'sortTarget',
  'minModRevision',
  'maxModRevision',
  'minCreateRevision',
  'maxCreateRevision',
]

/** Parses a transaction body; `maxDepth` bounds nesting before recursing (a deep body must not overflow the stack). */
export function txnFromJson(body: unknown, maxDepth: number, where = 'txn', depth = 0): TxnRequest {
  if (depth > maxDepth) throw invalid(where, `transactions are nested deeper than maxTxnDepth (${maxDepth})`)
  const o = asObject(body, where)
  onlyFields(o, where === 'txn' ? ['compare', 'success', 'failure'] : ['type', 'compare', 'success', 'failure'], where)
  return {
    compare: list(o.compare, `${where}.compare`).map((c, i) => compareFromJson(c, `${where}.compare[${i}]`)),
    success: list(o.success, `${where}.success`).map((op, i) => opFromJson(op, `${where}.success[${i}]`, maxDepth, depth)),
    failure: list(o.failure, `${where}.failure`).map((op, i) => opFromJson(op, `${where}.failure[${i}]`, maxDepth, depth)),
  }
}

function list(value: unknown, where: string): unknown[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw invalid(where, 'must be an array')
  return value
}

function oneOf<T extends string>(value: unknown, values: readonly T[], where: string): T {
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
    throw invalid(where, `must be one of ${values.join(', ')}`)
  }
  return value as T
}

function compareFromJson(value: unknown, where: string): Compare {
  const c = asObject(value, where)
  onlyFields(c, [...KEY_FIELDS, 'target', 'result', 'value', 'valueBase64'], where)
  const target = oneOf(c.target, TARGETS, `${where}.target`)
  const result = oneOf(c.result, RESULTS, `${where}.result`)
  const { key, rangeEnd } = keySelection(c, { prefix: bodyBool(c, 'prefix', `${where}.`), fromKey: bodyBool(c, 'fromKey', `${where}.`) })
  let operand: Compare['value']
  if (target === 'VALUE') operand = getBytes(c, 'value') ?? Buffer.alloc(0)
  else if (target === 'LEASE') operand = leaseFromJson(c.value, `${where}.value`)
  else operand = bodyInt(c, 'value', `${where}.`) ?? 0
  return { key, rangeEnd, target, result, value: operand }
}

function opFromJson(value: unknown, where: string, maxDepth: number, depth: number): Op {
  const o = asObject(value, where)
  const type = oneOf(o.type, ['put', 'delete', 'range', 'txn'] as const, `${where}.type`)
  const flags = () => ({ prefix: bodyBool(o, 'prefix', `${where}.`), fromKey: bodyBool(o, 'fromKey', `${where}.`) })
  switch (type) {
    case 'put': {
      onlyFields(o, ['type', 'key', 'keyBase64', 'value', 'valueBase64', 'lease', 'prevKv', 'ignoreValue', 'ignoreLease'], where)
      const key = getBytes(o, 'key')
      if (key === undefined) throw invalid(`${where}.key`, 'is required (key or keyBase64)')
      return {
        type,
        key,
        value: getBytes(o, 'value') ?? Buffer.alloc(0),
        lease: leaseFromJson(o.lease, `${where}.lease`),
        prevKv: bodyBool(o, 'prevKv', `${where}.`),
        ignoreValue: bodyBool(o, 'ignoreValue', `${where}.`),
        ignoreLease: bodyBool(o, 'ignoreLease', `${where}.`),
      }
    }
    case 'delete': {
      onlyFields(o, ['type', ...KEY_FIELDS, 'prevKv'], where)
      return { type, ...keySelection(o, flags()), prevKv: bodyBool(o, 'prevKv', `${where}.`) }
    }
    case 'range': {
      onlyFields(o, ['type', ...KEY_FIELDS, ...RANGE_FIELDS], where)
      const p = `${where}.`
      return {
        type,
        ...keySelection(o, flags()),
        revision: bodyInt(o, 'revision', p),
        limit: bodyInt(o, 'limit', p),
        keysOnly: bodyBool(o, 'keysOnly', p),
        countOnly: bodyBool(o, 'countOnly', p),
        sortOrder: o.sortOrder === undefined ? undefined : oneOf(o.sortOrder, ['NONE', 'ASCEND', 'DESCEND'] as const, `${p}sortOrder`),
        sortTarget:
          o.sortTarget === undefined
            ? undefined
            : oneOf(o.sortTarget, ['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'] as const, `${p}sortTarget`),
        minModRevision: bodyInt(o, 'minModRevision', p),
        maxModRevision: bodyInt(o, 'maxModRevision', p),
        minCreateRevision: bodyInt(o, 'minCreateRevision', p),
        maxCreateRevision: bodyInt(o, 'maxCreateRevision', p),
      }
    }
    case 'txn':
      return { type, ...txnFromJson(o, maxDepth, where, depth + 1) }
  }
}

/** The result as JSON; the request tells which ranges were keys-only (their kvs carry no value). */
export function txnResultToJson(r: TxnResult, request: TxnRequest): JsonObject {
  return {
    header: { revision: r.revision },
    succeeded: r.succeeded,
    results: resultsToJson(r.results, r.succeeded ? request.success : request.failure),
  }
}

function resultsToJson(results: OpResult[], ops: Op[] | undefined): JsonObject[] {
  return results.map((r, i) => resultToJson(r, ops?.[i]))
}

function resultToJson(r: OpResult, op: Op | undefined): JsonObject {
  switch (r.type) {
    case 'put':
      return r.prevKv ? { type: 'put', prevKv: kvToJson(r.prevKv) } : { type: 'put' }
    case 'delete':
      return r.prevKvs
        ? { type: 'delete', deleted: r.deleted, prevKvs: r.prevKvs.map((kv) => kvToJson(kv)) }
        : { type: 'delete', deleted: r.deleted }
    case 'range': {
      const keysOnly = op?.type === 'range' && op.keysOnly === true
      return { type: 'range', kvs: r.kvs.map((kv) => kvToJson(kv, keysOnly)), more: r.more, count: r.count }
    }
    case 'txn': {
      const nested = op?.type === 'txn' ? (r.succeeded ? op.success : op.failure) : undefined
      return { type: 'txn', succeeded: r.succeeded, results: resultsToJson(r.results, nested) }
    }
  }
}
