/**
 * The store replayed from the oracle: every key's versions, so the state at any revision can be asked
 * for; and a reference evaluation of a transaction on such a state (compares on the state before, ops in
 * order, a range sees earlier writes, one revision for every write).
 */
import { boundsOf, inBounds, type Bounds, type OracleView } from '../../apiserver/watch/checker.js'
import { outcome } from '../../log/model/kv-model.js'
import type { WireKv } from '../../support/watch-client.js'
import type { KeySelection, TxnCompare, TxnOp, TxnOpResult } from '../history.js'

/** A live key: always in base64 form (keyBase64, valueBase64). */
export type StateKv = WireKv & { keyBase64: string; valueBase64: string }

export type State = Map<string, StateKv>

/** What a write did to the store, in op order (a DELETE's kv is the key before it was deleted). */
export interface Effect {
  type: 'PUT' | 'DELETE'
  kv: StateKv
}

export function toStateKv(kv: WireKv): StateKv {
  const key = kv.keyBase64 ?? Buffer.from(kv.key ?? '', 'utf8').toString('base64')
  const value = kv.valueBase64 ?? Buffer.from(kv.value ?? '', 'utf8').toString('base64')
  const out: StateKv = {
    keyBase64: key,
    valueBase64: value,
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
  }
  if (kv.lease !== undefined && kv.lease !== '0') out.lease = kv.lease
  return out
}

export function boundsOfSelection(sel: KeySelection): Bounds {
  return boundsOf({ keyBase64: sel.keyBase64, prefix: sel.prefix, fromKey: sel.fromKey, rangeEndBase64: sel.rangeEndBase64 })
}

/** Keys of a state inside a selection, in byte order. */
export function selectKvs(state: State, sel: KeySelection): StateKv[] {
  const b = boundsOfSelection(sel)
  const out: StateKv[] = []
  for (const kv of state.values()) if (inBounds(b, Buffer.from(kv.keyBase64, 'base64'))) out.push(kv)
  return out.sort((x, y) => Buffer.compare(Buffer.from(x.keyBase64, 'base64'), Buffer.from(y.keyBase64, 'base64')))
}

interface Version {
  revision: number
  kv: StateKv | undefined
}

/**
 * Every key's versions from the oracle; stateAt(r) is the store at revision r. An oracle that starts at
 * an empty store (first = 2) knows every key. One that starts later (the log was compacted below it)
 * knows a key from its first event there on, and the key's version before that event from the event's
 * prevKv (or that it was absent, when the event created it): such a key is known at every revision from
 * first - 1; a key the oracle never shows, or whose prior version it cannot tell, is not.
 */
export class Timeline {
  private readonly keys = new Map<string, Version[]>()
  private readonly unknownBefore = new Set<string>()
  readonly first: number
  readonly last: number

  constructor(oracle: OracleView) {
    this.first = oracle.first
    this.last = oracle.last
    for (const e of oracle.events) {
      const kv = toStateKv(e.kv)
      let versions = this.keys.get(kv.keyBase64)
      if (versions === undefined) {
        this.keys.set(kv.keyBase64, (versions = []))
        if (!this.complete) {
          if (e.prevKv !== undefined) versions.push({ revision: e.prevKv.modRevision, kv: toStateKv(e.prevKv) })
          else if (!(e.type === 'PUT' && e.kv.createRevision === e.revision)) this.unknownBefore.add(kv.keyBase64)
        }
      }
      versions.push({ revision: e.revision, kv: e.type === 'PUT' ? kv : undefined })
    }
  }

  /** Whether the oracle starts at an empty store (it then knows every key at every revision). */
  get complete(): boolean {
    return this.first === 2
  }

  /** Whether the oracle knows revision r for the keys it knows (the state at r can be replayed). */
  covers(revision: number): boolean {
    return revision >= Math.max(1, this.first - 1) && revision <= this.last
  }

  /** Whether the oracle knows the key's versions at every revision it covers. */
  knows(keyBase64: string): boolean {
    return this.complete || (this.keys.has(keyBase64) && !this.unknownBefore.has(keyBase64))
  }

