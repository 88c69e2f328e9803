/**
 * One cluster soak run: three nats-servers and three `kvlog serve` members (members.ts), clients on every
 * member over the etcd (gRPC) and native doors (puts, deletes, compare-and-swap and multi-key txns,
 * leases, reads now and in the past), watches that move to the next member whenever their connection
 * drops and resume there from their last revision, compaction every few hundred ms, and a fault every
 * few seconds (cluster-faults.ts). The workload, the watch pool, the recorder and the checker are the
 * single-node soak's.
 *
 * At the end the faults stop, the writers stop, every member must be ready (caught up), every live watch
 * is brought up to the final revision, and the whole history goes through the checker. Then every
 * member's own history and state are compared with the oracle: any difference is a fork.
 *
 * With auth, the users' clients keep to one member each: a simple token is known only to the member
 * that issued it.
 */
import { performance } from 'node:perf_hooks'
import { KvlogClient } from '../../../clients/index.js'
import { canonKv, keyB64, Oracle, type LogicalWatch } from '../../apiserver/watch/checker.js'
import { rng } from '../../support/random.js'
import { sleep } from '../../support/watch-client.js'
import { WATCH_SPECS as SPECS } from '../../support/watch-specs.js'
import { checkHistory, type CheckReport } from '../checker/index.js'
import { grpcDoor } from '../drivers/grpc.js'
import { bearer, nativeDoor, wireKv } from '../drivers/native.js'
import type { Door } from '../drivers/types.js'
import type { History } from '../history.js'
import { CLUSTER_FAULT_KINDS, ClusterFaults } from './cluster-faults.js'
import { SoakMembers } from './members.js'
import { SoakAuth, TOKEN_TTL_MS, checkPermissions, type SoakUser } from './auth.js'
import { addAuthReport, catchUpWatches, injectFaults, SERVER_ARGS, startRevision, summarize, type SoakReport } from './run.js'
import { WatchPool } from './watches.js'
import { Recorder, runClient, type WorkloadContext } from './workload.js'

export interface ClusterSoakOptions {
  durationSeconds: number
  seed: number
  /** Clients, spread over the members and the two doors (default 6: every member × door pair). */
  clients?: number
  watchSlots?: number
  /** Go on past the duration until every kind of fault was injected at least once. */
  everyFault?: boolean
  /** Pause between faults, ms (a random value in [min, max]). */
  faultEveryMs?: [number, number]
  /** A directory where every member's stderr is kept (mN.log). */
  serverLogs?: string
  log?: (line: string) => void
  /** Auth enabled: some clients as users with limited permissions, the rest as root (auth.ts). */
  auth?: boolean
  /** The most of the writes whose outcome may stay unknown (default MAX_UNKNOWN_SHARE, run.ts). */
  maxUnknownShare?: number
}

export interface ClusterSoakReport extends SoakReport {
  members: number
  /** Watch segments that resumed on another member than the one their previous segment was on. */
  crossMemberResumes: number
  /** Differences between a member's own history or state and the oracle at the end (must be 0). */
  forks: number
  /** Member processes that exited without being told to (each one also a violation). */
  crashes: number
  /** The longest time without an acknowledged write while the load ran, ms (how long a fault stalled writes). */
  longestWriteGapMs: number
  /** Every member's revision at the end (all equal). */
  memberRevisions: Record<string, number>
}

/** The single-node soak's server settings without its tiny quota (the cluster soak has no NO_SPACE fault). */
const MEMBER_ARGS = SERVER_ARGS.slice(SERVER_ARGS.indexOf('--quota-backend-bytes') + 2)

const ALL = Buffer.from([0])

