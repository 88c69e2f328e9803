/**
 * One soak run: a real `kvlog serve` with a tiny quota, many concurrent clients on every front door
 * available, watches with random start revisions and resumes, compaction every few hundred ms, and a
 * fault every few seconds (faults.ts). At the end the writers stop, every live watch is brought up to
 * the final revision, the oracle is fetched, and the whole history goes through the checker.
 */
import { performance } from 'node:perf_hooks'
import { rng } from '../../support/random.js'
import { sleep } from '../../support/watch-client.js'
import { checkHistory, type CheckReport } from '../checker/index.js'
import { grpcDoor } from '../drivers/grpc.js'
import { nativeDoor } from '../drivers/native.js'
import { CONFIGMAP_WATCH, ResourcesDriver, resourcesDoor } from '../drivers/resources.js'
import type { Door } from '../drivers/types.js'
import { isWrite, type History } from '../history.js'
import { SoakAuth, TOKEN_TTL_MS, checkPermissions, type AuthReport, type SoakUser } from './auth.js'
import { Cluster } from './cluster.js'
import { FAULT_KINDS, Faults } from './faults.js'
import { WATCH_SPECS as SPECS } from '../../support/watch-specs.js'
import { WatchPool } from './watches.js'
import { runResourceClient } from './resource-clients.js'
import { Recorder, runClient, type WorkloadContext } from './workload.js'

export interface SoakOptions {
  durationSeconds: number
  seed: number
  clients?: number
  watchSlots?: number
  /** The server's fsync mode (default always). Every fault here is a process crash, which both must survive. */
  fsync?: 'always' | 'never'
  /** Go on past the duration until every kind of fault was injected at least once. */
  everyFault?: boolean
  /** Pause between faults, ms (a random value in [min, max]). */
  faultEveryMs?: [number, number]
  log?: (line: string) => void
  /** Auth enabled: some clients as users with limited permissions, the rest as root (auth.ts). */
  auth?: boolean
  /** The most of the writes whose outcome may stay unknown (default MAX_UNKNOWN_SHARE). */
  maxUnknownShare?: number
}

/**
 * The share of a soak's writes that may end with an unknown outcome before the run counts as failed
 * ([outcome]): an unknown outcome is never a violation by itself, so a server that stopped answering
 * writes would otherwise pass every check. The short soak injects a fault every half second and every
 * write in flight across a pause, a cut connection or a kill has no answer (a fifth to a quarter of
 * its writes); far more means writes go unanswered outside the faults.
 */
export const MAX_UNKNOWN_SHARE = 0.4

export interface SoakReport {
  seed: number
  fsync: string
  durationSeconds: number
  operations: number
  operationsByOutcome: Record<string, number>
  operationsByDoor: Record<string, number>
  errorCodes: Record<string, number>
  watchEvents: number
  logicalWatches: number
  watchSegments: number
  relists: number
  revisions: number
  compactions: number
  faultsInjected: Record<string, number>
  noSpaceAnswers: number
  snapshotChunks: number
  restarts: number
  /** Signal to clients let back in (stop, start, recovery read), ms. */
  restartMs: { median: number; max: number }
  violations: number
  violationsByKind: Record<string, number>
  ackedWrites: number
  ackedWritesLost: number
  failedButApplied: number
  /** Writes with an unknown outcome, how the log resolved them, and their share of the writes (bounded by maxShare). */
  unknownOutcomes: {
    total: number
    applied: number
    notApplied: number
    undecided: number
    writes: number
    share: number
    maxShare: number
  }
  violationSamples: string[]
  /** With auth: the users' operations against their permissions (auth.ts). */
  auth?: AuthReport
}

export const SERVER_ARGS = [
  '--quota-backend-bytes',
  '2MiB',
  // Only the soak compacts (after fetching the oracle); the quota check still reclaims space and raises NO_SPACE.
  '--compaction-min-retain',
  '1000000000',
  '--compaction-check-interval',
  '200ms',
  '--compaction-batch-revisions',
  '20',
  '--segment-max-entries',
  '300',
  '--watch-ring-size',
  '256',
  '--watch-catch-up-batch',
  '64',
  '--watch-progress-interval',
  '500ms',
  '--ws-heartbeat-interval',
  '5s',
  '--shutdown-timeout',
  '3s',
]

