/**
 * The cluster fault matrix: one fault per run, on a fresh cluster of three nats-servers and three
 * `kvlog serve` members, while two writers per member put unique keys through the native API (each
 * request given up after 2 s, then the next one sent):
 *
 *   <signal>:<target>   signal kill (SIGKILL, restarted after the window) or stop (SIGSTOP for STOP_MS,
 *                       then SIGCONT); target one of TARGETS: the nats-server that leads the log stream,
 *                       that leads the election bucket, that is JetStream's meta leader, that serves a
 *                       follower's or the leader's log consumer, that the kvlog leader's NATS connection
 *                       goes through, or the kvlog leader or a follower member.
 *
 * Per run: the longest gap with no acknowledged write for the writers on the surviving members (from the
 * fault to the end of the window); whether exactly one member publishes as leader after one lease (below);
 * acknowledged writes missing on any member at the end (must be 0), and whether every
 * member's state digest (sha256 of every key, value and revision) is the same at the end (no fork); a
 * member not ready a minute after the window (its applier stopped) is reported with why, and the others
 * are compared. For a
 * nats-server that led a stream, JetStream's own election time for it (until the stream names another
 * leader) is reported, and for every run the longest stretch the log stream and the election bucket each
 * had no working leader (the victim named while it is down counts as none; a stopped server's return can
 * wake an election of a stream it did not lead): the bound is the longer of those + 2 s, and never below
 * 3 s (faults that move no stream leader). For the
 * meta leader's server, JetStream's own meta election time is measured and reported beside it.
 *
 * One publishing leader: from one lease after the fault to the end of the window every member is asked,
 * every LEADER_SAMPLE_MS, whether it takes writes as leader (role), under which term, and how long ago it
 * last renewed its lease successfully. A member that does not answer (stopped, or its process is) publishes
 * nothing and is not counted; one that has not seen the newest lease yet and follows is not a publisher
 * either. Broken: a member that takes writes as leader with its last successful renewal older than one
 * lease (it should have stepped down), two members that take writes under renewals within the lease at
 * once, or no such member at the end of the window. Fence rejections (publishes the stream refused because
 * another leader's message got there first) are summed over the members and reported.
 */
import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect } from 'nats'
import { DEFAULT_CONFIG } from '../../../config/schema.js'
import { clusterNames } from '../../../log/jetstream/options.js'
import { listPrefix, startMembers, waitReady, type ClusterProcesses, type Member } from '../../support/cluster-processes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { sleep } from '../../support/wait.js'
import { stopProcess } from '../../support/stopped.js'

export const TARGETS = [
  'stream-leader',
  'bucket-leader',
  'meta-leader',
  'follower-consumer',
  'leader-consumer',
  'leader-connection',
  'kvlog-leader',
  'kvlog-follower',
] as const
export type Target = (typeof TARGETS)[number]
export type Signal = 'kill' | 'stop'
export interface Cell {
  signal: Signal
  target: Target
}

export interface RunResult {
  cell: string
  /** The nats-server or member the fault hit. */
  victim: string
  gapMs: number
  /** JetStream's election time for the stream the victim led (0: it led none; the window: none seen in it). */
  electionMs: number
  /** JetStream's meta election time, when the victim was the meta leader (0: it was not). */
  metaElectionMs: number
  /**
   * The longest stretch in the window during which the log stream, and the election bucket, had no working
   * leader (none named, no answer, or the victim named while it was down): JetStream's own election time
   * for each, whatever moved it (the victim's loss, or its return waking an election).
   */
  leaderlessMs: { log: number; bucket: number }
  boundMs: number
  oneLeader: boolean
  /** Why oneLeader is false ('' when it holds). */
  leaderProblem: string
  /** Publishes refused by the stream's fence, summed over the members at the end. */
  fenceRejections: number
  /** NATS connections lost or taken for dead (kvlog_cluster_nats_disconnects), summed over the members. */
  natsDisconnects: number
  /** Members whose NATS connection went through the victim nats-server (each must reconnect once). */
  onVictim: number
  lost: number
  acknowledged: number
  sameDigest: boolean
  /**
   * Members not ready within a minute after the window, each with why (the line it logged when its applier
   * stopped, if it did). Counted out of `lost` and `sameDigest`, which compare the members that are ready.
   */
  stopped: string[]
}

