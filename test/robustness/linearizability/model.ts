/**
 * A model of etcd's KV for the linearizability search: the store after a sequence of operations, and
 * whether an operation could have answered what it answered on that store.
 *
 * A state is immutable and keeps the one before it, so a read at an old revision is answered from the
 * state that had it (stateAt). States are interned: the same previous state and the same write give the
 * same state object and id, so the search's memo (linearized set, state id) sees equal states as equal.
 * Ids follow the chain of writes, so two states with one id also have the same past (what reads at a
 * revision depend on).
 *
 * etcd's rules kept here: every write of a request (a put, a delete that deleted something, a txn branch
 * with any such write, a revoke that deleted keys) is one revision; a compare on a missing key sees
 * version, create and mod 0 and its value compare always fails; a put with a lease that does not exist
 * fails the whole request; a read below the compacted revision fails ('compacted'), above the current one
 * too ('future-rev'); revoking a lease deletes its keys in one revision.
 */
import type { Compare, Input, Kv, OpResult, Output, RangeReq, RangeResult, TxnOp, WatchEvent } from './types.js'
import { isError } from './types.js'

export interface State {
  readonly id: number
  readonly revision: number
  readonly compacted: number
  readonly kvs: ReadonlyMap<string, Kv>
  readonly leases: ReadonlySet<string>
  readonly prev: State | undefined
  /** What the write that made this state did, in request order (empty for a state that only compacted). */
  readonly events: readonly WatchEvent[]
}

export class Model {
  private readonly interned = new Map<string, State>()
  private nextId = 1
  readonly initial: State

  constructor(initial?: { revision: number; kvs?: Kv[] }) {
    const kvs = new Map((initial?.kvs ?? []).map((kv) => [kv.key, kv]))
    this.initial = { id: 0, revision: initial?.revision ?? 1, compacted: 0, kvs, leases: new Set(), prev: undefined, events: [] }
  }

  /** The state after `input`, and whether the recorded `output` matches it (an unknown output always does). */
  step(state: State, input: Input, output: Output): { ok: boolean; state: State } {
    if (isError(output) && output.error === 'unknown') {
      const r = this.apply(state, input, undefined)
      return { ok: output.revision === undefined || (r.state.revision === output.revision && r.state !== state), state: r.state }
    }
    if (input.type === 'leaseGrant') {
      if (isError(output) || !('id' in output)) return { ok: false, state }
      if (state.leases.has(output.id)) return { ok: false, state }
      return { ok: output.revision === state.revision, state: this.apply(state, input, output.id).state }
    }
    const r = this.apply(state, input, undefined)
    return { ok: sameOutput(r.output, output), state: r.state }
  }

  /** What the model answers to `input` on `state`. */
  outputOf(state: State, input: Input): Output {
    return this.apply(state, input, undefined).output
  }

  /** `grantedId`: the id etcd assigned (a grant's output). */
  private apply(state: State, input: Input, grantedId: string | undefined): { state: State; output: Output } {
    switch (input.type) {
      case 'range':
        return { state, output: readAt(state, input.req) }
      case 'defragment':
        return { state, output: { revision: state.revision } }
      case 'compact': {
        if (input.revision <= state.compacted) return { state, output: { error: 'compacted' } }
        if (input.revision > state.revision) return { state, output: { error: 'future-rev' } }
        const next = this.intern(state, `compact:${input.revision}`, (id) => ({
          ...state,
          id,
          compacted: input.revision,
          prev: state,
          events: [],
        }))
        return { state: next, output: { revision: state.revision } }
      }
      case 'leaseGrant': {
        if (grantedId === undefined) return { state, output: { error: 'unknown' } }
        const leases = new Set(state.leases).add(grantedId)
        const next = this.intern(state, `grant:${grantedId}`, (id) => ({ ...state, id, leases, prev: state, events: [] }))
        return { state: next, output: { revision: state.revision, id: grantedId } }
      }
      case 'leaseRevoke': {
        if (!state.leases.has(input.id)) return { state, output: { error: 'lease-not-found' } }
        const keys = [...state.kvs.values()].filter((kv) => kv.lease === input.id).map((kv) => kv.key)
        const w = new Writes(state)
        for (const key of keys) w.deleteKey(key)
        const leases = new Set(state.leases)
        leases.delete(input.id)
        const next = this.commit(state, w, `revoke:${input.id}`, leases)
        return { state: next, output: { revision: next.revision } }
      }
      case 'put':
      case 'delete': {
        const r = this.txn(state, [], [input], [], JSON.stringify(input))
        if (isError(r.output)) return r
        const one = (r.output as { results: OpResult[] }).results[0]!
        return { state: r.state, output: { revision: r.state.revision, ...(one.type === 'delete' ? { deleted: one.deleted } : {}) } }
      }
      case 'txn':
        return this.txn(state, input.compare, input.success, input.failure, JSON.stringify(input))
    }
  }

