/**
 * npm run bench:door [-- --seconds S] [--clients 1,64,1000] [--rounds N] [--servers kvlog,etcd]
 *   [--baseline DIR]
 *
 * What serves the etcd client port, side by side in one run: kvlog (its gRPC layer on Node's http2, the
 * gateway on the same port) and etcd 3.4 as the reference. The same durable put load as bench:compare's
 * puts workload (256-byte values over 10,000 keys, closed loop, load-worker.ts) at each client count; each
 * round runs the servers in a rotated order. Reports puts/s, p50/p99 latency and the server's CPU per put
 * (user + system time of the server process from /proc, over the puts done; for kvlog also its main thread's alone, the rest being
 * LevelDB's and libuv's threads, fsync's kernel time included), medians over the rounds. `--servers`
 * picks which run. `--baseline DIR` adds kvlog run from another built checkout (DIR/bin/kvlog), to measure
 * a change before and after in one run, the rounds alternating between them.
 */
import { resolve } from 'node:path'
import { benchOptions, exitWithUsageError } from '../lib/options.js'
import { formatNumber, table } from '../lib/report.js'
import { median } from './figures.js'
import { runLoad, runMain, type Throughput } from './generators.js'
import { checkEtcdInstalled, startEtcd, startKvlog, type System } from './systems.js'

const args = benchOptions('npm run bench:door -- [options]: what serves the etcd client port, kvlog against etcd 3.4', {
  seconds: { kind: 'number', default: 10, positive: true, value: 'S', help: 'seconds of puts per client count, server and round' },
  rounds: { kind: 'number', default: 3, positive: true, help: 'rounds, each in a rotated order of the servers' },
  clients: { kind: 'string', default: '1,64,1000', value: 'N,...', help: 'client counts' },
  servers: { kind: 'string', default: 'kvlog,etcd', value: 'NAME,...', help: 'which servers run: kvlog, etcd' },
  baseline: { kind: 'string', value: 'DIR', help: "also DIR/bin/kvlog (a built checkout), for a change's before and after" },
})
const { seconds, rounds } = args
const clientCounts = args.clients.split(',').map(Number)
const servers = args.servers.split(',')
if (clientCounts.some((n) => !(n > 0))) exitWithUsageError(`--clients must be positive numbers, got '${args.clients}'`)
for (const s of servers) if (!['kvlog', 'etcd'].includes(s)) exitWithUsageError(`--servers: no server '${s}' (kvlog, etcd)`)

interface Sample extends Throughput {
  cpuUsPerPut: number
  mainUsPerPut: number
}

async function measure(system: System, clients: number): Promise<Sample> {
  const before = await system.cpuSeconds()
  const mainBefore = await system.mainThreadCpuSeconds()
  const r = await runLoad(
    {
      cmd: 'puts',
      target: system.grpc,
      clients,
      connections: Math.max(1, Math.ceil(clients / 32)),
      durationMs: seconds * 1000,
      keyPrefix: '/bench/door/',
      keys: 10_000,
      valueBytes: 256,
    },
    clients === 1 ? 1 : 2,
  )
  const after = await system.cpuSeconds()
  const mainAfter = await system.mainThreadCpuSeconds()
  const perPut = (seconds: number) => (seconds * 1e6) / Math.max(1, r.ops)
  return { ...r, cpuUsPerPut: perPut(after - before), mainUsPerPut: perPut(mainAfter - mainBefore) }
}

async function main(): Promise<void> {
  const etcdVersion = checkEtcdInstalled()
  const systems: Array<[string, System]> = []
  if (servers.includes('kvlog')) systems.push(['kvlog', await startKvlog([])])
  const baseline = args.baseline
  if (baseline !== undefined) systems.push(['kvlog baseline', await startKvlog([], resolve(baseline, 'bin', 'kvlog'))])
  if (servers.includes('etcd')) systems.push([`etcd ${etcdVersion}`, await startEtcd()])
  try {
    const rows: Array<Array<string | number>> = [
      ['server', 'clients', 'puts/s', 'p50 ms', 'p99 ms', 'server CPU µs/put', 'main thread µs/put'],
    ]
    for (const clients of clientCounts) {
      const samples = new Map<string, Sample[]>(systems.map(([name]) => [name, []]))
      for (let round = 0; round < rounds; round++) {
        for (let i = 0; i < systems.length; i++) {
          const [name, system] = systems[(i + round) % systems.length]
          samples.get(name)!.push(await measure(system, clients))
        }
      }
      for (const [name] of systems) {
        const s = samples.get(name)!
        rows.push([
          name,
          clients,
          formatNumber(median(s.map((x) => x.opsPerSec))),
          median(s.map((x) => x.p50)).toFixed(2),
          median(s.map((x) => x.p99)).toFixed(2),
          formatNumber(median(s.map((x) => x.cpuUsPerPut))),
          // etcd's Go runtime spreads its work over threads: only kvlog's main thread means something.
          name.startsWith('kvlog') ? formatNumber(median(s.map((x) => x.mainUsPerPut))) : '',
        ])
      }
    }
    console.log(`etcd client port, durable puts, ${seconds} s per run, medians of ${rounds}, ${new Date().toISOString().slice(0, 10)}`)
    console.log(table(rows))
  } finally {
    await Promise.all(systems.map(([, s]) => s.destroy()))
  }
}

await runMain(main)
