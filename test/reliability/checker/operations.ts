/**
 * Operation by operation against the replayed oracle:
 *
 *   durability    an acknowledged write is in the log at the revision it was acknowledged with, and its
 *                 events there are exactly what it did (evaluated on the state just before);
 *   revision      no two acknowledged writes share a revision;
 *   linearizable  a read (range, read-only txn, delete that found nothing) equals the state at its revision;
 *                 a txn's branch and range results match the reference evaluation;
 *   outcome       a write that was answered with an error was not applied; no value was applied twice;
 *                 writes with an unknown outcome are resolved (applied or not) from the log.
 *
 * Returns, per operation that has one, its linearization point (for the real-time order check).
 */
import { canonKv, type OracleEvent, type OracleView } from '../../apiserver/watch/checker.js'
import { describeOp, isWrite, objectTag, putValues, type OpRecord, type OpResult, type TxnCompare, type TxnOp } from '../history.js'
import { canonList, evalTxn, selectKvs, Timeline, toStateKv, type Effect } from './model.js'

export interface Point {
  op: OpRecord
  revision: number
  write: boolean
}

export interface OutcomeStats {
  /** Acknowledged writes (that changed something) and reads checked. */
  ackedWrites: number
  reads: number
  ackedWritesLost: number
  failedButApplied: number
  unknown: number
  unknownApplied: number
  unknownNotApplied: number
  /** Unknown outcomes the log cannot decide (deletes: they carry no unique value). */
  unknownUndecided: number
  /** Acknowledged writes the oracle cannot check: it starts after the store's start and does not know a key they depend on. */
  unchecked: number
}

export interface OperationsReport {
  points: Point[]
  stats: OutcomeStats
}

export function byRevision(oracle: OracleView): Map<number, OracleEvent[]> {
  const out = new Map<number, OracleEvent[]>()
  for (const e of oracle.events) {
    let list = out.get(e.revision)
    if (list === undefined) out.set(e.revision, (list = []))
    list.push(e)
  }
  return out
}

function canonEffect(e: Effect | OracleEvent): string {
  const kv = toStateKv(e.kv)
  // A DELETE is compared by key only: its kv carries no value, and which version died follows from the replay.
  return e.type === 'PUT' ? `PUT ${canonKv(kv)}` : `DELETE ${kv.keyBase64}`
}

function sameEvents(effects: readonly Effect[], events: readonly OracleEvent[] | undefined): boolean {
  const got = events ?? []
  return effects.length === got.length && effects.every((e, i) => canonEffect(e) === canonEffect(got[i]))
}

function showEvents(events: ReadonlyArray<Effect | OracleEvent> | undefined): string {
  return (events ?? []).map(canonEffect).join('; ').slice(0, 300) || 'nothing'
}

