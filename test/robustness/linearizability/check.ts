/**
 * Checks a recorded history against the etcd model (model.ts) with the WGL search (wgl.ts).
 *
 * Before the search: reads whose answer never came are dropped (they changed nothing); so are lease grants
 * whose id never came back (nobody can use that lease) and defragments. A write whose outcome is unknown
 * stays, with return = Infinity, unless `happened` says it certainly did not happen. Serializable reads
 * are not linearizable by contract: each is checked afterwards against the linearized log at its own
 * header revision.
 *
 * With `keyLocal` (a history without compares or reads that depend on revisions), operations are split by
 * key, each key searched alone, and outputs compared without revisions: one key's history is far cheaper
 * than the product of all keys'.
 */
import { inRange, Model, rangeOf, sameOutput, stateAt, type State } from './model.js'
import { isError, isWrite, type Input, type Operation, type Output, type RangeReq } from './types.js'
import { linearize, type WglLimits } from './wgl.js'

export interface CheckOptions extends WglLimits {
  /** false: the op certainly did not happen (e.g. its unique value is in no watch that saw its revisions). */
  happened?: (op: Operation) => boolean | undefined
  keyLocal?: boolean
  /** The store before the history (default: empty at revision 1). */
  initial?: { revision: number }
}

export type CheckResult =
  | { result: 'ok'; operations: number; final: State | undefined }
  | { result: 'illegal'; operations: number; window: string }
  | { result: 'unknown'; operations: number; reason: string }

export function checkLinearizable(history: readonly Operation[], o: CheckOptions = {}): CheckResult {
  const ops = history.filter((op) => keep(op, o))
  const serializable = ops.filter((op) => op.input.type === 'range' && op.input.req.serializable === true)
  const linear = ops.filter((op) => !serializable.includes(op))
  if (o.keyLocal === true) return checkByKey(linear, o)
  const model = new Model(o.initial)
  const r = linearize({ step: (s, i, out) => model.step(s, i, out), id: (s) => s.id }, model.initial, linear, o)
  if (r.result === 'unknown') return { result: 'unknown', operations: ops.length, reason: `search stopped after ${r.steps} steps` }
  if (r.result === 'illegal')
    return { result: 'illegal', operations: ops.length, window: describeWindow(linear, r.longest, r.state, r.stuck) }
  for (const op of serializable) {
    const bad = checkSerializable(op, r.final)
    if (bad !== undefined) return { result: 'illegal', operations: ops.length, window: bad }
  }
  return { result: 'ok', operations: ops.length, final: r.final }
}

function keep(op: Operation, o: CheckOptions): boolean {
  if (op.input.type === 'defragment' || (isError(op.output) && op.output.error === 'not-sent')) return false
  const unknown = isError(op.output) && op.output.error === 'unknown'
  if (!unknown) return true
  if (!isWrite(op.input) || op.input.type === 'leaseGrant') return false
  return o.happened?.(op) !== false
}

/** A serializable read at header revision R must be the linearized store at R. */
function checkSerializable(op: Operation, final: State): string | undefined {
  if (isError(op.output) || op.input.type !== 'range' || !('range' in op.output)) return undefined
  const { revision, range } = op.output
  if (revision > final.revision) return `serializable read at revision ${revision}, past the last write (${final.revision}): ${show(op)}`
  const req: RangeReq = { ...op.input.req, revision: op.input.req.revision ?? revision }
  const want = rangeOf(stateAt(final, req.revision || revision), req)
  if (!sameOutput({ revision, range }, { revision, range: want }))
    return `serializable read differs from the store at revision ${revision}: ${show(op)}\n  store: ${JSON.stringify(want)}`
  return undefined
}

function checkByKey(ops: Operation[], o: CheckOptions): CheckResult {
  const byKey = new Map<string, Operation[]>()
  for (const op of ops) {
    const key = singleKey(op.input)
    if (key === undefined) return { result: 'unknown', operations: ops.length, reason: `not a single-key operation: ${show(op)}` }
    let list = byKey.get(key)
    if (list === undefined) byKey.set(key, (list = []))
    list.push(op)
  }
  for (const list of byKey.values()) {
    const model = new Model(o.initial)
    const step = (s: State, i: Input, out: Output) => {
      const r = model.step(s, i, { error: 'unknown' })
      if (isError(out) && out.error === 'unknown') return r
      return { ok: sameOutput(withoutRevisions(model.outputOf(s, i)), withoutRevisions(out)), state: r.state }
    }
    const r = linearize({ step, id: (s) => s.id }, model.initial, list, o)
    if (r.result === 'unknown') return { result: 'unknown', operations: ops.length, reason: `search stopped after ${r.steps} steps` }
    if (r.result === 'illegal')
      return { result: 'illegal', operations: ops.length, window: describeWindow(list, r.longest, r.state, r.stuck) }
  }
  return { result: 'ok', operations: ops.length, final: undefined }
}

