/**
 * Turns API requests into checked internal forms (keys as Buffers, ranges as Bounds), rejecting bad input
 * with stable codes before anything reaches the writer: INVALID_ARGUMENT, EMPTY_KEY, TOO_MANY_OPS,
 * DUPLICATE_KEY (etcd's checkIntervals rules), REQUEST_TOO_LARGE.
 *
 * etcd bounds a transaction per level (maxTxnOps per branch); nesting multiplies that, so kvlog also bounds
 * the total across every level and branch (maxTxnTotalOps), counted before any op is normalized or run.
 */
import { invalid, KvlogError } from './errors.js'
import { inBounds, keyId, toBounds, toBytes, toKey, type Bounds } from './keys.js'
import type { Author, Compare, CompareResult, CompareTarget, Op, RangeOptions, SortOrder, SortTarget, TxnRequest } from './types.js'

export interface Limits {
  maxTxnOps: number
  maxTxnTotalOps: number
  maxRequestBytes: number
  maxTxnDepth: number
}

export interface NRangeOptions {
  revision: number
  limit: number
  sortOrder: SortOrder
  sortTarget: SortTarget
  keysOnly: boolean
  countOnly: boolean
  minModRevision: number
  maxModRevision: number
  minCreateRevision: number
  maxCreateRevision: number
}

export interface NCompare {
  bounds: Bounds
  target: CompareTarget
  result: CompareResult
  value: Buffer | number | bigint
}

export interface NPut {
  type: 'put'
  key: Buffer
  value: Buffer
  lease: bigint
  prevKv: boolean
  ignoreValue: boolean
  ignoreLease: boolean
}

export interface NDelete {
  type: 'delete'
  bounds: Bounds
  prevKv: boolean
}

export interface NRange {
  type: 'range'
  bounds: Bounds
  options: NRangeOptions
}

export interface NTxn {
  type: 'txn'
  compare: NCompare[]
  success: NOp[]
  failure: NOp[]
  /** Only on the outermost transaction. */
  author?: Author
}

export type NOp = NPut | NDelete | NRange | NTxn

const COMPARE_TARGETS: readonly CompareTarget[] = ['VALUE', 'VERSION', 'CREATE', 'MOD', 'LEASE']
const COMPARE_RESULTS: readonly CompareResult[] = ['EQUAL', 'NOT_EQUAL', 'LESS', 'GREATER']
const SORT_ORDERS: readonly SortOrder[] = ['NONE', 'ASCEND', 'DESCEND']
const SORT_TARGETS: readonly SortTarget[] = ['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE']
const MAX_LEASE = (1n << 64n) - 1n
const EMPTY = Buffer.alloc(0)

// ---------------------------------------------------------------------------------------------------------
// Scalars

/** A revision argument: a non-negative safe integer (0 means "latest" where the API allows it). */
export function checkRevision(value: unknown, field: string): number {
  if (value === undefined || value === null) return 0
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(field, `must be a non-negative integer revision, got ${String(value)}`)
  }
  return value
}

function checkCount(value: unknown, field: string): number {
  if (value === undefined || value === null) return 0
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(field, `must be a non-negative integer, got ${String(value)}`)
  }
  return value
}

function checkLease(value: unknown, field: string): bigint {
  if (value === undefined || value === null) return 0n
  let lease: bigint
  if (typeof value === 'bigint') lease = value
  else if (typeof value === 'number' && Number.isSafeInteger(value)) lease = BigInt(value)
  else throw invalid(field, `must be a 64-bit lease id (bigint), got ${typeof value}`)
  if (lease < 0n || lease > MAX_LEASE) throw invalid(field, 'must be between 0 and 2^64-1')
  return lease
}

function checkBool(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean') throw invalid(field, `must be a boolean, got ${typeof value}`)
  return value
}

function checkEnum<T extends string>(value: unknown, allowed: readonly T[], fallback: T, field: string): T {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw invalid(field, `must be one of ${allowed.join(', ')}, got ${String(value)}`)
  }
  return value as T
}

function checkObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(field, 'must be an object')
  }
  return value as Record<string, unknown>
}

