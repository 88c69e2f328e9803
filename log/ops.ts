/**
 * One write as an engine logs it: what a transaction evaluation produces (txn-eval.ts) and what a log
 * entry holds, whatever the engine's encoding of it.
 */
import type { KeyValue } from './types.js'

const EMPTY = Buffer.alloc(0)

export const OP_PUT = 0
export const OP_DELETE = 1

/** One write as the log stores it. */
export interface LoggedOp {
  kind: typeof OP_PUT | typeof OP_DELETE
  key: Buffer
  /** The value after a put; empty for a delete. */
  value: Buffer
  createRevision: number
  version: number
  lease: bigint
  /** modRevision of the previous live version of the key, 0 if there was none. */
  prevRevision: number
}

/** The kv a logged op leaves behind at revision `rev` (for a delete: etcd's shape, empty value, version 0). */
export function opKeyValue(op: LoggedOp, rev: number): KeyValue {
  if (op.kind === OP_DELETE) {
    return { key: op.key, value: EMPTY, createRevision: 0, modRevision: rev, version: 0, lease: 0n }
  }
  return {
    key: op.key,
    value: op.value,
    createRevision: op.createRevision,
    modRevision: rev,
    version: op.version,
    lease: op.lease,
  }
}
