/**
 * npm run bench:lists [-- --seconds S] [--rounds N] [--baseline DIR] [--etcd]
 *
 * kvlog's 1,000-key prefix lists through the etcd client port, alone: bench:compare's ranges workload
 * (1,000 keys of 256 bytes, 8 clients listing the whole prefix, closed loop, load-worker.ts) without etcd,
 * with the server's CPU per list (user + system time of the process from /proc, and of its main thread
 * alone, over the lists done). `--baseline DIR` runs kvlog from another built checkout (DIR/bin/kvlog)
 * beside this one, the rounds alternating which goes first, to measure a change before and after in one
 * run; `--etcd` adds etcd 3.4 (its CPU is the whole process's: its main thread means nothing). Medians over the rounds. On a shared machine lists/s follows the other load; CPU per list less so.
 */
import { resolve } from 'node:path'
import { formatNumber, parseBenchArgs, table } from '../lib/report.js'
import { median } from './figures.js'
import { runLoad, runMain } from './generators.js'
import { checkEtcdInstalled, startEtcd, startKvlog, type System } from './systems.js'

const args = parseBenchArgs()
const seconds = Number(args.flags.get('seconds') ?? 5)
const rounds = Number(args.flags.get('rounds') ?? 3)
const PREFIX = '/bench/range/'
const KEYS = 1000

interface Sample {
  listsPerSec: number
  p50: number
  cpuUsPerList: number
  mainUsPerList: number
}

async function load(system: System): Promise<void> {
  const command = { cmd: 'puts', target: system.grpc, clients: 50, connections: 2, durationMs: 600_000 } as const
  await runLoad({ ...command, count: KEYS, keyPrefix: PREFIX, keys: KEYS, valueBytes: 256 }, 1)
}

async function measure(system: System): Promise<Sample> {
  const [cpu, main] = [await system.cpuSeconds(), await system.mainThreadCpuSeconds()]
  const r = await runLoad(
    {
      cmd: 'ranges',
      target: system.grpc,
      clients: 8,
      connections: 1,
      durationMs: seconds * 1000,
      mode: 'prefix',
      prefix: PREFIX,
      keys: KEYS,
    },
    1,
  )
  const per = (s: number) => (s * 1e6) / Math.max(1, r.ops)
  return {
    listsPerSec: r.opsPerSec,
    p50: r.p50,
    cpuUsPerList: per((await system.cpuSeconds()) - cpu),
    mainUsPerList: per((await system.mainThreadCpuSeconds()) - main),
  }
}

async function main(): Promise<void> {
  const systems: Array<[string, System]> = [['kvlog', await startKvlog()]]
  const baseline = args.flags.get('baseline')
  if (baseline !== undefined) systems.push(['kvlog baseline', await startKvlog([], resolve(baseline, 'bin', 'kvlog'))])
  if (args.flags.has('etcd')) systems.push([`etcd ${checkEtcdInstalled()}`, await startEtcd()])
  try {
    for (const [, system] of systems) await load(system)
    const samples = new Map<string, Sample[]>(systems.map(([name]) => [name, []]))
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < systems.length; i++) {
        const [name, system] = systems[(i + round) % systems.length]
        samples.get(name)!.push(await measure(system))
      }
    }
    const rows: Array<Array<string | number>> = [['server', 'lists/s', 'p50 ms', 'server CPU µs/list', 'main thread µs/list']]
    for (const [name] of systems) {
      const s = samples.get(name)!
      const m = (f: (x: Sample) => number) => median(s.map(f))
      rows.push([
        name,
        formatNumber(m((x) => x.listsPerSec)),
        m((x) => x.p50).toFixed(2),
        formatNumber(m((x) => x.cpuUsPerList)),
        name.startsWith('kvlog') ? formatNumber(m((x) => x.mainUsPerList)) : '',
      ])
    }
    console.log(`1,000-key prefix lists, 8 clients, ${seconds} s per run, medians of ${rounds}, ${new Date().toISOString().slice(0, 10)}`)
    console.log(table(rows))
  } finally {
    await Promise.all(systems.map(([, s]) => s.destroy()))
  }
}

await runMain(main)