function checkArray(value: unknown, field: string): unknown[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw invalid(field, 'must be an array')
  return value
}

function optionalBytes(value: unknown, field: string): Buffer | undefined {
  return value === undefined || value === null ? undefined : toBytes(value, field)
}

// ---------------------------------------------------------------------------------------------------------
// Ranges

export function normalizeRangeOptions(options: RangeOptions | undefined, field = 'range'): NRangeOptions {
  const o = options === undefined ? {} : checkObject(options, field)
  return {
    revision: checkRevision(o.revision, `${field}.revision`),
    limit: checkCount(o.limit, `${field}.limit`),
    sortOrder: checkEnum(o.sortOrder, SORT_ORDERS, 'NONE', `${field}.sortOrder`),
    sortTarget: checkEnum(o.sortTarget, SORT_TARGETS, 'KEY', `${field}.sortTarget`),
    keysOnly: checkBool(o.keysOnly, `${field}.keysOnly`),
    countOnly: checkBool(o.countOnly, `${field}.countOnly`),
    minModRevision: checkRevision(o.minModRevision, `${field}.minModRevision`),
    maxModRevision: checkRevision(o.maxModRevision, `${field}.maxModRevision`),
    minCreateRevision: checkRevision(o.minCreateRevision, `${field}.minCreateRevision`),
    maxCreateRevision: checkRevision(o.maxCreateRevision, `${field}.maxCreateRevision`),
  }
}

export function normalizeBounds(key: unknown, rangeEnd: unknown, field: string): Bounds {
  return toBounds(toKey(key, `${field}.key`), optionalBytes(rangeEnd, `${field}.rangeEnd`))
}

// ---------------------------------------------------------------------------------------------------------
// Transactions

/**
 * Counts request bytes and ops (compares and ops of every level and branch) as it goes, so oversized
 * requests fail before they are fully materialized.
 */
class ByteBudget {
  used = 0
  ops = 0
  constructor(
    private readonly max: number,
    private readonly maxOps = Infinity,
  ) {}
  addOps(n: number, field: string): void {
    this.ops += n
    if (this.ops > this.maxOps) {
      throw new KvlogError(
        'TOO_MANY_OPS',
        `too many operations in txn request: more than maxTxnTotalOps (${this.maxOps}) across all nested transactions`,
        { maxTxnTotalOps: this.maxOps, field },
      )
    }
  }
  add(...parts: Array<Buffer | undefined>): void {
    for (const p of parts) if (p !== undefined) this.used += p.length
    if (this.used > this.max) {
      throw new KvlogError('REQUEST_TOO_LARGE', `request is larger than maxRequestBytes (${this.max} bytes)`, {
        maxRequestBytes: this.max,
      })
    }
  }
}

export function normalizeTxn(request: TxnRequest, limits: Limits): NTxn {
  const budget = new ByteBudget(limits.maxRequestBytes, limits.maxTxnTotalOps)
  const { author, ...body } = checkObject(request, 'txn')
  const txn = normalizeTxnBody(body, 'txn', limits, budget, 0)
  checkBranchIntervals(txn.success)
  checkBranchIntervals(txn.failure)
  return withAuthor(txn, author)
}

function withAuthor(txn: NTxn, author: unknown): NTxn {
  if (author === undefined) return txn
  const a = checkObject(author, 'author')
  if (
    typeof a.door !== 'string' ||
    (a.user !== undefined && typeof a.user !== 'string') ||
    (a.agent !== undefined && typeof a.agent !== 'string')
  )
    throw invalid('author', 'must be { door: string, user?: string, agent?: string }')
  txn.author =
    a.user !== undefined ? { door: a.door, user: a.user } : a.agent !== undefined ? { door: a.door, agent: a.agent } : { door: a.door }
  return txn
}

