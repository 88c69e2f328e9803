/**
 * Evaluates one checked transaction against a StateView, as etcd does:
 * 1. every compare on the chosen path (the top level and the nested txns it leads to) is decided first,
 *    on the state before the transaction;
 * 2. then the ops of the chosen branches run in order; a range sees the writes of earlier ops.
 *
 * Writes go to `view` (an OverlayView owned by the caller) and are recorded as logged ops and events. A
 * KvlogError (e.g. LEASE_NOT_FOUND) aborts the transaction; the caller drops its overlay.
 */
import { KvlogError } from './errors.js'
import { comparesHold } from './compare.js'
import { rangeRead } from './range-read.js'
import { OP_DELETE, OP_PUT, opKeyValue, type LoggedOp } from './ops.js'
import { readBounds, type OverlayView, type StateView } from './state-view.js'
import type { Event, KeyValue, OpResult } from './types.js'
import type { NOp, NRange, NTxn } from './validate.js'

export interface EvalContext {
  view: OverlayView
  /** The revision this transaction gets if it writes. */
  revision: number
  /** A view of a committed past revision, for ranges that name one (checks COMPACTED / FUTURE_REVISION). */
  readAt(revision: number): StateView
  leaseExists(lease: bigint): boolean
  /** Out: the writes, in op order. */
  ops: LoggedOp[]
  /** Out: the events of the writes, with prevKv. */
  events: Event[]
}

interface Decision {
  succeeded: boolean
  nested: Map<NTxn, Decision>
}

export async function evaluateTxn(txn: NTxn, ctx: EvalContext): Promise<{ succeeded: boolean; results: OpResult[] }> {
  const decision = await decide(txn, ctx.view)
  const results = await applyBranch(txn, decision, ctx)
  return { succeeded: decision.succeeded, results }
}

const NO_NESTED: Map<NTxn, Decision> = new Map()

async function decide(txn: NTxn, view: StateView): Promise<Decision> {
  const succeeded = txn.compare.length === 0 || (await comparesHold(view, txn.compare))
  let nested = NO_NESTED
  for (const op of succeeded ? txn.success : txn.failure) {
    if (op.type !== 'txn') continue
    if (nested === NO_NESTED) nested = new Map()
    nested.set(op, await decide(op, view))
  }
  return { succeeded, nested }
}

async function applyBranch(txn: NTxn, decision: Decision, ctx: EvalContext): Promise<OpResult[]> {
  const results: OpResult[] = []
  for (const op of decision.succeeded ? txn.success : txn.failure) results.push(await applyOp(op, decision, ctx))
  return results
}

async function applyOp(op: NOp, decision: Decision, ctx: EvalContext): Promise<OpResult> {
  switch (op.type) {
    case 'put': {
      const prev = await ctx.view.get(op.key)
      if ((op.ignoreValue || op.ignoreLease) && prev === undefined) {
        throw new KvlogError('KEY_NOT_FOUND', 'key not found: ignoreValue and ignoreLease need an existing key')
      }
      const lease = op.ignoreLease ? prev!.lease : op.lease
      if (lease !== 0n && !op.ignoreLease && !ctx.leaseExists(lease)) {
        throw new KvlogError('LEASE_NOT_FOUND', 'requested lease not found', { lease: lease.toString() })
      }
      const kv: KeyValue = {
        key: op.key,
        value: op.ignoreValue ? prev!.value : op.value,
        createRevision: prev === undefined ? ctx.revision : prev.createRevision,
        modRevision: ctx.revision,
        version: prev === undefined ? 1 : prev.version + 1,
        lease,
      }
      ctx.view.set(op.key, kv)
      record(ctx, { kind: OP_PUT, ...kv, prevRevision: prev?.modRevision ?? 0 }, prev, kv)
      return op.prevKv && prev !== undefined ? { type: 'put', prevKv: prev } : { type: 'put' }
    }
    case 'delete': {
      const victims = await readBounds(ctx.view, op.bounds)
      for (const prev of victims) {
        ctx.view.set(prev.key, null)
        record(
          ctx,
          {
            kind: OP_DELETE,
            key: prev.key,
            value: Buffer.alloc(0),
            createRevision: 0,
            version: 0,
            lease: 0n,
            prevRevision: prev.modRevision,
          },
          prev,
        )
      }
      return op.prevKv ? { type: 'delete', deleted: victims.length, prevKvs: victims } : { type: 'delete', deleted: victims.length }
    }
    case 'range':
      return { type: 'range', ...(await rangeIn(op, ctx)) }
    case 'txn': {
      const nested = decision.nested.get(op)
      if (nested === undefined) throw new TypeError('evaluateTxn: nested txn was not decided')
      return { type: 'txn', succeeded: nested.succeeded, results: await applyBranch(op, nested, ctx) }
    }
  }
}

/** Records a write; `after` is the kv a put leaves (a delete's event kv is built from the op). */
function record(ctx: EvalContext, op: LoggedOp, prev: KeyValue | undefined, after?: KeyValue): void {
  ctx.ops.push(op)
  const event: Event = { type: op.kind === OP_PUT ? 'PUT' : 'DELETE', kv: after ?? opKeyValue(op, ctx.revision) }
  if (prev !== undefined) event.prevKv = prev
  ctx.events.push(event)
}

/** A range inside a transaction: the transaction's own view, or a committed past revision it names. */
function rangeIn(op: NRange, ctx: EvalContext) {
  const current = ctx.ops.length > 0 ? ctx.revision : ctx.revision - 1
  const rev = op.options.revision
  if (rev === 0 || rev === current) return rangeRead(ctx.view, op.bounds, op.options, current)
  return rangeRead(ctx.readAt(rev), op.bounds, op.options, rev)
}