function withoutRevisions(o: Output): Output {
  return JSON.parse(JSON.stringify(o, (k, v: unknown) => (k === 'revision' || k === 'create' || k === 'mod' ? undefined : v))) as Output
}

function singleKey(input: Input): string | undefined {
  const keys = new Set<string>()
  const req = (r: RangeReq) => (r.end === undefined && !r.revision ? keys.add(r.key) : keys.add('\0multi'))
  switch (input.type) {
    case 'range':
      req(input.req)
      break
    case 'put':
      keys.add(input.key)
      break
    case 'delete':
      keys.add(input.end === undefined ? input.key : '\0multi')
      break
    case 'txn':
      for (const c of input.compare) keys.add(c.target === 'VALUE' || c.target === 'VERSION' ? c.key : '\0multi')
      for (const op of [...input.success, ...input.failure]) {
        if (op.type === 'range') req(op.req)
        else if (op.type === 'put') keys.add(op.lease ? '\0multi' : op.key)
        else keys.add(op.end === undefined ? op.key : '\0multi')
      }
      break
    default:
      return undefined
  }
  return keys.size === 1 && !keys.has('\0multi') ? [...keys][0] : undefined
}

export function show(op: Operation): string {
  const ret = op.return === Infinity ? '∞' : op.return.toFixed(1)
  return `client ${op.client} [${op.call.toFixed(1)} .. ${ret}] ${JSON.stringify(op.input)} -> ${JSON.stringify(op.output)}`
}

/**
 * The smallest window that cannot be linearized: the store after the longest linearizable prefix, and the
 * ops not in it that were called before the stuck op returned (every order of them fails).
 */
function describeWindow(ops: readonly Operation[], longest: number[], state: State, stuck: number): string {
  const done = new Set(longest)
  const end = ops[stuck]?.return ?? Infinity
  const window = ops.map((op, i) => ({ op, i })).filter(({ op, i }) => !done.has(i) && op.call <= end)
  const keys = new Set<string>()
  for (const { op } of window) collectKeys(op.input, keys)
  const relevant = [...state.kvs.values()].filter((kv) => [...keys].some((k) => k === kv.key || keys.has('*')))
  const lines = [
    `cannot linearize: after ${longest.length} of ${ops.length} ops the store is at revision ${state.revision} (compacted ${state.compacted})`,
    `  keys there: ${JSON.stringify(relevant)}`,
    `  last linearized: ${
      longest
        .slice(-3)
        .map((i) => show(ops[i]!))
        .join('\n                   ') || '(none)'
    }`,
    `  none of these ${window.length} ops fits next (the first must return by ${end === Infinity ? '∞' : end.toFixed(1)}):`,
    ...window.slice(0, 20).map(({ op, i }) => `    ${i === stuck ? '*' : ' '} ${show(op)}`),
  ]
  return lines.join('\n')
}

function collectKeys(input: Input, keys: Set<string>): void {
  const add = (key: string, end?: string) => keys.add(end === undefined ? key : '*')
  if (input.type === 'range') add(input.req.key, input.req.end)
  else if (input.type === 'put') add(input.key)
  else if (input.type === 'delete') add(input.key, input.end)
  else if (input.type === 'txn') {
    for (const c of input.compare) add(c.key)
    for (const op of [...input.success, ...input.failure]) {
      if (op.type === 'range') add(op.req.key, op.req.end)
      else add(op.key, op.type === 'delete' ? op.end : undefined)
    }
  } else keys.add('*')
}

/** Every write event of the linearized store, by revision (what every watch must agree with). */
export function eventLog(final: State): Map<number, State['events']> {
  const out = new Map<number, State['events']>()
  for (let s: State | undefined = final; s !== undefined; s = s.prev) if (s.events.length > 0) out.set(s.revision, s.events)
  return out
}

export { inRange }