export function checkOperations(
  ops: readonly OpRecord[],
  oracle: OracleView,
  timeline: Timeline,
  sink: (v: string) => void,
): OperationsReport {
  const events = byRevision(oracle)
  const valueCount = new Map<string, number>()
  for (const e of oracle.events) {
    if (e.type !== 'PUT') continue
    const v = toStateKv(e.kv).valueBase64
    valueCount.set(v, (valueCount.get(v) ?? 0) + 1)
    const tag = objectTag(v)
    if (tag !== undefined) valueCount.set(tag, (valueCount.get(tag) ?? 0) + 1)
  }
  const stats: OutcomeStats = {
    ackedWrites: 0,
    reads: 0,
    ackedWritesLost: 0,
    failedButApplied: 0,
    unknown: 0,
    unknownApplied: 0,
    unknownNotApplied: 0,
    unknownUndecided: 0,
    unchecked: 0,
  }
  const points: Point[] = []
  const owner = new Map<number, OpRecord>()

  for (const r of ops) {
    const op = r.op
    const values = putValues(op)
    for (const v of values) {
      if ((valueCount.get(v) ?? 0) > 1) sink(`[outcome] ${describeOp(r)}: its value was applied ${valueCount.get(v)} times`)
    }
    if (r.outcome !== 'ok') {
      if (!isWrite(op)) continue
      const applied = values.some((v) => valueCount.has(v))
      if (r.outcome === 'fail' && applied) {
        stats.failedButApplied++
        sink(`[outcome] ${describeOp(r)}: answered as failed, but it was applied`)
      } else if (r.outcome === 'unknown') {
        stats.unknown++
        if (applied) stats.unknownApplied++
        else if (values.length > 0) stats.unknownNotApplied++
        else stats.unknownUndecided++
      }
      continue
    }
    const res = r.result
    if (res === undefined) continue
    let rev = res.revision
    if (isWrite(op) ? rev < timeline.first : rev < timeline.first - 1) {
      // Answered at a revision the oracle starts after (compacted before it was read): nothing to replay.
      if (isWrite(op)) stats.unchecked++
      continue
    }
    if (op.type === 'object' && op.verb === 'delete') {
      // The resource API answers a delete with the deleted version: the delete is the key's next change.
      const next = timeline.nextChange(op.keyBase64, rev)
      if (next?.type !== 'DELETE') {
        stats.ackedWrites++
        stats.ackedWritesLost++
        sink(
          `[durability] ${describeOp(r)}: acknowledged, but the log's next change of the key after ${rev} is ${next === undefined ? 'none' : `a ${next.type} at ${next.revision}`}`,
        )
        continue
      }
      rev = next.revision
    }
    if (op.type === 'leaseRevoke') {
      checkRevoke(r, op.lease, rev, timeline, sink)
      continue
    }
    if (op.type === 'compact' || op.type === 'leaseGrant') continue

    if (op.type === 'range') {
      stats.reads++
      const at = op.revision ?? rev
      if (at < timeline.first - 1) continue
      if (!timeline.covers(at)) {
        sink(`[linearizable] ${describeOp(r)}: read at revision ${at}, beyond the log's last revision ${timeline.last}`)
        continue
      }
      // On an oracle that starts late, the keys it knows are checked (the others may predate it).
      const want = timeline.known(selectKvs(timeline.stateAt(at), op.sel))
      const got = timeline.known(res.kvs ?? [])
      if (canonList(want) !== canonList(got)) {
        sink(
          `[linearizable] ${describeOp(r)}: read ${canonList(got).slice(0, 200)}, the state at ${at} is ${canonList(want).slice(0, 200)}`,
        )
      }
      if (op.revision === undefined) points.push({ op: r, revision: rev, write: false })
      continue
    }

    // put, delete, txn: did it write (then at `rev`), or was it a read at `rev`?
    const { compare, success, failure } = asTxn(op, res)
    const branch = op.type === 'txn' ? (res.succeeded ? success : failure) : success
    const deletedSomething =
      op.type === 'delete'
        ? (res.deleted ?? 0) > 0
        : op.type === 'object'
          ? op.verb === 'delete'
          : (res.results ?? []).some((x) => (x.deleted ?? 0) > 0)
    const wrote = branch.some((o) => o.type === 'put') || deletedSomething
    if (wrote && (rev > timeline.last || !timeline.covers(rev - 1))) {
      stats.ackedWrites++
      stats.ackedWritesLost++
      sink(`[durability] ${describeOp(r)}: acknowledged at revision ${rev}, beyond the log's last revision ${timeline.last}`)
      continue
    }
    if (!wrote && !timeline.covers(rev)) {
      sink(`[linearizable] ${describeOp(r)}: read at revision ${rev}, beyond the log's last revision ${timeline.last}`)
      continue
    }
    if (!knowsAll(timeline, compare, [...success, ...failure])) {
      if (wrote) stats.unchecked++
      continue
    }
    const expected = evalTxn(timeline.stateAt(wrote ? rev - 1 : rev), compare, success, failure, rev)
    if (wrote) {
      stats.ackedWrites++
      const clash = owner.get(rev)
      if (clash !== undefined) sink(`[revision] ${describeOp(r)} and ${describeOp(clash)} were both acknowledged with revision ${rev}`)
      owner.set(rev, r)
      if (!sameEvents(expected.effects, events.get(rev))) {
        stats.ackedWritesLost++
        sink(`[durability] ${describeOp(r)}: did ${showEvents(expected.effects)} at ${rev}, the log has ${showEvents(events.get(rev))}`)
      }
      points.push({ op: r, revision: rev, write: true })
    } else {
      stats.reads++
      if (expected.effects.length > 0)
        sink(
          `[linearizable] ${describeOp(r)}: wrote nothing at ${rev}, but on the state at ${rev} it would do ${showEvents(expected.effects)}`,
        )
      points.push({ op: r, revision: rev, write: false })
    }
    if (op.type === 'object' && !expected.succeeded) {
      sink(`[linearizable] ${describeOp(r)}: succeeded, but on the state before ${rev} its precondition does not hold`)
    } else if (op.type === 'txn') {
      if (expected.succeeded !== res.succeeded)
        sink(
          `[linearizable] ${describeOp(r)}: took the ${res.succeeded ? 'success' : 'failure'} branch, the compares on the state before ${rev} say otherwise`,
        )
      else checkTxnResults(r, expected.results, sink)
    } else if (op.type === 'delete' && expected.effects.length !== (res.deleted ?? 0) && wrote) {
      sink(`[linearizable] ${describeOp(r)}: deleted ${res.deleted}, the state before ${rev} had ${expected.effects.length} such keys`)
    }
  }
  return { points, stats }
}

