/**
 * npm run bench:cluster [-- --json | -o json] [--rounds N] [--seconds S] [--watchers N] [--watch-rate R]
 *                       [--only puts|watch|failover] [--baseline DIR]
 *
 * A three-member etcd 3.4 cluster against three nats-servers + three kvlog members, all on this machine
 * (cluster-systems.ts), driven by the same load generators as bench:compare (load-worker.ts) with their
 * connections spread over every member:
 *   puts      gRPC puts (256-byte values) with 64 and 1,000 clients, closed loop: puts/s and p99
 *   watch     1,000 gRPC watchers on one prefix spread over the members while a writer commits as fast
 *             as it can (--watch-rate caps it): deliveries/s
 *   failover  SIGKILL the leader; ms until a put started after the kill is accepted by a surviving member
 *             (the killed member is restarted before the next measurement)
 * --only measures one of them (e.g. several failovers without the minutes of load in between).
 * During the puts, each kvlog member's write phases (cluster-phases.ts) are taken from its /metrics and
 * shown per phase beside both systems' put latencies from the clients, so the slowest phase is visible
 * from one run.
 * Every cluster first takes unrecorded puts (a warm-up); every round measures both systems, alternating
 * which goes first; the table shows medians over rounds and kvlog / etcd with the target each ratio is
 * held to. --baseline DIR adds a third cluster of kvlog
 * members from another built checkout (DIR/bin/kvlog), measured in the same rounds, for a change's before
 * and after.
 */
import { benchOptions, JSON_OPTION } from '../lib/options.js'
import { endProgress, runBench, formatNumber, median, progress, table } from '../lib/report.js'
import { resolve } from 'node:path'
import { FULL, ratio, type Scale } from './figures.js'
import { closeGenerators, runLoad, type Throughput } from './generators.js'
import { call, connect } from './grpc.js'
import { startEtcdCluster, startKvlogCluster, type ClusterSystem } from './cluster-systems.js'
import { addDifference, scrapePhases, summarize, type PhaseHistograms, type PhaseSummary } from './cluster-phases.js'
import { checkEtcdInstalled } from './systems.js'
import { grpcFanOut } from './workloads/watch.js'

interface Row {
  name: string
  unit: string
  higherIsBetter: boolean
  /** The ratio kvlog / etcd aimed at (≥ for higher-is-better figures, ≤ otherwise); undefined: none. */
  target?: number
  kvlog: number[]
  etcd: number[]
  baseline: number[]
}

/** Which column a cluster's figures go to. */
type Column = 'kvlog' | 'etcd' | 'baseline'

const args = benchOptions('npm run bench:cluster -- [options]: a three-member etcd 3.4 cluster against three kvlog members on NATS', {
  json: JSON_OPTION,
  output: { kind: 'string', short: 'o', choices: ['json', 'table'], default: 'table', help: '-o json: the same as --json' },
  rounds: { kind: 'number', default: 3, positive: true, help: 'rounds, each measuring every cluster, alternating which goes first' },
  seconds: { kind: 'number', default: 5, positive: true, value: 'S', help: 'seconds per measured phase' },
  watchers: { kind: 'number', default: 1000, positive: true, help: 'gRPC watchers on one prefix' },
  'watch-rate': { kind: 'number', default: 20_000, positive: true, value: 'R', help: "the watch writer's puts a second at most" },
  only: { kind: 'string', choices: ['puts', 'watch', 'failover'], help: 'measure one of them' },
  baseline: { kind: 'string', value: 'DIR', help: "a third cluster of DIR/bin/kvlog's members (a built checkout), in the same rounds" },
})
const json = args.json || args.output === 'json'
const { rounds, seconds } = args
const scale: Scale = {
  ...FULL,
  seconds,
  watchers: args.watchers,
  watchStreams: 48,
  watchRate: args['watch-rate'],
  watchSeconds: seconds,
  graceMs: 10_000,
}
const only = args.only
const runs = (part: string) => only === undefined || only === part
const now = () => performance.now()
/** Unrecorded puts on each cluster before the first round. */
const WARM_UP_MS = 2000