const CLUSTER = 'matrix'
const WARMUP_MS = 3000
/** How long after the fault the writes are watched. */
export const WINDOW_MS = 12_000
const STOP_MS = 6000
/** The leader lease at the defaults. */
const LEASE_MS = DEFAULT_CONFIG.leaderLease
const WRITERS_PER_MEMBER = 2
const REQUEST_TIMEOUT_MS = 2000
const LEADER_SAMPLE_MS = 250
/**
 * CLUSTER_FAULTS_LOGS=<dir>: the members log at debug (a line per publish attempt and outcome) and each
 * run's output is written there, one file per member and per nats-server, as `<cell>.<time>.<name>.log`,
 * with each nats-server's /jsz view of its streams.
 */
const KEEP_LOGS = process.env.CLUSTER_FAULTS_LOGS

async function keepLogs(dir: string, cell: Cell, members: Member[], nats: NatsCluster): Promise<void> {
  await mkdir(dir, { recursive: true })
  const at = `${cellName(cell).replace(':', '_')}.${new Date().toISOString().replace(/[:.]/g, '-')}`
  for (const m of members) await writeFile(join(dir, `${at}.${m.name}.log`), m.proc?.output() ?? '(not running)\n')
  for (const s of nats.servers) {
    await writeFile(join(dir, `${at}.${s.name}.log`), s.log())
    // Each server's own view of its streams (last sequence, messages, bytes): replicas that differ show here.
    const jsz = await fetch(`${s.monitorUrl}/jsz?streams=true`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.text(),
      (err: unknown) => String(err),
    )
    await writeFile(join(dir, `${at}.${s.name}.jsz.json`), jsz)
  }
}

export function cellName(c: Cell): string {
  return `${c.signal}:${c.target}`
}

/**
 * A client's put through the native API with a request timeout of REQUEST_TIMEOUT_MS, as etcd clients
 * give up on a request (a write in flight to a member that died is then sent again as a new one).
 */
async function put(m: Member, key: string, value: string): Promise<void> {
  const res = await fetch(`${m.http}/v1/kv`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key, value }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  await res.arrayBuffer()
  if (!res.ok) throw new Error(`put ${key} on ${m.name}: ${res.status}`)
}

/** The server a member's log consumer is on (its /metrics). */
async function consumerServer(m: Member): Promise<string> {
  const text = await (await fetch(`${m.http}/metrics`)).text()
  return /kvlog_cluster_consumer_server\{server="([^"]+)"\} 1/.exec(text)?.[1] ?? ''
}

interface LeaderView {
  leader: string
  role: string
  term: number
  leaseRenewedAgo: number | null
}

async function viewOf(m: Member, timeoutMs = 5000): Promise<LeaderView> {
  const s = (await (await fetch(`${m.http}/v1/status`, { signal: AbortSignal.timeout(timeoutMs) })).json()) as { cluster?: LeaderView }
  if (s.cluster === undefined) throw new Error(`${m.name}: no cluster status`)
  return s.cluster
}

async function leaderOf(m: Member): Promise<string> {
  return (await viewOf(m)).leader
}

/** A counter of the cluster engine, summed over the members (their /metrics). */
async function counterSum(members: Member[], name: string): Promise<number> {
  let sum = 0
  for (const m of members) {
    const text = await (await fetch(`${m.http}/metrics`, { signal: AbortSignal.timeout(5000) })).text()
    sum += Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
  }
  return sum
}

/**
 * Samples who publishes as leader (see the header) until `until`; '' if exactly one member did at the last
 * sample and none broke the rule at any, else what broke it.
 */
async function watchPublishers(members: Member[], until: number): Promise<string> {
  const leadingOf = async (asked: Member[]) => {
    const views = await Promise.all(
      asked.map((m) => (m.proc === undefined ? Promise.resolve(undefined) : viewOf(m, 2000).catch(() => undefined))),
    )
    return asked.flatMap((m, i) => {
      const v = views[i]
      return v?.role === 'leader' ? [{ name: m.name, term: v.term, ago: v.leaseRenewedAgo }] : []
    })
  }
  let last: string[]
  for (;;) {
    const at = Date.now()
    let leading = await leadingOf(members)
    const stale = leading.find((l) => l.ago === null || l.ago > LEASE_MS)
    if (stale !== undefined)
      return `${stale.name} took writes as leader (term ${stale.term}) with its lease renewed ${stale.ago ?? 'never'} ms before`
    // The members answer one after the other: a handover between two answers is not two leaders, so
    // two are asked again, and broken only if both still lead.
    if (leading.length > 1) leading = await leadingOf(members.filter((m) => leading.some((l) => l.name === m.name)))
    if (leading.length > 1) return `${leading.map((l) => `${l.name} (term ${l.term})`).join(' and ')} took writes as leaders at once`
    last = leading.map((l) => l.name)
    if (Date.now() >= until) break
    await sleep(Math.max(0, at + LEADER_SAMPLE_MS - Date.now()))
  }
  return last.length === 1 ? '' : 'no member took writes as leader at the end of the window'
}