  private txn(state: State, compare: Compare[], success: TxnOp[], failure: TxnOp[], desc: string): { state: State; output: Output } {
    const succeeded = compare.every((c) => compareHolds(state.kvs.get(c.key), c))
    const ops = succeeded ? success : failure
    for (const op of ops)
      if (op.type === 'put' && op.lease !== undefined && op.lease !== '0' && !state.leases.has(op.lease))
        return { state, output: { error: 'lease-not-found' } }
    const w = new Writes(state)
    const results: OpResult[] = []
    for (const op of ops) {
      if (op.type === 'put') {
        w.put(op.key, op.value, op.lease)
        results.push({ type: 'put' })
      } else if (op.type === 'delete') {
        const keys = [...w.kvs.keys()].filter((k) => inRange(k, op.key, op.end))
        for (const k of keys) w.deleteKey(k)
        results.push({ type: 'delete', deleted: keys.length })
      } else {
        const r = readAt(op.req.revision ? state : { ...state, kvs: w.kvs }, op.req)
        if (isError(r)) return { state, output: r }
        results.push({ type: 'range', ...(r as { range: RangeResult }).range })
      }
    }
    const next = this.commit(state, w, desc, state.leases)
    return { state: next, output: { revision: next.revision, succeeded, results } }
  }

  /** The state with the writes in `w` at the next revision (the same state if nothing was written). */
  private commit(state: State, w: Writes, desc: string, leases: ReadonlySet<string>): State {
    if (w.events.length === 0 && leases === state.leases) return state
    const revision = w.events.length === 0 ? state.revision : state.revision + 1
    return this.intern(state, desc, (id) => ({
      id,
      revision,
      compacted: state.compacted,
      kvs: w.kvs,
      leases,
      prev: state,
      events: w.events,
    }))
  }

  private intern(prev: State, desc: string, make: (id: number) => State): State {
    const key = `${prev.id}|${desc}`
    let s = this.interned.get(key)
    if (s === undefined) this.interned.set(key, (s = make(this.nextId++)))
    return s
  }
}

/** The writes of one request, all at revision + 1. */
class Writes {
  kvs: Map<string, Kv>
  readonly events: WatchEvent[] = []
  private readonly revision: number

  constructor(state: State) {
    this.kvs = new Map(state.kvs)
    this.revision = state.revision + 1
  }

  put(key: string, value: string, lease: string | undefined): void {
    const prev = this.kvs.get(key)
    const kv: Kv = { key, value, create: prev?.create ?? this.revision, mod: this.revision, version: (prev?.version ?? 0) + 1 }
    if (lease !== undefined && lease !== '0') kv.lease = lease
    this.kvs.set(key, kv)
    this.events.push({ type: 'PUT', kv, ...(prev ? { prevKv: prev } : {}) })
  }

  deleteKey(key: string): void {
    const prev = this.kvs.get(key)!
    this.kvs.delete(key)
    this.events.push({ type: 'DELETE', kv: { key, value: '', create: 0, mod: this.revision, version: 0 }, prevKv: prev })
  }
}

/** Whether `key` is selected by a request's key and range end (etcd's rules). */
export function inRange(key: string, from: string, end: string | undefined): boolean {
  if (end === undefined || end === '') return key === from
  if (end === '\0') return key >= from
  return key >= from && key < end
}

/** The state that answers a read at `revision` (the newest one at or below it). */
export function stateAt(state: State, revision: number): State {
  let s = state
  while (s.revision > revision && s.prev !== undefined) s = s.prev
  return s
}

export function readAt(state: State, req: RangeReq): Output {
  const rev = req.revision ?? 0
  if (rev > 0 && rev < state.compacted) return { error: 'compacted' }
  if (rev > state.revision) return { error: 'future-rev' }
  return { revision: state.revision, range: rangeOf(rev > 0 ? stateAt(state, rev) : state, req) }
}

export function rangeOf(state: Pick<State, 'kvs'>, req: RangeReq): RangeResult {
  const all = [...state.kvs.values()]
    .filter((kv) => inRange(kv.key, req.key, req.end))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const limit = req.limit ?? 0
  const page = limit > 0 ? all.slice(0, limit) : all
  const kvs = req.countOnly ? [] : req.keysOnly ? page.map((kv) => ({ ...kv, value: '' })) : page
  return { kvs, count: all.length, more: limit > 0 && all.length > limit }
}

function compareHolds(kv: Kv | undefined, c: Compare): boolean {
  if (kv === undefined && c.target === 'VALUE') return false
  let actual: string | number
  switch (c.target) {
    case 'VALUE':
      actual = kv!.value
      break
    case 'VERSION':
      actual = kv?.version ?? 0
      break
    case 'CREATE':
      actual = kv?.create ?? 0
      break
    case 'MOD':
      actual = kv?.mod ?? 0
      break
    case 'LEASE':
      actual = Number(kv?.lease ?? 0)
      break
  }
  const want = c.target === 'VALUE' ? String(c.value) : Number(c.value)
  switch (c.result) {
    case 'EQUAL':
      return actual === want
    case 'NOT_EQUAL':
      return actual !== want
    case 'LESS':
      return actual < want
    case 'GREATER':
      return actual > want
  }
}

/** Deep equality of two outputs (a missing field equals an undefined one; a missing lease equals "0"). */
export function sameOutput(a: Output, b: Output): boolean {
  return same(a, b, '')
}

function same(a: unknown, b: unknown, key: string): boolean {
  if (key === 'lease') return (a ?? '0') === (b ?? '0')
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)])
  for (const k of keys) if (!same(ra[k], rb[k], k)) return false
  return true
}