/** Connections: at least 3 per generator (so every generator reaches every member), one per 32 clients. */
function putLoad(target: string, clients: number, durationMs = seconds * 1000): Promise<Throughput> {
  const connections = Math.max(3 * scale.generators, Math.ceil(clients / 32 / 3) * 3)
  return runLoad(
    {
      cmd: 'puts',
      target,
      clients,
      connections,
      durationMs,
      keyPrefix: '/bench/put/',
      keys: 10_000,
      valueBytes: 256,
    },
    scale.generators,
  )
}

/** Puts with a deadline on one member until one started after `t0` is accepted; resolves with its end. */
async function firstAccepted(grpc: string, t0: number, give: number): Promise<number> {
  const client = connect(grpc)
  try {
    while (now() - t0 < give) {
      // grpc-js takes call options between the request and the callback.
      const put = client.kv.Put as unknown as (req: object, options: { deadline: number }, cb: (err: unknown) => void) => void
      const ok = await new Promise<boolean>((resolve) =>
        put.call(
          client.kv,
          { key: Buffer.from('/bench/failover'), value: Buffer.from(String(now())) },
          { deadline: Date.now() + 1000 },
          (err) => resolve(err === null),
        ),
      )
      if (ok) return now()
      await new Promise((r) => setTimeout(r, 20))
    }
    return Infinity
  } finally {
    client.close()
  }
}

/** SIGKILL the leader; ms until a surviving member accepts a put. Restarts the killed member after. */
async function failover(system: ClusterSystem): Promise<number> {
  const li = await system.leader()
  const leader = system.members[li]
  const survivors = system.members.filter((_, i) => i !== li)
  // Warm connections (and a write through each survivor) before the kill.
  for (const m of survivors) {
    const c = connect(m.grpc)
    await call(c.kv.Put.bind(c.kv), { key: Buffer.from('/bench/failover'), value: Buffer.from('warm') })
    c.close()
  }
  process.kill(leader.pid(), 'SIGKILL')
  const t0 = now()
  const done = Math.min(...(await Promise.all(survivors.map((m) => firstAccepted(m.grpc, t0, 60_000)))))
  await leader.restart()
  return done - t0
}

/** Per put load (clients): each kvlog member's phase histograms, summed over rounds. */
const phases = new Map<number, PhaseHistograms[]>()
const PHASE_ORDER = ['queue', 'forward', 'publish', 'delivery', 'apply', 'majority', 'write']
/** The phases every member goes through for every message, also shown member by member. */
const PER_MEMBER = ['delivery', 'apply']

async function measure(system: ClusterSystem, column: Column, rows: Map<string, Row>, note: (s: string) => void): Promise<void> {
  const add = (name: string, unit: string, higherIsBetter: boolean, target: number | undefined, value: number) => {
    const row = rows.get(name) ?? { name, unit, higherIsBetter, target, kvlog: [], etcd: [], baseline: [] }
    row[column].push(value)
    rows.set(name, row)
  }
  for (const clients of runs('puts') ? [64, 1000] : []) {
    note(`${column}: puts, ${clients} clients`)
    const urls = column === 'kvlog' ? system.members.map((m) => m.http!) : []
    const before = await scrapePhases(urls)
    const r = await putLoad(system.grpc, clients)
    if (urls.length > 0) {
      const total = phases.get(clients) ?? []
      addDifference(total, before, await scrapePhases(urls))
      phases.set(clients, total)
    }
    add(`put-${clients}-clients-per-sec`, 'puts/s', true, 1.0, r.opsPerSec)
    add(`put-${clients}-clients-p50-ms`, 'ms', false, undefined, r.p50)
    add(`put-${clients}-clients-p99-ms`, 'ms', false, undefined, r.p99)
  }
  if (runs('watch')) {
    note(`${column}: watch fan-out, ${scale.watchers} watchers`)
    const fan = await grpcFanOut(system, scale)
    add(`watch-${scale.watchers}w-deliveries-per-sec`, 'events/s', true, 2.0, fan.deliveriesPerSec)
    add(`watch-${scale.watchers}w-writes-per-sec`, 'rev/s', true, undefined, fan.writesPerSec)
  }
  if (runs('failover')) {
    note(`${column}: leader failover`)
    add('failover-ms', 'ms', false, 1.0, await failover(system))
  }
}