async function streamLeader(urls: string, stream: string): Promise<string> {
  const nc = await connect({ servers: urls.split(','), timeout: 2000 })
  try {
    return (await (await nc.jetstreamManager({ timeout: 2000 })).streams.info(stream)).cluster?.leader ?? ''
  } finally {
    await nc.close()
  }
}

/**
 * A run's bound: JetStream's own election time for the streams kvlog needs + 2 s, taken as the longest
 * stretch in the window that the log stream or the election bucket had no working leader (a killed
 * leader's server until another is named; a stopped one until it wakes or another is named; an election
 * its return wakes), and never below 3 s, the bound for faults that move no stream leader.
 */
export function boundOf(leaderlessMs: number): number {
  return Math.max(3000, leaderlessMs + 2000)
}

/** Between two looks at the streams' leaders (watchLeaderless). */
const LEADERLESS_SAMPLE_MS = 100

/**
 * Samples the leader of each of `streams` until `until` through the servers other than `victim`, and
 * returns, per stream, the longest stretch without a working leader: STREAM.INFO naming none or not
 * answering within a second, or naming the victim while `victimDown()`.
 */
async function watchLeaderless(
  nats: NatsCluster,
  streams: string[],
  victim: string,
  victimDown: () => boolean,
  until: number,
): Promise<number[]> {
  const nc = await connect({
    servers: nats.servers.filter((s) => s.name !== victim).map((s) => s.url),
    timeout: 2000,
  })
  const longest = streams.map(() => 0)
  const since: Array<number | undefined> = streams.map(() => undefined)
  try {
    const jsm = await nc.jetstreamManager({ timeout: 1000, checkAPI: false })
    while (Date.now() < until) {
      for (let i = 0; i < streams.length; i++) {
        const asked = Date.now()
        const leader = await jsm.streams.info(streams[i]).then(
          (info) => info.cluster?.leader ?? '',
          () => '',
        )
        const working = leader !== '' && !(leader === victim && victimDown())
        if (!working) {
          since[i] ??= asked
          longest[i] = Math.max(longest[i], Date.now() - since[i]!)
        } else since[i] = undefined
      }
      await sleep(LEADERLESS_SAMPLE_MS)
    }
  } finally {
    await nc.close()
  }
  return longest
}

/** JetStream's meta leader as the running servers' monitoring endpoints report it ('' if none answers). */
async function metaLeader(nats: NatsCluster, except = ''): Promise<string> {
  for (const s of nats.servers) {
    if (s.child === undefined || s.name === except) continue
    const jsz = await fetch(`${s.monitorUrl}/jsz`, { signal: AbortSignal.timeout(1000) }).then(
      async (r) => (await r.json()) as { meta_cluster?: { leader?: string } },
      () => undefined,
    )
    const leader = jsz?.meta_cluster?.leader ?? ''
    if (leader !== '') return leader
  }
  return ''
}

/** The nats-server that member `name`'s NATS connection goes through (its client name, log/jetstream/connection.ts). */
async function connectionServer(nats: NatsCluster, name: string): Promise<string> {
  for (const s of nats.servers) {
    const connz = (await (await fetch(`${s.monitorUrl}/connz`, { signal: AbortSignal.timeout(2000) })).json()) as {
      connections?: Array<{ name?: string }>
    }
    if ((connz.connections ?? []).some((c) => c.name === `kvlog ${CLUSTER}/${name}`)) return s.name
  }
  return ''
}

async function digest(m: Member): Promise<string> {
  const { kvs } = await listPrefix(m, '/')
  return createHash('sha256')
    .update(JSON.stringify(kvs.map((kv) => [kv.key, kv.value, kv.createRevision, kv.modRevision, kv.version])))
    .digest('hex')
}