export async function runClusterSoak(
  options: ClusterSoakOptions,
): Promise<{ report: ClusterSoakReport; check: CheckReport; history: History }> {
  const log = options.log ?? (() => undefined)
  const rnd = rng(options.seed)
  const t0 = performance.now()
  const auth = options.auth === true ? await SoakAuth.prepare(options.seed) : undefined
  const set = await SoakMembers.start([...MEMBER_ARGS, ...(auth?.serverArgs() ?? [])], options.serverLogs).catch(async (err: unknown) => {
    await auth?.close()
    throw err
  })
  log(`3 nats-servers and ${set.size} members up in ${Math.round(performance.now() - t0)} ms`)
  const root = auth?.rootToken
  set.rootToken = root
  const users: Record<string, SoakUser> = {}
  const recorder = new Recorder()
  let stopped = false
  const ctx: WorkloadContext = { recorder, seen: { revision: 1 }, floor: () => set.floor, stopped: () => stopped }
  const watches = new WatchPool(nativeDoor(set.http(0), root).driver('relist'))
  const faults = new ClusterFaults(set, watches, ctx, rng(options.seed + 1), log)
  const started = performance.now()
  const until = started + options.durationSeconds * 1000
  let stopLoops = false
  const loops: Promise<void>[] = []
  try {
    if (auth !== undefined) {
      await auth.enable(set.direct(0))
      const without = await auth.waitEnabled(set.members.map((_, i) => set.direct(i)))
      if (without.length > 0) log(`auth not enabled on ${without.map((i) => set.members[i].name).join(', ')} after 15 s; going on`)
    }
    for (let i = 0; i < (options.watchSlots ?? 4); i++) watches.addSlot(`${i % 2 ? 'grpc' : 'native'}${i}`, movingDoor(set, i % 2, i, root))
    const clients = Array.from({ length: options.clients ?? 6 }, (_, n) => {
      const member = n % set.size
      const door = n % 2 === 0 ? nativeDoor(set.http(member), root) : grpcDoor(set.grpc(member), root)
      const name = `${door.name}${n}@m${member}`
      const user = auth !== undefined ? SoakAuth.userOf(n) : undefined
      if (user === undefined) return runClient(name, door.driver(`c${n}`), rng(options.seed * 31 + n), ctx)
      users[name] = user
      const driver = auth!.driver(n % 2 === 0 ? 'native' : 'grpc', n % 2 === 0 ? set.http(member) : set.grpc(member), user)
      return runClient(name, driver, rng(options.seed * 31 + n), ctx, TOKEN_TTL_MS * 1.5)
    })
    await sleep(500)
    SPECS.forEach((spec, i) => watches.add(`w${i}`, spec, startRevision(rnd, ctx, set.floor, i), i))

    loops.push(
      (async () => {
        while (!stopLoops) {
          await sleep(300 + rnd() * 500)
          if (!stopLoops) await faults.compact(50 + Math.floor(rnd() * 250))
        }
      })(),
      (async () => {
        while (!stopLoops) {
          await sleep(500)
          watches.requestProgress()
        }
      })(),
      (async () => {
        for (let i = 0; !stopLoops && i < 40; i++) {
          await sleep(1000 + rnd() * 1000)
          if (!stopLoops) watches.add(`late${i}`, SPECS[Math.floor(rnd() * SPECS.length)], startRevision(rnd, ctx, set.floor, i), i)
        }
      })(),
      (async () => {
        while (!stopLoops) {
          await sleep(5000)
          const acked = recorder.ops.filter((o) => o.outcome === 'ok').length
          log(`${recorder.ops.length} operations (${acked} ok), revision ${ctx.seen.revision}, floor ${set.floor}`)
        }
      })(),
    )

    await injectFaults(CLUSTER_FAULT_KINDS, faults, options, [2000, 5000], until, rnd)

    log('winding down')
    stopLoops = true
    await Promise.all(loops)
    stopped = true
    await Promise.all(clients)
    await set.allReady()
    const finalRevision = await set.fetchOracle()
    await catchUpWatches(watches, finalRevision, 60_000, log)
    await set.fetchOracle()

    const history: History = { ops: recorder.ops, watches: watches.watches, recoveries: set.recoveries, oracle: set.oracle, finalRevision }
    log('checking')
    const check = checkHistory(history)
    const members = await compareMembers(set)
    for (const v of [...members.forks, ...set.crashes.map((c) => `[crash] ${c}`)]) {
      const kind = v.startsWith('[fork]') ? 'fork' : 'crash'
      check.byKind[kind] = (check.byKind[kind] ?? 0) + 1
      if (check.byKind[kind] <= 20) check.violations.push(v)
    }
    const report: ClusterSoakReport = {
      ...summarize(
        { seed: options.seed, fsync: 'always', maxUnknownShare: options.maxUnknownShare },
        history,
        check,
        faults,
        watches.stats.relists,
        set.restartMs,
        performance.now() - started,
      ),
      members: set.size,
      crossMemberResumes: crossMemberResumes(history.watches),
      forks: members.forks.length,
      crashes: set.crashes.length,
      longestWriteGapMs: longestWriteGap(history.ops),
      memberRevisions: members.revisions,
    }
    if (auth !== undefined)
      addAuthReport(report, checkPermissions(history.ops, users, history.oracle.events, history.recoveries, auth.logins))
    return { report, check, history }
  } finally {
    stopped = stopLoops = true
    await Promise.all(loops)
    await auth?.close()
    await set.stop()
  }
}