async function main(): Promise<void> {
  const etcdVersion = checkEtcdInstalled()
  const started = Date.now()
  const loadBefore = (await import('node:os')).loadavg()
  const t0 = now()
  const note = (s: string) => {
    progress(`${((now() - t0) / 1000).toFixed(0)} s  ${s}`)
    if (!process.stderr.isTTY && process.env.BENCH_VERBOSE) process.stderr.write(`${s}\n`)
  }
  note('starting three etcd members, three nats-servers and three kvlog members')
  const baselineDir = args.baseline
  const [etcd, kvlog] = [await startEtcdCluster(), await startKvlogCluster()]
  const baseline = baselineDir === undefined ? undefined : await startKvlogCluster(3, resolve(String(baselineDir), 'bin', 'kvlog'))
  const clusters: Array<[ClusterSystem, Column]> = [
    [kvlog, 'kvlog'],
    [etcd, 'etcd'],
    ...(baseline ? [[baseline, 'baseline'] as [ClusterSystem, Column]] : []),
  ]
  const rows = new Map<string, Row>()
  try {
    // Unrecorded puts on every cluster first: the first measurement of a run would otherwise also pay for
    // the load generators' and the servers' warm-up, and it always falls to the same system.
    for (const [system, column] of clusters) {
      note(`${column}: warm-up puts`)
      await putLoad(system.grpc, 64, WARM_UP_MS)
    }
    for (let r = 0; r < rounds; r++) {
      // Each round in another order: every system goes first, in the middle and last as often.
      const order = clusters.map((_, i) => clusters[(i + r) % clusters.length])
      if (r % 2 === 1) order.reverse()
      for (const [system, column] of order) await measure(system, column, rows, (s) => note(`round ${r + 1}/${rounds}: ${s}`))
    }
  } finally {
    endProgress()
    await Promise.all([etcd.destroy(), kvlog.destroy(), baseline?.destroy()])
  }
  const load = (await import('node:os')).loadavg()
  const figures = [...rows.values()].map((row) => {
    const k = median(row.kvlog)
    const e = median(row.etcd)
    const x = ratio({ kvlog: k, etcd: e })
    const met = row.target === undefined ? undefined : row.higherIsBetter ? x >= row.target : x <= row.target
    const b = row.baseline.length > 0 ? median(row.baseline) : undefined
    return { ...row, kvlogMedian: k, etcdMedian: e, ratio: x, met, baselineMedian: b }
  })
  if (json) {
    const out: Record<string, object> = {}
    for (const f of figures) {
      out[f.name] = {
        kvlog: f.kvlogMedian,
        etcd: f.etcdMedian,
        unit: f.unit,
        ratio: Number(f.ratio.toPrecision(4)),
        ...(f.target !== undefined ? { target: f.target, met: f.met } : {}),
        ...(f.baselineMedian !== undefined ? { baseline: f.baselineMedian } : {}),
        rounds: { kvlog: f.kvlog, etcd: f.etcd, ...(baseline ? { baseline: f.baseline } : {}) },
      }
    }
    console.log(
      JSON.stringify({
        etcdVersion,
        rounds,
        seconds,
        loadAverage: { before: loadBefore, after: load },
        figures: out,
        phases: phaseReport(rows),
      }),
    )
    return
  }
  console.log(
    `kvlog (3 members, 3 nats-servers) vs etcd ${etcdVersion} (3 members), ${new Date().toISOString().slice(0, 10)}, ` +
      `${rounds} rounds of ${seconds} s, ${((Date.now() - started) / 1000).toFixed(0)} s, ` +
      `load average ${loadBefore[0].toFixed(1)} before, ${load[0].toFixed(1)} after`,
  )
  const withBaseline = baseline !== undefined
  const rowsOut: Array<Array<string | number>> = [
    ['figure', 'kvlog', 'etcd', 'unit', 'kvlog/etcd', 'target', '', ...(withBaseline ? ['baseline', 'kvlog/baseline'] : [])],
  ]
  for (const f of figures) {
    rowsOut.push([
      f.name,
      f.kvlogMedian,
      f.etcdMedian,
      f.unit,
      f.ratio.toFixed(2),
      f.target === undefined ? '' : `${f.higherIsBetter ? '≥' : '≤'} ${f.target.toFixed(1)}`,
      f.met === undefined ? '' : f.met ? 'met' : 'missed',
      ...(withBaseline ? [f.baselineMedian ?? '', f.baselineMedian ? (f.kvlogMedian / f.baselineMedian).toFixed(2) : ''] : []),
    ])
  }
  console.log(table(rowsOut))
  printPhases(phaseReport(rows))
  console.log(
    `rounds: ${figures
      .map(
        (f) =>
          `${f.name} kvlog [${f.kvlog.map(formatNumber).join(', ')}] etcd [${f.etcd.map(formatNumber).join(', ')}]` +
          (withBaseline ? ` baseline [${f.baseline.map(formatNumber).join(', ')}]` : ''),
      )
      .join('; ')}`,
  )
}

