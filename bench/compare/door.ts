/**
 * npm run bench:door [-- --seconds S] [--clients 1,64,1000] [--rounds N]
 *
 * What serves the etcd client port, side by side in one run: kvlog with `--grpc-server kvlog` (its own
 * gRPC on node:http2, the gateway on the same port), kvlog with `--grpc-server grpc-js`, and etcd 3.4 as
 * the reference. The same durable put load as bench:compare's puts workload (256-byte values over 10,000
 * keys, closed loop, load-worker.ts) at each client count; each round runs the three servers in a
 * rotated order. Reports puts/s, p50/p99 latency and the server's CPU per put (user + system time of
 * the server process from /proc, over the puts done), medians over the rounds.
 */
import { readFile } from 'node:fs/promises'
import { formatNumber, parseBenchArgs, table } from '../lib/report.js'
import { closeGenerators, runLoad, type Throughput } from './generators.js'
import { checkEtcdInstalled, startEtcd, startKvlog, type System } from './systems.js'

const args = parseBenchArgs()
const seconds = Number(args.flags.get('seconds') ?? 10)
const rounds = Number(args.flags.get('rounds') ?? 3)
const clientCounts = (args.flags.get('clients') ?? '1,64,1000').split(',').map(Number)

/** CPU seconds (user + system) the process has used so far. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100)
}

interface Sample extends Throughput {
  cpuUsPerPut: number
}

async function measure(system: System, clients: number): Promise<Sample> {
  const before = await cpuSeconds(system.pid())
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
  const after = await cpuSeconds(system.pid())
  return { ...r, cpuUsPerPut: ((after - before) * 1e6) / Math.max(1, r.ops) }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

async function main(): Promise<void> {
  const etcdVersion = checkEtcdInstalled()
  const systems: Array<[string, System]> = [
    ['kvlog (own gRPC on node:http2)', await startKvlog(['--grpc-server', 'kvlog'])],
    ['kvlog (grpc-js)', await startKvlog(['--grpc-server', 'grpc-js'])],
    [`etcd ${etcdVersion}`, await startEtcd()],
  ]
  try {
    const rows: Array<Array<string | number>> = [['server', 'clients', 'puts/s', 'p50 ms', 'p99 ms', 'server CPU µs/put']]
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
        ])
      }
    }
    console.log(`etcd client port, durable puts, ${seconds} s per run, medians of ${rounds}, ${new Date().toISOString().slice(0, 10)}`)
    console.log(table(rows))
  } finally {
    await Promise.all(systems.map(([, s]) => s.destroy()))
  }
}

try {
  await main()
} catch (err) {
  console.error(err)
  process.exitCode = 1
} finally {
  closeGenerators()
}
setTimeout(() => process.exit(), 1000).unref()