export async function runSoak(options: SoakOptions): Promise<{ report: SoakReport; check: CheckReport; history: History }> {
  const log = options.log ?? (() => undefined)
  const rnd = rng(options.seed)
  const auth = options.auth === true ? await SoakAuth.prepare(options.seed) : undefined
  const cluster = await Cluster.start(
    [...SERVER_ARGS, '--fsync', options.fsync ?? 'always', ...(auth?.serverArgs() ?? [])],
    auth?.rootToken,
  )
  if (auth !== undefined) await auth.enable(cluster.direct)
  const root = auth?.rootToken
  const doors: Door[] = [nativeDoor(cluster.http, root), grpcDoor(cluster.grpc, root), resourcesDoor(cluster.http, root)]
  const users: Record<string, SoakUser> = {}
  const recorder = new Recorder()
  let stopped = false
  const ctx: WorkloadContext = { recorder, seen: { revision: 1 }, floor: () => cluster.floor, stopped: () => stopped }
  const watches = new WatchPool(doors[0].driver('relist'))
  const faults = new Faults(cluster, watches, ctx, doors[0].driver('filler'), rng(options.seed + 1), log)
  const t0 = performance.now()
  const until = t0 + options.durationSeconds * 1000
  try {
    for (let i = 0; i < (options.watchSlots ?? 4); i++) watches.addSlot(`${doors[i % doors.length].name}${i}`, doors[i % doors.length])
    const clients = Array.from({ length: options.clients ?? 6 }, (_, n) => {
      const door = doors[n % doors.length]
      const user = auth !== undefined ? SoakAuth.userOf(n) : undefined
      const driver =
        user !== undefined && (door.name === 'native' || door.name === 'grpc')
          ? auth!.driver(door.name, door.name === 'native' ? cluster.http : cluster.grpc, user)
          : door.driver(`c${n}`)
      const rand = rng(options.seed * 31 + n)
      if (user !== undefined) users[`${door.name}${n}`] = user
      return driver instanceof ResourcesDriver
        ? runResourceClient(`${door.name}${n}`, driver, rand, ctx)
        : runClient(`${door.name}${n}`, driver, rand, ctx, user !== undefined ? TOKEN_TTL_MS * 1.5 : 0)
    })
    // Some history first, so past start revisions mean something; then the first watches.
    await sleep(500)
    SPECS.forEach((spec, i) => watches.add(`w${i}`, spec, startRevision(rnd, ctx, cluster.floor, i), i))
    for (let i = 0; i < 3; i++) watches.add(`r${i}`, CONFIGMAP_WATCH, startRevision(rnd, ctx, cluster.floor, i * 3), i)

    let stopLoops = false
    const compaction = (async () => {
      while (!stopLoops) {
        await sleep(200 + rnd() * 400)
        if (!stopLoops) await faults.compact(50 + Math.floor(rnd() * 250))
      }
    })()
    const progress = (async () => {
      while (!stopLoops) {
        await sleep(500)
        watches.requestProgress()
      }
    })()
    const adder = (async () => {
      for (let i = 0; !stopLoops && i < 60; i++) {
        await sleep(800 + rnd() * 800)
        // Every third late watch goes through the resource API.
        const spec = i % 3 === 2 ? CONFIGMAP_WATCH : SPECS[Math.floor(rnd() * SPECS.length)]
        if (!stopLoops) watches.add(`late${i}`, spec, startRevision(rnd, ctx, cluster.floor, i), i)
      }
    })()
    await injectFaults(FAULT_KINDS, faults, options, [1000, 3000], until, rnd)

    // Wind down: faults and compaction stop, the writers stop, every live watch reaches the final revision.
    log('winding down')
    stopLoops = true
    await Promise.all([compaction, adder])
    cluster.resume()
    stopped = true
    await Promise.all(clients)
    faults.releaseWaiters()
    const finalRevision = await cluster.fetchOracle()
    await catchUpWatches(watches, finalRevision, 30_000, log)
    await progress
    await cluster.fetchOracle()

    const history: History = {
      ops: recorder.ops,
      watches: watches.watches,
      recoveries: cluster.recoveries,
      oracle: cluster.oracle,
      finalRevision,
    }
    log('checking')
    const check = checkHistory(history)
    const report = summarize(options, history, check, faults, watches.stats.relists, cluster.restartMs, performance.now() - t0)
    if (auth !== undefined)
      addAuthReport(report, checkPermissions(history.ops, users, history.oracle.events, history.recoveries, auth.logins))
    return { report, check, history }
  } catch (err) {
    // What the run was doing and what the server said: a harness error alone does not tell them.
    throw new Error(
      `the soak stopped ${((performance.now() - t0) / 1000).toFixed(1)} s in (${stopped ? 'winding down' : 'running'}; ` +
        `last fault ${faults.last || 'none'}): ${(err as Error).message}; the server's last output:\n${cluster.outputTail()}`,
      { cause: err },
    )
  } finally {
    stopped = true
    await auth?.close()
    await cluster.stop()
    await Promise.all(doors.map((d) => d.close()))
  }
}

/**
 * Injects faults, every kind once per shuffled round, a random pause in `faultEveryMs` (or `gap`) apart,
 * until `until`; with everyFault, past it until every kind was injected at least once.
 */