/**
 * A door whose drivers talk to one member and whose watch connections go to the members in turn: every
 * reconnect of a watch slot (a fault, a dropped connection) resumes its watches on the next member.
 */
function movingDoor(set: SoakMembers, kind: number, offset: number, token: string | undefined): Door {
  let next = offset
  const doorOf = (i: number) => (kind === 0 ? nativeDoor(set.http(i), token) : grpcDoor(set.grpc(i), token))
  return {
    name: kind === 0 ? 'native' : 'grpc',
    driver: (label) => doorOf(offset % set.size).driver(label),
    connectWatch: (label) => {
      const i = next++ % set.size
      return doorOf(i).connectWatch(`${label}@${set.members[i].name}`)
    },
    watches: (spec) => spec.objectView !== true,
    close: async () => undefined,
  }
}

const WRITES = new Set(['put', 'delete', 'txn', 'object', 'leaseGrant', 'leaseRevoke'])

function longestWriteGap(ops: History['ops']): number {
  const ends = ops
    .filter((o) => o.outcome === 'ok' && WRITES.has(o.op.type) && o.client !== 'compactor')
    .map((o) => o.end)
    .sort((a, b) => a - b)
  let gap = 0
  for (let i = 1; i < ends.length; i++) gap = Math.max(gap, ends[i] - ends[i - 1])
  return Math.round(gap)
}

function crossMemberResumes(watches: readonly LogicalWatch[]): number {
  let n = 0
  for (const w of watches) {
    const members = w.segments.map((s) => /@(m\d+)/.exec(s.label ?? '')?.[1])
    for (let i = 1; i < members.length; i++) if (members[i] !== members[i - 1]) n++
  }
  return n
}

/**
 * Every member's own history (from the highest compact revision on) and state at the final revision,
 * against the oracle: a member whose copy differs in any revision has forked.
 */
async function compareMembers(set: SoakMembers): Promise<{ forks: string[]; revisions: Record<string, number> }> {
  const forks: string[] = []
  const revisions: Record<string, number> = {}
  const credentials = set.rootToken !== undefined ? { credentials: { token: set.rootToken } } : {}
  const clients = set.members.map((_, i) => new KvlogClient({ endpoint: set.direct(i), timeoutMs: 60_000, ...credentials }))
  const statuses = await Promise.all(clients.map((c) => c.status()))
  const floor = Math.max(set.floor, ...statuses.map((s) => s.compactRevision as number))
  const head = set.oracle.last
  const expected = set.oracle.events.filter((e) => e.revision > floor).map((e) => JSON.stringify(e))
  const state = new Map<string, string>()
  for (const e of set.oracle.events) {
    const key = keyB64(e.kv)
    if (e.type === 'PUT') state.set(key, canonKv(e.kv))
    else state.delete(key)
  }
  const expectedKvs = [...state.entries()].sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'base64'), Buffer.from(b, 'base64')))
  for (const [i, m] of set.members.entries()) {
    revisions[m.name] = statuses[i].revision as number
    if (revisions[m.name] !== head) forks.push(`[fork] ${m.name} is at revision ${revisions[m.name]}, the oracle at ${head}`)
    const own = new Oracle(floor + 1)
    await own.fetch(set.direct(i), bearer(set.rootToken))
    const got = own.events.filter((e) => e.revision <= head).map((e) => JSON.stringify(e))
    const at = got.findIndex((g, j) => g !== expected[j])
    if (at >= 0 || got.length !== expected.length) {
      const j = at >= 0 ? at : Math.min(got.length, expected.length)
      forks.push(`[fork] ${m.name}'s history differs from the oracle at event ${j}: ${got[j] ?? 'none'} vs ${expected[j] ?? 'none'}`)
    }
    const kvs = (await clients[i].range(ALL, { fromKey: true, revision: head })).kvs.map(wireKv)
    const canon = kvs.map((kv) => canonKv(kv))
    const want = expectedKvs.map(([, kv]) => kv)
    if (JSON.stringify(canon) !== JSON.stringify(want)) {
      forks.push(`[fork] ${m.name}'s state at revision ${head} differs from the oracle's replay (${canon.length} keys vs ${want.length})`)
    }
  }
  return { forks, revisions }
}