/** An acknowledged revoke: at the revision it answered, no key (that the oracle knows) is attached to the lease. */
function checkRevoke(r: OpRecord, lease: string, rev: number, timeline: Timeline, sink: (v: string) => void): void {
  if (!timeline.covers(rev)) {
    sink(`[durability] ${describeOp(r)}: acknowledged at revision ${rev}, beyond the log's last revision ${timeline.last}`)
    return
  }
  const attached = timeline.known([...timeline.stateAt(rev).values()]).filter((kv) => kv.lease === lease)
  if (attached.length > 0) {
    sink(
      `[durability] ${describeOp(r)}: acknowledged at revision ${rev}, but the log still has ${attached.map((kv) => Buffer.from(kv.keyBase64, 'base64').toString()).join(', ')} attached to it there`,
    )
  }
}

/** Whether the oracle knows every key a transaction compares, writes or reads (always, from an empty store). */
function knowsAll(timeline: Timeline, compare: readonly TxnCompare[], ops: readonly TxnOp[]): boolean {
  return (
    compare.every((c) => timeline.knows(c.keyBase64)) &&
    ops.every((o) => (o.type === 'put' ? timeline.knows(o.keyBase64) : timeline.knowsSelection(o.sel)))
  )
}

/** An operation as the transaction it is on the log (an object write: kube-apiserver's, as apiserver/resources/store.ts writes it). */
function asTxn(op: OpRecord['op'], res: OpResult): { compare: TxnCompare[]; success: TxnOp[]; failure: TxnOp[] } {
  if (op.type === 'txn') return op
  if (op.type === 'object') {
    const compare: TxnCompare[] = [{ keyBase64: op.keyBase64, target: 'MOD', result: 'EQUAL', value: op.resourceVersion ?? 0 }]
    const write: TxnOp =
      op.verb === 'delete'
        ? { type: 'delete', sel: { keyBase64: op.keyBase64 } }
        : { type: 'put', keyBase64: op.keyBase64, valueBase64: res.valueBase64 ?? '' }
    return { compare, success: [write], failure: [] }
  }
  if (op.type === 'put')
    return { compare: [], success: [{ type: 'put', keyBase64: op.keyBase64, valueBase64: op.valueBase64, lease: op.lease }], failure: [] }
  if (op.type === 'delete') return { compare: [], success: [{ type: 'delete', sel: op.sel }], failure: [] }
  return { compare: [], success: [], failure: [] }
}

function checkTxnResults(r: OpRecord, expected: ReturnType<typeof evalTxn>['results'], sink: (v: string) => void): void {
  const got = r.result?.results ?? []
  if (got.length !== expected.length) {
    sink(`[linearizable] ${describeOp(r)}: ${got.length} op results, expected ${expected.length}`)
    return
  }
  expected.forEach((want, i) => {
    const g = got[i]
    if (g.type !== want.type) sink(`[linearizable] ${describeOp(r)}: result ${i} is a ${g.type}, expected a ${want.type}`)
    else if (want.type === 'delete' && g.deleted !== want.deleted)
      sink(`[linearizable] ${describeOp(r)}: result ${i} deleted ${g.deleted}, expected ${want.deleted}`)
    else if (want.type === 'range' && canonList(g.kvs ?? []) !== canonList(want.kvs ?? [])) {
      sink(
        `[linearizable] ${describeOp(r)}: range result ${i} is ${canonList(g.kvs ?? []).slice(0, 200)}, expected ${canonList(want.kvs ?? []).slice(0, 200)}`,
      )
    }
  })
}
