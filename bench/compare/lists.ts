/**
 * npm run bench:lists [-- --seconds S] [--rounds N] [--baseline DIR] [--etcd] [--big N]
 *
 * kvlog's 1,000-key prefix lists through the etcd client port, alone: bench:compare's ranges workload
 * (1,000 keys of 256 bytes, 8 clients listing the whole prefix, closed loop, load-worker.ts) without etcd,
 * with the server's CPU per list (user + system time of the process from /proc, and of its main thread
 * alone, over the lists done). `--baseline DIR` runs kvlog from another built checkout (DIR/bin/kvlog)
 * beside this one, the rounds alternating which goes first, to measure a change before and after in one
 * run; `--etcd` adds etcd 3.4 (its CPU is the whole process's: its main thread means nothing). Medians over the rounds. On a shared machine lists/s follows the other load; CPU per list less so.
 * `--big N` adds bench:compare's big list (workloads/big-list.ts) of N objects of 1 KiB on each server:
 * one paged list at a time, its time and the server's RSS growth.
 */
import { resolve } from 'node:path'
import { benchOptions } from '../lib/options.js'
import { formatNumber, table } from '../lib/report.js'
import { median } from './figures.js'
import { runLoad, runMain } from './generators.js'
import { checkEtcdInstalled, startEtcd, startKvlog, type System } from './systems.js'
import { loadBigList, measureBigList, type BigListRun } from './workloads/big-list.js'

const args = benchOptions("npm run bench:lists -- [options]: kvlog's 1,000-key prefix lists through the etcd client port", {
  seconds: { kind: 'number', default: 5, positive: true, value: 'S', help: 'seconds of lists per server and round' },
  rounds: { kind: 'number', default: 3, positive: true, help: 'rounds, each in a rotated order of the servers' },
  baseline: { kind: 'string', value: 'DIR', help: "also DIR/bin/kvlog (a built checkout), for a change's before and after" },
  etcd: { kind: 'flag', help: 'also etcd 3.4' },
  big: { kind: 'number', default: 0, help: "also bench:compare's paged list of N objects of 1 KiB on each server (0: none)" },
})
const { seconds, rounds } = args
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

/** The big list on every server, the rounds alternating which goes first. */
async function bigLists(systems: Array<[string, System]>, keys: number): Promise<void> {
  const page = 500
  for (const [, system] of systems) await loadBigList(system, keys, 2)
  const runs = new Map<string, BigListRun[]>(systems.map(([name]) => [name, []]))
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < systems.length; i++) {
      const [name, system] = systems[(i + round) % systems.length]
      runs.get(name)!.push(await measureBigList(system, keys, page, 1000))
    }
  }
  const rows: Array<Array<string | number>> = [['server', 'list ms', 'RSS growth MB', 'anonymous MB', 'RSS before MB']]
  for (const [name] of systems) {
    const m = (f: (x: BigListRun) => number) => median(runs.get(name)!.map(f))
    const mb = (f: (x: BigListRun) => number) => (m(f) / 1e6).toFixed(1)
    rows.push([name, formatNumber(m((x) => x.ms)), mb((x) => x.rssGrowth), mb((x) => x.anonGrowth), mb((x) => x.rssBefore)])
  }
  console.log(`\na paged list of ${keys} objects of 1 KiB (pages of ${page} at one revision), medians of ${rounds}`)
  console.log(table(rows))
}

async function main(): Promise<void> {
  const systems: Array<[string, System]> = [['kvlog', await startKvlog()]]
  const baseline = args.baseline
  if (baseline !== undefined) systems.push(['kvlog baseline', await startKvlog([], resolve(baseline, 'bin', 'kvlog'))])
  if (args.etcd) systems.push([`etcd ${checkEtcdInstalled()}`, await startEtcd()])
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
    if (args.big > 0) await bigLists(systems, args.big)
  } finally {
    await Promise.all(systems.map(([, s]) => s.destroy()))
  }
}

await runMain(main)