export async function runCell(cell: Cell): Promise<RunResult> {
  const nats: NatsCluster = await startNatsCluster()
  let cluster: ClusterProcesses | undefined
  let paused: (() => void) | undefined
  try {
    // Before the fault: a start that fails measured nothing (run.ts runs it again).
    const notStarted = (err: unknown) => {
      throw new Error(`the cluster did not start: ${String(err)}`)
    }
    cluster = await startMembers(nats, CLUSTER, 3, KEEP_LOGS === undefined ? [] : ['--log-level', 'debug']).catch(notStarted)
    const members = cluster.members
    for (const m of members) await waitReady(m).catch(notStarted)
    const names = clusterNames(CLUSTER)
    const leaderName = await leaderOf(members[0])
    const li = members.findIndex((m) => m.name === leaderName)
    const fi = [0, 1, 2].find((i) => i !== li)!

    // Writers: unique keys, one put after the other; every acknowledgement is recorded.
    const acks: Array<{ member: number; at: number; key: string; value: string }> = []
    let writing = true
    const writers = members.flatMap((m, mi) =>
      Array.from({ length: WRITERS_PER_MEMBER }, async (_, w) => {
        for (let i = 0; writing; i++) {
          const key = `/w/${m.name}/${w}/${i}`
          const ok = await put(m, key, String(i)).then(
            () => true,
            () => false,
          )
          if (ok) acks.push({ member: mi, at: Date.now(), key, value: String(i) })
          else await sleep(50)
        }
      }),
    )
    await sleep(WARMUP_MS)

    // The victim, and how to hit it and heal it.
    let victim = ''
    let survivors = [0, 1, 2]
    let hit: () => Promise<void>
    let heal: () => Promise<void> = () => Promise.resolve()
    let ledStream = ''
    let ledMeta = false
    if (cell.target === 'kvlog-leader' || cell.target === 'kvlog-follower') {
      const i = cell.target === 'kvlog-leader' ? li : fi
      victim = members[i].name
      survivors = survivors.filter((j) => j !== i)
      const pid = members[i].proc!.child.pid!
      if (cell.signal === 'kill') {
        hit = () => cluster!.stop(i, 'SIGKILL')
        heal = () => cluster!.start(i)
      } else {
        hit = async () => void (await stopProcess(pid, victim))
        paused = () => process.kill(pid, 'SIGCONT')
      }
    } else {
      const server =
        cell.target === 'stream-leader'
          ? await streamLeader(nats.urls, names.stream)
          : cell.target === 'bucket-leader'
            ? await streamLeader(nats.urls, `KV_${names.bucket}`)
            : cell.target === 'meta-leader'
              ? await metaLeader(nats)
              : cell.target === 'leader-connection'
                ? await connectionServer(nats, leaderName)
                : await consumerServer(members[cell.target === 'leader-consumer' ? li : fi])
      const n = nats.servers.findIndex((s) => s.name === server)
      if (n < 0) throw new Error(`no nats-server ${server} for ${cellName(cell)}`)
      victim = server
      if ((await streamLeader(nats.urls, names.stream)) === server) ledStream = names.stream
      else if ((await streamLeader(nats.urls, `KV_${names.bucket}`)) === server) ledStream = `KV_${names.bucket}`
      ledMeta = (await metaLeader(nats)) === server
      if (cell.signal === 'kill') {
        hit = () => nats.kill(n, 'SIGKILL')
        heal = () => nats.restart(n)
      } else {
        hit = async () => void (await nats.pause(n))
        paused = () => nats.resume(n)
      }
    }

    const onVictim = (await Promise.all(members.map((m) => connectionServer(nats, m.name)))).filter((s) => s === victim).length
    const faultAt = Date.now()
    await hit()
    let electionMs = 0
    const election = (async () => {
      if (ledStream === '') return
      for (;;) {
        const now = await streamLeader(nats.urls, ledStream).catch(() => '')
        if (now !== '' && now !== victim) {
          electionMs = Date.now() - faultAt
          return
        }
        if (Date.now() - faultAt > WINDOW_MS) return
        await sleep(100)
      }
    })()
    let metaElectionMs = 0
    const metaElection = (async () => {
      if (!ledMeta) return
      for (;;) {
        const now = await metaLeader(nats, victim)
        if (now !== '' && now !== victim) {
          metaElectionMs = Date.now() - faultAt
          return
        }
        if (Date.now() - faultAt > WINDOW_MS) return
        await sleep(100)
      }
    })()
    // A nats-server victim is down for the stop, or (killed) for the whole window.
    const downFor = nats.servers.some((s) => s.name === victim) ? (cell.signal === 'stop' ? STOP_MS : WINDOW_MS) : 0
    const leaderless = watchLeaderless(
      nats,
      [names.stream, `KV_${names.bucket}`],
      victim,
      () => Date.now() < faultAt + downFor,
      faultAt + WINDOW_MS,
    )
    const resumed = (async () => {
      if (paused === undefined) return
      await sleep(STOP_MS)
      paused()
      paused = undefined
    })()
    await sleep(Math.max(0, faultAt + LEASE_MS - Date.now()))
    const leaderProblem = await watchPublishers(members, faultAt + WINDOW_MS)
    await resumed
    await sleep(Math.max(0, faultAt + WINDOW_MS - Date.now()))
    await election
    await metaElection
    const [logLeaderless, bucketLeaderless] = await leaderless
    const endAt = Date.now()
    // A leader role the victim held that no other server took within the window: at least that long.
    if (ledStream !== '' && electionMs === 0) electionMs = endAt - faultAt
    if (ledMeta && metaElectionMs === 0) metaElectionMs = endAt - faultAt
    writing = false
    await Promise.all(writers)
    await heal()

    const times = acks.filter((a) => survivors.includes(a.member) && a.at >= faultAt && a.at <= endAt).map((a) => a.at)
    let gapMs = 0
    let prev = faultAt
    for (const t of [...times.sort((a, b) => a - b), endAt]) {
      gapMs = Math.max(gapMs, t - prev)
      prev = t
    }

    // Every member caught up: the same revision, every acknowledged write there, one digest. A member
    // that cannot say breaks the run; what the publishers did is said with it.
    const outcome = await settle(members, acks, cell).catch((err: Error) => {
      const logs = members.map((m) => `--- ${m.name}:\n${m.proc?.output().slice(-4000) ?? '(not running)'}`).join('\n')
      throw new Error(`${err.message}\npublishers: ${leaderProblem === '' ? 'one at a time' : leaderProblem}\n${logs}`)
    })
    return {
      cell: cellName(cell),
      victim,
      gapMs,
      electionMs,
      metaElectionMs,
      leaderlessMs: { log: logLeaderless, bucket: bucketLeaderless },
      boundMs: boundOf(Math.max(logLeaderless, bucketLeaderless)),
      oneLeader: leaderProblem === '',
      leaderProblem,
      fenceRejections: await counterSum(members, 'kvlog_cluster_fence_rejections'),
      natsDisconnects: await counterSum(members, 'kvlog_cluster_nats_disconnects'),
      onVictim,
      ...outcome,
      acknowledged: acks.length,
    }
  } finally {
    paused?.()
    if (KEEP_LOGS !== undefined && cluster !== undefined) await keepLogs(KEEP_LOGS, cell, cluster.members, nats)
    await cluster?.cleanup()
    await nats.stop()
  }
}