  /** Whether a selection's keys are all known: any selection on a complete oracle, else one known key. */
  knowsSelection(sel: KeySelection): boolean {
    return this.complete || (!sel.prefix && !sel.fromKey && sel.rangeEndBase64 === undefined && this.knows(sel.keyBase64))
  }

  /** The kvs of known keys (a read on an oracle that starts late is checked on those). */
  known<T extends WireKv>(kvs: readonly T[]): T[] {
    return this.complete ? [...kvs] : kvs.filter((kv) => this.knows(toStateKv(kv).keyBase64))
  }

  /** The first change of a key after `revision` (a PUT or a DELETE), if the log has one. */
  nextChange(keyBase64: string, revision: number): { type: 'PUT' | 'DELETE'; revision: number } | undefined {
    const v = (this.keys.get(keyBase64) ?? []).find((x) => x.revision > revision)
    return v === undefined ? undefined : { type: v.kv === undefined ? 'DELETE' : 'PUT', revision: v.revision }
  }

  stateAt(revision: number): State {
    const state: State = new Map()
    for (const [key, versions] of this.keys) {
      const kv = latestAtOrBelow(versions, revision)
      if (kv !== undefined) state.set(key, kv)
    }
    return state
  }
}

function latestAtOrBelow(versions: Version[], revision: number): StateKv | undefined {
  let lo = 0
  let hi = versions.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (versions[mid].revision <= revision) lo = mid + 1
    else hi = mid
  }
  return lo === 0 ? undefined : versions[lo - 1].kv
}

// ---------------------------------------------------------------------------------------------------------
// Reference transaction evaluation

export interface TxnOutcome {
  succeeded: boolean
  effects: Effect[]
  results: TxnOpResult[]
}

function compareHolds(state: State, c: TxnCompare): boolean {
  const kv = state.get(c.keyBase64)
  if (c.target === 'VALUE') {
    if (kv === undefined) return false
    return outcome(Buffer.compare(Buffer.from(kv.valueBase64, 'base64'), Buffer.from(String(c.value), 'base64')), c.result)
  }
  const actual = kv === undefined ? 0 : c.target === 'MOD' ? kv.modRevision : c.target === 'VERSION' ? kv.version : kv.createRevision
  return outcome(Math.sign(actual - Number(c.value)), c.result)
}

/**
 * Runs a transaction (or a lone put/delete: a one-op txn without compares) on a copy of `before`, as the
 * store would at `revision`. Returns the branch taken, the writes in op order and the op results.
 */
export function evalTxn(before: State, compare: TxnCompare[], success: TxnOp[], failure: TxnOp[], revision: number): TxnOutcome {
  const succeeded = compare.every((c) => compareHolds(before, c))
  const state: State = new Map(before)
  const effects: Effect[] = []
  const results: TxnOpResult[] = []
  for (const op of succeeded ? success : failure) {
    if (op.type === 'put') {
      const prev = state.get(op.keyBase64)
      const kv: StateKv = {
        keyBase64: op.keyBase64,
        valueBase64: op.valueBase64,
        createRevision: prev?.createRevision ?? revision,
        modRevision: revision,
        version: (prev?.version ?? 0) + 1,
      }
      if (op.lease !== undefined && op.lease !== '0') kv.lease = op.lease
      state.set(op.keyBase64, kv)
      effects.push({ type: 'PUT', kv })
      results.push({ type: 'put' })
    } else if (op.type === 'delete') {
      const gone = selectKvs(state, op.sel)
      for (const kv of gone) {
        state.delete(kv.keyBase64)
        effects.push({ type: 'DELETE', kv })
      }
      results.push({ type: 'delete', deleted: gone.length })
    } else {
      results.push({ type: 'range', kvs: selectKvs(state, op.sel) })
    }
  }
  return { succeeded, effects, results }
}

/** One comparable string per kv list (key order as given). */
export function canonList(kvs: readonly WireKv[]): string {
  return kvs
    .map((kv) => {
      const s = toStateKv(kv)
      return [s.keyBase64, s.valueBase64, s.createRevision, s.modRevision, s.version, s.lease ?? '0'].join('|')
    })
    .join(',')
}
