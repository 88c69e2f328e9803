/**
 * Named failpoints for robustness tests, in the manner of etcd's gofail: compiled in everywhere, reachable
 * only when the process started with KVLOG_FAILPOINTS set, e.g.
 *
 *   KVLOG_FAILPOINTS="beforeCommit=panic;beforeWatchSend=sleep(100);compactBatch=panic@3"
 *
 * `panic` ends the process at once with SIGKILL (no cleanup, no flush: a crash at that point); `sleep(ms)`
 * stalls there; `off` skips the step the point guards (read with failpointOff: e.g. a leader that never
 * steps down, to show that a check catches a second leader); `@N` acts from the Nth time the point is reached on (earlier hits pass). A term
 * `armedBy=PATH` holds every point back until that file exists (a runner creates it once the server is up
 * and serving its traffic; a file works in worker threads too). The variable is read once when this module
 * loads, so a call site costs one boolean check when it is unset:
 *
 *   if (failpointsOn) failpoint('beforeCommit')
 *
 * Each hit that acts is written to stderr as "kvlog failpoint: NAME ACTION" (with writeSync, so the line is
 * out before a panic and also from a worker thread), which is how a runner counts them.
 */
import { existsSync, writeSync } from 'node:fs'
import { KvlogError } from './errors.js'

export type FailpointName =
  /** The level writer's group commit, before its batch is written / after it is durable, before the answers. */
  | 'beforeCommit'
  | 'afterCommit'
  /** Compaction, after one of its batches is written. */
  | 'compactBatch'
  /** The etcd Watch stream, before a response with events is queued / before a progress answer. */
  | 'beforeWatchSend'
  | 'beforeProgress'
  /** The cluster applier, after a message is applied and before it is marked durable and answered. */
  | 'applierAfterApply'
  /** The cluster publisher, before a message is published to the stream. */
  | 'beforePublish'
  /** The cluster election's step-down of a leader (`off`: it keeps leading, whatever its lease says). */
  | 'leaderStepDown'

export const FAILPOINT_NAMES: readonly FailpointName[] = [
  'beforeCommit',
  'afterCommit',
  'compactBatch',
  'beforeWatchSend',
  'beforeProgress',
  'applierAfterApply',
  'beforePublish',
  'leaderStepDown',
]

interface Action {
  kind: 'panic' | 'sleep' | 'off'
  ms: number
  from: number
  hits: number
}

export interface Failpoints {
  actions: Map<FailpointName, Action>
  armedBy: string | undefined
}

export function parseFailpoints(spec: string | undefined): Failpoints {
  const out = new Map<FailpointName, Action>()
  let armedBy: string | undefined
  for (const term of (spec ?? '').split(';').filter((t) => t.trim() !== '')) {
    const arm = /^\s*armedBy=(.+?)\s*$/.exec(term)
    if (arm !== null) {
      armedBy = arm[1]
      continue
    }
    const m = /^\s*(\w+)\s*=\s*(panic|off|sleep\((\d+)\))(?:@(\d+))?\s*$/.exec(term)
    if (m === null || !FAILPOINT_NAMES.includes(m[1] as FailpointName))
      throw new KvlogError('INVALID_ARGUMENT', `KVLOG_FAILPOINTS: cannot parse "${term}"`)
    out.set(m[1] as FailpointName, {
      kind: m[2] === 'panic' || m[2] === 'off' ? m[2] : 'sleep',
      ms: Number(m[3] ?? 0),
      from: Number(m[4] ?? 1),
      hits: 0,
    })
  }
  return { actions: out, armedBy }
}

const { actions, armedBy } = parseFailpoints(process.env.KVLOG_FAILPOINTS)
let armed = armedBy === undefined

export const failpointsOn = actions.size > 0

const pause = new Int32Array(new SharedArrayBuffer(4))

/** Acts if the point is armed: a panic kills the process; a sleep blocks this thread (use in sync code). */
export function failpoint(name: FailpointName): void {
  const a = due(name)
  if (a?.kind === 'sleep') Atomics.wait(pause, 0, 0, a.ms)
}

/** As failpoint, but a sleep lets the event loop run meanwhile (use in async code). */
export async function failpointAsync(name: FailpointName): Promise<void> {
  const a = due(name)
  if (a?.kind === 'sleep') await new Promise((r) => setTimeout(r, a.ms))
}

/** Whether the point is armed with `off`: the caller skips the step it guards. */
export function failpointOff(name: FailpointName): boolean {
  return due(name)?.kind === 'off'
}

function due(name: FailpointName): Action | undefined {
  const a = actions.get(name)
  if (a === undefined) return undefined
  armed ||= existsSync(armedBy!)
  if (!armed || ++a.hits < a.from) return undefined
  writeSync(2, `kvlog failpoint: ${name} ${a.kind}\n`)
  if (a.kind === 'panic') process.kill(process.pid, 'SIGKILL')
  return a
}
