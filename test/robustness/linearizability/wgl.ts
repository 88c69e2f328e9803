/**
 * The Wing & Gong / Lowe linearizability search, as porcupine does it: the history as a list of call and
 * return entries in time order; try to linearize the first call whose op the model accepts on the current
 * state, lift it (its call and return) out of the list and go on from the start; at a return entry whose op
 * is not linearized yet, undo the last choice and try the next call after it. A memo of (set of linearized
 * ops, model state) already explored cuts every path that reaches a known configuration again; the set is
 * hashed with two 32-bit Zobrist words, the state by its interned id.
 *
 * Bounded: past `maxSteps` or `deadline` the answer is 'unknown', never a pass.
 */

export interface WglModel<S, I, O> {
  step(state: S, input: I, output: O): { ok: boolean; state: S }
  id(state: S): number
}

export interface WglOp<I, O> {
  input: I
  output: O
  call: number
  return: number
}

export type WglResult<S> =
  | { result: 'ok'; order: number[]; final: S }
  | {
      result: 'illegal'
      /** The longest linearizable prefix found (op indexes in order) and the state after it. */
      longest: number[]
      state: S
      /** The op whose return could not be reached with every op before it linearized. */
      stuck: number
    }
  | { result: 'unknown'; steps: number }

interface Entry {
  op: number
  call: boolean
  time: number
  match: Entry | undefined
  prev: Entry | undefined
  next: Entry | undefined
}

export interface WglLimits {
  maxSteps?: number
  deadline?: number
}

export function linearize<S, I, O>(
  model: WglModel<S, I, O>,
  initial: S,
  ops: readonly WglOp<I, O>[],
  limits: WglLimits = {},
): WglResult<S> {
  const maxSteps = limits.maxSteps ?? 5_000_000
  const deadline = limits.deadline ?? Infinity
  const head = buildList(ops)
  const z1 = Uint32Array.from(ops, () => (Math.random() * 2 ** 32) >>> 0)
  const z2 = Uint32Array.from(ops, () => (Math.random() * 2 ** 32) >>> 0)
  let h1 = 0
  let h2 = 0
  const memo = new Set<string>()
  const stack: Array<{ entry: Entry; state: S }> = []
  let state = initial
  let entry = head.next
  let steps = 0
  let longest: number[] = []
  let longestState = initial
  let stuck = -1
  while (head.next !== undefined) {
    if (++steps > maxSteps || (steps % 4096 === 0 && performance.now() > deadline)) return { result: 'unknown', steps }
    const e = entry!
    if (e.call) {
      const r = model.step(state, ops[e.op]!.input, ops[e.op]!.output)
      const key = `${(h1 ^ z1[e.op]!) >>> 0},${(h2 ^ z2[e.op]!) >>> 0},${model.id(r.state)}`
      if (r.ok && !memo.has(key)) {
        memo.add(key)
        stack.push({ entry: e, state })
        state = r.state
        h1 ^= z1[e.op]!
        h2 ^= z2[e.op]!
        lift(e)
        entry = head.next
      } else {
        entry = e.next
      }
    } else {
      if (stack.length > longest.length) {
        longest = stack.map((s) => s.entry.op)
        longestState = state
        stuck = e.op
      }
      const top = stack.pop()
      if (top === undefined) return { result: 'illegal', longest, state: longestState, stuck }
      state = top.state
      h1 ^= z1[top.entry.op]!
      h2 ^= z2[top.entry.op]!
      unlift(top.entry)
      entry = top.entry.next
    }
  }
  return { result: 'ok', order: stack.map((s) => s.entry.op), final: state }
}

/** Calls and returns in time order (a call before a return at the same time: they overlap). */
function buildList<I, O>(ops: readonly WglOp<I, O>[]): Entry {
  const entries: Entry[] = []
  ops.forEach((op, i) => {
    const call: Entry = { op: i, call: true, time: op.call, match: undefined, prev: undefined, next: undefined }
    const ret: Entry = { op: i, call: false, time: op.return, match: undefined, prev: undefined, next: undefined }
    call.match = ret
    entries.push(call, ret)
  })
  entries.sort((a, b) => a.time - b.time || (a.call === b.call ? 0 : a.call ? -1 : 1))
  const head: Entry = { op: -1, call: false, time: -Infinity, match: undefined, prev: undefined, next: undefined }
  let last = head
  for (const e of entries) {
    last.next = e
    e.prev = last
    last = e
  }
  return head
}

function lift(call: Entry): void {
  call.prev!.next = call.next
  call.next!.prev = call.prev
  const ret = call.match!
  ret.prev!.next = ret.next
  if (ret.next) ret.next.prev = ret.prev
}

function unlift(call: Entry): void {
  const ret = call.match!
  ret.prev!.next = ret
  if (ret.next) ret.next.prev = ret
  call.prev!.next = call
  call.next!.prev = call
}