function normalizeTxnBody(o: Record<string, unknown>, field: string, limits: Limits, budget: ByteBudget, depth: number): NTxn {
  if (depth > limits.maxTxnDepth) {
    throw invalid(field, `transactions are nested deeper than maxTxnDepth (${limits.maxTxnDepth})`)
  }
  const compare = checkArray(o.compare, `${field}.compare`)
  const success = checkArray(o.success, `${field}.success`)
  const failure = checkArray(o.failure, `${field}.failure`)
  for (const [name, list] of [
    ['compare', compare],
    ['success', success],
    ['failure', failure],
  ] as const) {
    if (list.length > limits.maxTxnOps) {
      throw new KvlogError(
        'TOO_MANY_OPS',
        `too many operations in txn request: ${name} has ${list.length}, ` + `the limit is ${limits.maxTxnOps}`,
        { maxTxnOps: limits.maxTxnOps, field: `${field}.${name}` },
      )
    }
  }
  budget.addOps(compare.length + success.length + failure.length, field)
  return {
    type: 'txn',
    compare: compare.map((c, i) => normalizeCompare(c, `${field}.compare[${i}]`, budget)),
    success: success.map((op, i) => normalizeOp(op, `${field}.success[${i}]`, limits, budget, depth)),
    failure: failure.map((op, i) => normalizeOp(op, `${field}.failure[${i}]`, limits, budget, depth)),
  }
}

function normalizeCompare(value: unknown, field: string, budget: ByteBudget): NCompare {
  const c = checkObject(value, field) as Partial<Compare>
  const key = toKey(c.key, `${field}.key`)
  const rangeEnd = optionalBytes(c.rangeEnd, `${field}.rangeEnd`)
  budget.add(key, rangeEnd)
  const target = checkEnum(c.target, COMPARE_TARGETS, 'VALUE', `${field}.target`)
  if (c.target === undefined) throw invalid(`${field}.target`, 'is required')
  const result = checkEnum(c.result, COMPARE_RESULTS, 'EQUAL', `${field}.result`)
  if (c.result === undefined) throw invalid(`${field}.result`, 'is required')
  let operand: Buffer | number | bigint
  if (target === 'VALUE') {
    operand = c.value === undefined || c.value === null ? EMPTY : toBytes(c.value, `${field}.value`)
    budget.add(operand)
  } else if (target === 'LEASE') {
    operand = checkLease(c.value ?? 0, `${field}.value`)
  } else {
    const v = c.value ?? 0
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
      throw invalid(`${field}.value`, `must be an integer for target ${target}`)
    }
    operand = v
  }
  return { bounds: toBounds(key, rangeEnd), target, result, value: operand }
}

function normalizeOp(value: unknown, field: string, limits: Limits, budget: ByteBudget, depth: number): NOp {
  const o = checkObject(value, field) as Partial<Op> & Record<string, unknown>
  switch (o.type) {
    case 'put': {
      const key = toKey(o.key, `${field}.key`)
      const ignoreValue = checkBool(o.ignoreValue, `${field}.ignoreValue`)
      const ignoreLease = checkBool(o.ignoreLease, `${field}.ignoreLease`)
      if (ignoreValue && o.value !== undefined && o.value !== null && toBytes(o.value, `${field}.value`).length > 0) {
        throw invalid(`${field}.value`, 'must be empty with ignoreValue')
      }
      if (ignoreLease && o.lease !== undefined && checkLease(o.lease, `${field}.lease`) !== 0n) {
        throw invalid(`${field}.lease`, 'must be 0 with ignoreLease')
      }
      const v = ignoreValue ? EMPTY : (optionalBytes(o.value, `${field}.value`) ?? EMPTY)
      budget.add(key, v)
      return {
        type: 'put',
        key,
        value: v,
        lease: checkLease(o.lease, `${field}.lease`),
        prevKv: checkBool(o.prevKv, `${field}.prevKv`),
        ignoreValue,
        ignoreLease,
      }
    }
    case 'delete': {
      const key = toKey(o.key, `${field}.key`)
      const rangeEnd = optionalBytes(o.rangeEnd, `${field}.rangeEnd`)
      budget.add(key, rangeEnd)
      return { type: 'delete', bounds: toBounds(key, rangeEnd), prevKv: checkBool(o.prevKv, `${field}.prevKv`) }
    }
    case 'range': {
      const key = toKey(o.key, `${field}.key`)
      const rangeEnd = optionalBytes(o.rangeEnd, `${field}.rangeEnd`)
      budget.add(key, rangeEnd)
      return { type: 'range', bounds: toBounds(key, rangeEnd), options: normalizeRangeOptions(o as RangeOptions, field) }
    }
    case 'txn':
      return normalizeTxnBody(o, field, limits, budget, depth + 1)
    default:
      throw invalid(`${field}.type`, `must be put, delete, range or txn, got ${String(o.type)}`)
  }
}

