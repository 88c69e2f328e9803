/**
 * One robustness run: a target, a traffic profile and one fault, then the checks.
 *
 *   start the target ─▶ tap watch on every key ─▶ traffic for `duration` (the fault a third of the way in)
 *     ─▶ heal ─▶ a final read of every key ─▶ the tap catches up ─▶ linearizability ─▶ watch checks
 *
 * The tap is a watch on all keys from revision 1 (verdict.ts says what it tells). The final read makes
 * the linearizability check see the store as it ended.
 */
import { FAILPOINT_NAMES, type FailpointName } from '../../log/failpoints.js'
import { rng } from '../support/random.js'
import { sleep } from '../support/wait.js'
import { isError, type Operation } from './linearizability/types.js'
import { connect, RecordingClient } from './traffic/client.js'
import { etcd } from './traffic/etcd.js'
import { kubernetes } from './traffic/kubernetes.js'
import type { Profile } from './traffic/traffic.js'
import { RecordedWatch } from './traffic/watcher.js'
import { startTarget, type Target, type TargetName } from './targets.js'
import { verdict, type Recorded, type Verdict } from './verdict.js'
import type { WatchStream } from './watch/check.js'

export const PROFILES: Record<string, Profile> = { kubernetes, etcd }
/** Faults any target takes; the failpoint names (log/failpoints.ts) only kvlog's. */
export const PROCESS_FAULTS = ['none', 'kill', 'pause', 'network'] as const

export interface RunOptions {
  target: TargetName
  profile: string
  /** 'none', 'kill', 'pause', 'network', a failpoint name (its panic) or NAME=sleep(ms). */
  failpoint: string
  durationSeconds: number
  clients?: number
  seed?: number
  /** Where progress lines go (default: nowhere). */
  log?: (line: string) => void
}

export interface RunReport extends Verdict {
  target: TargetName
  profile: string
  failpoint: string
  durationSeconds: number
  operations: number
  failedOperations: number
  watchStreams: number
  watchEvents: number
  failpointHits: number
  restarts: number
  linearizabilityViolations: number
}

export async function runRobustness(o: RunOptions): Promise<{ report: RunReport; recorded: Recorded }> {
  const profile = PROFILES[o.profile]
  if (profile === undefined) throw new Error(`unknown profile ${o.profile} (${Object.keys(PROFILES).join(', ')})`)
  const failpoint = failpointSpec(o.target, o.failpoint)
  const say = o.log ?? (() => undefined)
  const target = await startTarget(o.target, failpoint)
  const history: Operation[] = []
  const watches: WatchStream[] = []
  const random = rng(o.seed ?? 1)
  const started = performance.now()
  const clientCount = o.clients ?? 6
  const clients = Array.from(
    { length: clientCount },
    (_, i) => new RecordingClient(i, connect(target.endpoints[i % target.endpoints.length]!), history),
  )
  const tapClient = connect(target.endpoints[0]!)
  const tap = new RecordedWatch(tapClient, 'tap', { key: '\0', end: '\0', startRevision: 1, prevKv: true }, watches)
  let serial = 0
  try {
    const deadline = started + o.durationSeconds * 1000
    const fault = injectLater(target, o.failpoint, o.durationSeconds * 300, say)
    await profile.run({
      clients,
      watches,
      done: () => performance.now() > deadline,
      random,
      value: (c) => `c${c}.${++serial}`,
    })
    await fault
    await target.heal()
    say(`traffic done: ${history.length} ops; healing and reading the end state`)
    const final = await finalRead(clients[0]!)
    const tapComplete = await catchUp(tap, final)
    tap.end()
    const recorded = { history, watches, tapComplete }
    const seconds = (performance.now() - started) / 1000
    return { report: report(o, target, recorded, seconds), recorded }
  } finally {
    for (const c of clients) c.g.close()
    tap.end()
    tapClient.close()
    await target.stop()
  }
}

function failpointSpec(target: TargetName, failpoint: string): string | undefined {
  if ((PROCESS_FAULTS as readonly string[]).includes(failpoint)) return undefined
  const name = failpoint.split('=')[0] as FailpointName
  if (!FAILPOINT_NAMES.includes(name))
    throw new Error(`unknown failpoint ${failpoint} (${[...PROCESS_FAULTS, ...FAILPOINT_NAMES].join(', ')})`)
  if (target === 'etcd') throw new Error(`etcd takes process and network faults only (${PROCESS_FAULTS.join(', ')})`)
  return failpoint.includes('=') ? failpoint : `${failpoint}=panic`
}

async function injectLater(target: Target, failpoint: string, afterMs: number, say: (l: string) => void): Promise<void> {
  await sleep(afterMs)
  const member = target.endpoints.length - 1
  say(`fault: ${failpoint}`)
  if (failpoint === 'kill') await target.kill(member)
  else if (failpoint === 'pause') await target.pause(member, 1000)
  else if (failpoint === 'network') {
    const proxy = target.proxies[member]!
    proxy.refuse = true
    proxy.cutAll()
    await sleep(500)
    proxy.refuse = false
  } else if (failpoint !== 'none') await target.arm()
}

/** Reads every key until one read succeeds: the store as it ended, for the checker. */
async function finalRead(c: RecordingClient): Promise<number> {
  const deadline = performance.now() + 60_000
  while (performance.now() < deadline) {
    const out = await c.range({ key: '\0', end: '\0' })
    if (!isError(out)) return out.revision
    await sleep(200)
  }
  throw new Error('no final read succeeded in 60 s')
}

/** Waits for the tap to reach `revision`; false if it cannot (canceled for compaction, no progress). */
async function catchUp(tap: RecordedWatch, revision: number): Promise<boolean> {
  const deadline = performance.now() + 20_000
  while (tap.reached < revision && !tap.ended && performance.now() < deadline) {
    tap.requestProgress()
    await sleep(100)
  }
  return tap.reached >= revision
}

function report(o: RunOptions, target: Target, recorded: Recorded, seconds: number): RunReport {
  const { history, watches } = recorded
  const v = verdict(o.target, recorded)
  return {
    target: o.target,
    profile: o.profile,
    failpoint: o.failpoint,
    durationSeconds: Math.round(seconds * 10) / 10,
    operations: history.length,
    failedOperations: history.filter((op) => isError(op.output)).length,
    watchStreams: watches.length,
    watchEvents: watches.reduce((n, w) => n + w.responses.reduce((m, r) => m + r.events.length, 0), 0),
    failpointHits: target.failpointHits(),
    restarts: target.restarts(),
    linearizabilityViolations: v.linearizability === 'illegal' ? 1 : 0,
    ...v,
  }
}