export async function injectFaults<K extends string>(
  kinds: readonly K[],
  faults: { readonly injected: Record<string, number>; inject(kind: K): Promise<void> },
  options: Pick<SoakOptions, 'everyFault' | 'faultEveryMs'>,
  gap: [number, number],
  until: number,
  rnd: () => number,
): Promise<void> {
  const [minGap, maxGap] = options.faultEveryMs ?? gap
  let order: K[] = []
  const everyKind = () => !options.everyFault || kinds.every((k) => (faults.injected[k] ?? 0) > 0)
  while (performance.now() < until || !everyKind()) {
    await sleep(Math.max(0, Math.min(until - performance.now(), minGap + rnd() * (maxGap - minGap))))
    if (performance.now() >= until && everyKind()) break
    if (order.length === 0) order = shuffle([...kinds], rnd)
    await faults.inject(order.shift()!)
  }
}

/** Asks for progress until every live watch has seen `finalRevision` (or `timeoutMs`), then closes them. */
export async function catchUpWatches(
  watches: WatchPool,
  finalRevision: number,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!watches.caughtUp(finalRevision) && performance.now() < deadline) {
    watches.requestProgress()
    await sleep(200)
  }
  if (!watches.caughtUp(finalRevision)) log(`watches behind: ${watches.behind(finalRevision).join(', ')}`)
  await watches.stop()
}

/** Past (between the floor and the head), now, the future, or (rarely) below the floor. */
export function startRevision(rnd: () => number, ctx: WorkloadContext, floor: number, i: number): number {
  const head = ctx.seen.revision
  const kind = (i % 10) / 10 + rnd() * 0.1
  if (kind < 0.4) return floor + 1 + Math.floor(rnd() * Math.max(1, head - floor))
  if (kind < 0.7) return head + 1
  if (kind < 0.9) return head + 1 + Math.floor(rnd() * 30)
  return Math.max(2, floor - Math.floor(rnd() * 50))
}

export function shuffle<T>(list: T[], rnd: () => number): T[] {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1))
    ;[list[i], list[j]] = [list[j], list[i]]
  }
  return list
}

function count<T>(items: readonly T[], key: (t: T) => string | undefined): Record<string, number> {
  const out: Record<string, number> = {}
  for (const t of items) {
    const k = key(t)
    if (k !== undefined) out[k] = (out[k] ?? 0) + 1
  }
  return out
}

/** Adds the permission check to a report: its violations count as violations (kind "permission"). */
export function addAuthReport(report: SoakReport, auth: AuthReport): void {
  report.auth = auth
  if (auth.violations.length === 0) return
  report.violations += auth.violations.length
  report.violationsByKind.permission = auth.violations.length
  report.violationSamples.push(...auth.violations.slice(0, 20))
}

/** What the report needs of a run's faults (the single-node soak's or the cluster soak's). */
export type FaultCounts = Pick<Faults, 'compactions' | 'injected' | 'noSpaceAnswers' | 'snapshotChunks'>

export function summarize(
  options: Pick<SoakOptions, 'seed' | 'fsync' | 'maxUnknownShare'>,
  h: History,
  check: CheckReport,
  faults: FaultCounts,
  relists: number,
  restartMs: number[],
  elapsedMs: number,
): SoakReport {
  const s = check.stats
  const writes = h.ops.filter((o) => isWrite(o.op)).length
  const maxShare = options.maxUnknownShare ?? MAX_UNKNOWN_SHARE
  const share = s.unknown / Math.max(1, writes)
  if (share > maxShare) {
    check.byKind.outcome = (check.byKind.outcome ?? 0) + 1
    check.violations.push(`[outcome] ${s.unknown} of ${writes} writes ended with an unknown outcome, more than ${maxShare * 100}%`)
  }
  const violations = Object.values(check.byKind).reduce((a, b) => a + b, 0)
  const sorted = [...restartMs].sort((a, b) => a - b)
  return {
    seed: options.seed,
    fsync: options.fsync ?? 'always',
    durationSeconds: Math.round(elapsedMs / 100) / 10,
    operations: s.operations,
    operationsByOutcome: count(h.ops, (o) => o.outcome),
    operationsByDoor: count(h.ops, (o) => o.door),
    errorCodes: count(h.ops, (o) => o.code),
    watchEvents: s.watchEvents,
    logicalWatches: s.logicalWatches,
    watchSegments: s.segments,
    relists,
    revisions: s.revisions,
    compactions: faults.compactions,
    faultsInjected: faults.injected,
    noSpaceAnswers: faults.noSpaceAnswers,
    snapshotChunks: faults.snapshotChunks,
    restarts: h.recoveries.length,
    restartMs: { median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted[sorted.length - 1] ?? 0 },
    violations,
    violationsByKind: check.byKind,
    ackedWrites: s.ackedWrites,
    ackedWritesLost: s.ackedWritesLost,
    failedButApplied: s.failedButApplied,
    unknownOutcomes: {
      total: s.unknown,
      applied: s.unknownApplied,
      notApplied: s.unknownNotApplied,
      undecided: s.unknownUndecided,
      writes,
      share,
      maxShare,
    },
    violationSamples: check.violations.slice(0, 20),
  }
}