// ---------------------------------------------------------------------------------------------------------
// Duplicate writes (etcd's checkIntervals): within one branch a key may be put once, and not both put and
// deleted. Deletes may overlap each other. The branches of a nested txn are alternatives, so the same key
// may be put in both.

interface Writes {
  puts: Set<string>
  dels: Bounds[]
}

function duplicate(key: Buffer): KvlogError {
  return new KvlogError('DUPLICATE_KEY', 'duplicate key given in txn request', { key: key.toString('base64') })
}

function hitsDelete(dels: Bounds[], key: Buffer): boolean {
  for (const d of dels) if (inBounds(d, key)) return true
  return false
}

function checkBranchIntervals(ops: NOp[]): Writes {
  const dels: Bounds[] = []
  for (const op of ops) if (op.type === 'delete') dels.push(op.bounds)
  const puts = new Set<string>()
  for (const op of ops) {
    if (op.type !== 'txn') continue
    const then = checkBranchIntervals(op.success)
    const otherwise = checkBranchIntervals(op.failure)
    for (const id of then.puts) {
      const key = Buffer.from(id, 'latin1')
      if (puts.has(id) || hitsDelete(dels, key)) throw duplicate(key)
      puts.add(id)
    }
    for (const id of otherwise.puts) {
      const key = Buffer.from(id, 'latin1')
      if ((puts.has(id) && !then.puts.has(id)) || hitsDelete(dels, key)) throw duplicate(key)
      puts.add(id)
    }
    dels.push(...then.dels, ...otherwise.dels)
  }
  for (const op of ops) {
    if (op.type !== 'put') continue
    const id = keyId(op.key)
    if (puts.has(id) || hitsDelete(dels, op.key)) throw duplicate(op.key)
    puts.add(id)
  }
  return { puts, dels }
}

/**
 * A single put as a checked transaction, without the generic walk (the hot path of put()): one op
 * cannot duplicate a key, and its size is just key + value.
 */
export function normalizePut(key: unknown, value: unknown, options: Record<string, unknown>, limits: Limits): NTxn {
  const budget = new ByteBudget(limits.maxRequestBytes)
  const { author, ...rest } = options
  const op = normalizeOp({ ...rest, type: 'put', key, value }, 'put', limits, budget, 0)
  return withAuthor({ type: 'txn', compare: [], success: [op], failure: [] }, author)
}

/** Whether any branch of the transaction (at any depth) can write. Read-only transactions skip the writer. */
export function canWrite(ops: NOp[]): boolean {
  for (const op of ops) {
    if (op.type === 'put' || op.type === 'delete') return true
    if (op.type === 'txn' && (canWrite(op.success) || canWrite(op.failure))) return true
  }
  return false
}

/** Whether any branch (at any depth) can put: what the NOSPACE alarm refuses. Deletes free space. */
export function canPut(ops: NOp[]): boolean {
  for (const op of ops) {
    if (op.type === 'put') return true
    if (op.type === 'txn' && (canPut(op.success) || canPut(op.failure))) return true
  }
  return false
}

/** The largest lease id (etcd's ids are int64). */
export const MAX_LEASE_ID = (1n << 63n) - 1n

/** Checks a lease id from a request: 0 = none (or "server chooses" for a grant), else 1 .. 2^63-1. */
export function checkLeaseId(id: bigint | number, field = 'lease'): bigint {
  const v = typeof id === 'bigint' ? id : Number.isSafeInteger(id) ? BigInt(id) : undefined
  if (v === undefined || v < 0n || v > MAX_LEASE_ID) {
    throw new KvlogError('INVALID_ARGUMENT', `${field}: a lease id is an integer in 0 .. 2^63-1`, { field })
  }
  return v
}