/**
 * Waits for every member to be ready, then for those that are to catch up; counts acknowledged writes
 * missing on any of them and compares their digests. A member not ready within a minute is reported with
 * why (a member whose applier stopped stays not ready); no member ready breaks the run.
 */
async function settle(
  members: Member[],
  acks: Array<{ key: string; value: string }>,
  cell: Cell,
): Promise<{ lost: number; sameDigest: boolean; stopped: string[] }> {
  const stopped: string[] = []
  const ready: Member[] = []
  for (const m of members) {
    const why = await waitReady(m, 60_000).then(
      () => undefined,
      (err: Error) => STOPPED_LINE.exec(m.proc?.output() ?? '')?.[1] ?? err.message,
    )
    if (why === undefined) ready.push(m)
    else stopped.push(`${m.name}: ${why}`)
  }
  if (ready.length === 0) throw new Error(`${cellName(cell)}: no member ready after the window: ${stopped.join('; ')}`)
  members = ready
  const deadline = Date.now() + 60_000
  // A linearizable list answers UNAVAILABLE while the stream cannot confirm its end (its leader still
  // being elected after the fault): asked again until the deadline.
  const listAll = () => Promise.all(members.map((m) => listPrefix(m, '/w/')))
  let lists = await listAll().catch(() => undefined)
  while ((lists === undefined || new Set(lists.map((l) => l.revision)).size > 1) && Date.now() < deadline) {
    await sleep(200)
    lists = await listAll().catch((err: Error) => (Date.now() < deadline ? undefined : Promise.reject(err)))
  }
  if (lists === undefined) lists = await listAll()
  let lost = 0
  for (const l of lists) {
    const have = new Map(l.kvs.map((kv) => [kv.key, kv.value]))
    lost += acks.filter((a) => have.get(a.key) !== a.value).length
  }
  const digests = await Promise.all(members.map((m) => digest(m)))
  return { lost, sameDigest: new Set(digests).size === 1, stopped }
}

/** What a member logs when its applier stops (log/jetstream/applier.ts). */
const STOPPED_LINE = /(member stopped applying the log at sequence [^"\n]*)/
