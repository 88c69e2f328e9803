/**
 * npm run bench:compare [-- --json] [--quick] [--svg FILE] [--markdown FILE,...] [--only NAME,...] [--seconds S]
 *   [--rounds N] [--big-keys N] [--big-revisions N] [--list-keys N]
 *
 * kvlog side by side with a real etcd 3.4, both on loopback with durable writes, each workload on a fresh
 * pair of servers and data dirs, the same workloads through the same client code (grpc-js with our etcd
 * .proto definitions, in forked load generator processes: load-worker.ts). Ratios are kvlog / etcd,
 * measured in one run. Every figure is the median of `--rounds` runs per side (3; 1 with --quick), each
 * round's order the next of one sequence that alternates which system goes first (plan.ts). Workloads
 * (see each file under workloads/):
 *   check-perf  1. etcdctl check perf --load=l and --load=xl
 *   puts        2. gRPC puts with 1, 64 and 1,000 clients (+ kvlog native HTTP)
 *   ranges      3. point gets and 1,000-key prefix lists
 *   watch       4. watch fan-out (+ kvlog native WebSocket; paced, and at saturation), 5. resume
 *   cpu         9. server CPU per put and per watch delivery at a fixed offered load
 *   big-list   10. a paged list of 100,000 objects of 1 KiB: its time and the server's RSS growth
 *   big-store   7. memory, 8. restart, 6. compaction (each round on a fresh pair of data dirs)
 * Prints a table with each ratio's spread over the rounds; `--json` ends with one line (json.ts: a failed
 * measurement is null there, and the run exits 1); `--svg FILE` writes the chart (docs/bench-compare.svg);
 * `--markdown README.md,docs/benchmarks.md` rewrites those files' marked tables from this run (markdown.ts).
 * `--quick` runs a small version of everything.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { benchOptions, exitWithUsageError, JSON_OPTION } from '../lib/options.js'
import { endProgress, runBench, progress, table } from '../lib/report.js'
import { FULL, QUICK, scaleFrom, verdict, type Figure, type Pair, type Scale } from './figures.js'
import { closeGenerators } from './generators.js'
import { failedFigures, jsonLine, type RunInfo } from './json.js'
import { fillRegions, ratioText } from './markdown.js'
import { rounds } from './plan.js'
import { chart } from './svg.js'
import { checkEtcdInstalled, startEtcd, startKvlog } from './systems.js'
import { bigList } from './workloads/big-list.js'
import { bigStore, bigStoreFigures } from './workloads/big-store.js'
import { checkPerf } from './workloads/check-perf.js'
import { cpu } from './workloads/cpu.js'
import { puts } from './workloads/puts.js'
import { ranges } from './workloads/ranges.js'
import { watch } from './workloads/watch.js'

const WORKLOADS: Record<string, (pair: Pair, scale: Scale) => Promise<Figure[]>> = {
  'check-perf': checkPerf,
  puts,
  ranges,
  watch,
  cpu,
  'big-list': bigList,
}

const T0 = Date.now()
const args = benchOptions('npm run bench:compare -- [options]: kvlog against a real etcd 3.4, workload by workload', {
  json: JSON_OPTION,
  quick: { kind: 'flag', help: 'a small version of every workload (what CI runs)' },
  svg: { kind: 'string', value: 'FILE', help: 'write a chart of the ratios to FILE' },
  markdown: { kind: 'string', value: 'FILE,...', help: "rewrite the marked tables in these files from this run's figures" },
  only: { kind: 'string', value: 'NAME,...', help: `run only these workloads: ${[...Object.keys(WORKLOADS), 'big-store'].join(', ')}` },
  seconds: {
    kind: 'number',
    positive: true,
    shown: `${FULL.seconds}; ${QUICK.seconds} with --quick`,
    value: 'S',
    help: 'seconds per measured phase',
  },
  rounds: {
    kind: 'number',
    positive: true,
    shown: `${FULL.rounds}; ${QUICK.rounds} with --quick`,
    help: 'runs per system of each workload',
  },
  'big-keys': { kind: 'number', positive: true, shown: String(FULL.bigKeys), help: "the big store's keys" },
  'big-revisions': { kind: 'number', positive: true, shown: String(FULL.bigRevisions), help: "the big store's revisions" },
  'list-keys': { kind: 'number', positive: true, shown: String(FULL.listKeys), help: 'keys under the listed prefix' },
})
const scale = scaleFrom(args.quick, {
  seconds: args.seconds,
  rounds: args.rounds,
  bigKeys: args['big-keys'],
  bigRevisions: args['big-revisions'],
  listKeys: args['list-keys'],
})
const only = args.only?.split(',')
for (const name of only ?? []) if (name !== 'big-store' && !(name in WORKLOADS)) exitWithUsageError(`--only: no workload '${name}'`)
const wanted = (name: string) => only === undefined || only.includes(name)
const note = (text: string) => {
  progress(text)
  if (!process.stderr.isTTY && process.env.BENCH_VERBOSE) process.stderr.write(`${((Date.now() - T0) / 1000).toFixed(1)}s ${text}\n`)
}

async function withPair<T>(fn: (pair: Pair) => Promise<T>): Promise<T> {
  const [kvlog, etcd] = await Promise.all([startKvlog(), startEtcd()])
  try {
    return await fn({ kvlog, etcd })
  } finally {
    await Promise.all([kvlog.destroy(), etcd.destroy()])
  }
}

async function main(): Promise<void> {
  const etcdVersion = checkEtcdInstalled()
  const started = Date.now()
  const figures: Figure[] = []
  // Each workload on a fresh pair: what one leaves behind (the history of etcdctl check perf's deleted keys,
  // say) must not slow the next on one side only.
  for (const [name, run] of Object.entries(WORKLOADS)) {
    if (!wanted(name)) continue
    note(`${name}…`)
    figures.push(...(await withPair((pair) => run(pair, scale))))
  }
  if (wanted('big-store')) {
    // Each run on a fresh pair of data dirs.
    const runs = await rounds(scale.rounds, (side) => withPair((pair) => bigStore(pair[side], scale, note)))
    figures.push(...bigStoreFigures(runs, scale))
  }
  endProgress()

  const info: RunInfo = { date: new Date(T0).toISOString(), etcdVersion, quick: scale.quick, rounds: scale.rounds }
  const rows: Array<Array<string | number>> = [['workload', 'kvlog', 'etcd', 'unit', 'ratio (rounds min–max)', '', 'note']]
  for (const f of figures) rows.push([f.name, f.kvlog, f.etcd, f.unit, ratioText(f), verdict(f), f.note ?? ''])
  console.log(
    `kvlog vs etcd ${etcdVersion}${scale.quick ? ' (--quick)' : ''}, ${info.date.slice(0, 10)}, ${scale.rounds} run(s) per side, ${((Date.now() - started) / 1000).toFixed(0)} s`,
  )
  console.log(table(rows))
  const failed = failedFigures(figures)
  const svg = args.svg
  if (svg !== undefined) {
    await writeFile(svg, chart(figures, `kvlog vs etcd ${etcdVersion} — ${info.date.slice(0, 10)}${scale.quick ? ' (quick)' : ''}`))
  }
  if (args.json) console.log(jsonLine(figures, info))
  if (failed.length > 0) {
    // Tables are not written from a run with a failed measurement.
    console.error(`measurements failed (null in the JSON): ${failed.join(', ')}`)
    process.exitCode = 1
    return
  }
  for (const file of args.markdown?.split(',') ?? []) {
    await writeFile(file, fillRegions(await readFile(file, 'utf8'), figures, info))
  }
}

await runBench(main, closeGenerators)
