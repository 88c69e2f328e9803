/**
 * A recorded robustness history, door-neutral: what each client asked (Input), what it was told (Output),
 * and when (call and return, performance.now() of the recording process). Keys and values are latin1
 * strings, so comparing two strings orders them as their bytes.
 *
 * An operation whose outcome the client never learned (a timeout, a dropped connection) has the output
 * `{ error: 'unknown' }` and return = Infinity: it may or may not have happened, at any time after its call.
 */

/** One key (no `end`), every key >= key (`end` = "\0"), or [key, end). */
export interface RangeReq {
  key: string
  end?: string
  /** 0 / absent: the current state. */
  revision?: number
  limit?: number
  keysOnly?: boolean
  countOnly?: boolean
  /** A serializable read may be served by a member that is behind: checked against its own header revision. */
  serializable?: boolean
}

export type CompareTarget = 'VALUE' | 'VERSION' | 'CREATE' | 'MOD' | 'LEASE'
export type CompareResult = 'EQUAL' | 'NOT_EQUAL' | 'LESS' | 'GREATER'

export interface Compare {
  key: string
  target: CompareTarget
  result: CompareResult
  value: string | number
}

export type TxnOp =
  | { type: 'range'; req: RangeReq }
  | { type: 'put'; key: string; value: string; lease?: string }
  | { type: 'delete'; key: string; end?: string }

export type Input =
  | TxnOp
  | { type: 'txn'; compare: Compare[]; success: TxnOp[]; failure: TxnOp[] }
  | { type: 'compact'; revision: number }
  | { type: 'leaseGrant'; ttl: number }
  | { type: 'leaseRevoke'; id: string }
  | { type: 'defragment' }

export interface Kv {
  key: string
  value: string
  create: number
  mod: number
  version: number
  lease?: string
}

export interface RangeResult {
  kvs: Kv[]
  count: number
  more: boolean
}

export type OpResult = ({ type: 'range' } & RangeResult) | { type: 'put' } | { type: 'delete'; deleted: number }

/**
 * The errors the model predicts ('compacted': a read or compaction below the compacted revision;
 * 'future-rev': above the current one; 'lease-not-found'); 'unknown': the outcome was never learned;
 * 'not-sent': the client had no connection, so the request never left it.
 */
export type ErrorCode = 'compacted' | 'future-rev' | 'lease-not-found' | 'unknown' | 'not-sent'

export type Output =
  /** An unknown write may carry the revision a watch saw it at: then it happened, exactly there. */
  | { error: ErrorCode; revision?: number }
  | { revision: number; range: RangeResult }
  | { revision: number; deleted?: number }
  | { revision: number; succeeded: boolean; results: OpResult[] }
  | { revision: number; id: string }

export interface Operation {
  client: number
  input: Input
  output: Output
  call: number
  return: number
}

export interface WatchEvent {
  type: 'PUT' | 'DELETE'
  kv: Kv
  prevKv?: Kv
}

export const UNKNOWN: Output = { error: 'unknown' }

export function isError(o: Output): o is { error: ErrorCode; revision?: number } {
  return 'error' in o
}

/** Whether the op can change the store (a failed or unknown one of these may still have happened). */
export function isWrite(input: Input): boolean {
  switch (input.type) {
    case 'range':
    case 'defragment':
      return false
    case 'txn':
      return [...input.success, ...input.failure].some((o) => o.type !== 'range')
    default:
      return true
  }
}