interface PhaseReport {
  clients: number
  /** The clients' own put latencies over every round (median of the rounds' figures), both systems. */
  clientsSaw: { kvlog: { p50Ms: number; p99Ms: number }; etcd: { p50Ms: number; p99Ms: number } }
  /** Over all members. */
  phases: Record<string, PhaseSummary | undefined>
  /** Member by member (m0, m1, ...) for PER_MEMBER. */
  members: Array<Record<string, PhaseSummary | undefined>>
}

function phaseReport(rows: Map<string, Row>): PhaseReport[] {
  return [...phases.entries()].map(([clients, members]) => {
    const at = (system: 'kvlog' | 'etcd', q: string) => median(rows.get(`put-${clients}-clients-${q}-ms`)?.[system] ?? [])
    return {
      clients,
      clientsSaw: {
        kvlog: { p50Ms: at('kvlog', 'p50'), p99Ms: at('kvlog', 'p99') },
        etcd: { p50Ms: at('etcd', 'p50'), p99Ms: at('etcd', 'p99') },
      },
      phases: Object.fromEntries(PHASE_ORDER.map((p) => [p, summarize(members, p)])),
      members: members.map((m) => Object.fromEntries(PER_MEMBER.map((p) => [p, summarize([m], p)]))),
    }
  })
}

function printPhases(reports: PhaseReport[]): void {
  const ms = (x: number | undefined) => (x === undefined ? '' : x < 10 ? x.toFixed(2) : formatNumber(Math.round(x)))
  for (const r of reports) {
    console.log(
      `\nkvlog write phases, ${r.clients} clients (all members, all rounds; ms). Clients saw p50/p99: ` +
        `kvlog ${ms(r.clientsSaw.kvlog.p50Ms)} / ${ms(r.clientsSaw.kvlog.p99Ms)}, etcd ${ms(r.clientsSaw.etcd.p50Ms)} / ${ms(r.clientsSaw.etcd.p99Ms)}`,
    )
    const out: Array<Array<string | number>> = [['phase', 'count', 'mean', 'p50', 'p99']]
    const line = (name: string, f: PhaseSummary | undefined) => out.push([name, f?.count ?? 0, ms(f?.meanMs), ms(f?.p50Ms), ms(f?.p99Ms)])
    for (const p of PHASE_ORDER) line(p, r.phases[p])
    r.members.forEach((m, i) => PER_MEMBER.forEach((p) => line(`${p} m${i}`, m[p])))
    console.log(table(out))
  }
}

await runBench(main, closeGenerators)
