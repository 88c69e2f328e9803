/**
 * npm run bench:compare [-- --json] [--quick] [--svg FILE] [--only NAME,...] [--seconds S] [--rounds N]
 *   [--big-keys N] [--big-revisions N]
 *
 * kvlog side by side with a real etcd 3.4, both on loopback with durable writes, each on a fresh data dir,
 * the same workloads through the same client code (grpc-js with our etcd .proto definitions, in forked
 * load generator processes: load-worker.ts). Ratios are kvlog / etcd, measured in one run; each workload
 * alternates which system goes first. Workloads (see each file under workloads/):
 *   check-perf  1. etcdctl check perf --load=l and --load=xl
 *   puts        2. gRPC puts with 1, 64 and 1,000 clients (+ kvlog native HTTP)
 *   ranges      3. point gets and 1,000-key prefix lists
 *   watch       4. watch fan-out (+ kvlog native WebSocket; paced, and at saturation), 5. resume
 *   cpu         9. server CPU per put and per watch delivery at a fixed offered load
 *   big-store   7. memory, 8. restart, 6. compaction (on a second, fresh pair of data dirs)
 * Prints a table; `--json` ends with one line {"workloads":{name:{kvlog,etcd,unit,higherIsBetter,ratio}}};
 * `--svg FILE` writes the chart (docs/bench-compare.svg), `--markdown FILE` the table for docs/benchmarks.md.
 * `--quick` runs a small version of everything; `--rounds N` sets the runs per side of the figures quoted
 * as medians (CPU per operation, watch at saturation; 3 by default).
 */
import { writeFile } from 'node:fs/promises'
import { endProgress, runBench, formatNumber, parseBenchArgs, progress, table } from '../lib/report.js'
import { isBetter, ratio, scaleFrom, type Figure, type Pair, type Scale } from './figures.js'
import { closeGenerators } from './generators.js'
import { chart } from './svg.js'
import { checkEtcdInstalled, startEtcd, startKvlog } from './systems.js'
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
}

const T0 = Date.now()
const args = parseBenchArgs()
const scale = scaleFrom(args.quick, args.flags)
const only = args.flags.get('only')?.split(',')
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
  await withPair(async (pair) => {
    for (const [name, run] of Object.entries(WORKLOADS)) {
      if (!wanted(name)) continue
      note(`${name}…`)
      figures.push(...(await run(pair, scale)))
    }
  })
  if (wanted('big-store')) {
    const kvlog = await withPair((pair) => bigStore(pair.kvlog, scale, note))
    const etcd = await withPair((pair) => bigStore(pair.etcd, scale, note))
    figures.push(...bigStoreFigures({ kvlog, etcd }, scale))
  }
  endProgress()

  const rows: Array<Array<string | number>> = [['workload', 'kvlog', 'etcd', 'unit', 'ratio', '', 'note']]
  for (const f of figures) rows.push([f.name, f.kvlog, f.etcd, f.unit, ratio(f).toFixed(2), isBetter(f) ? 'better' : 'worse', f.note ?? ''])
  console.log(
    `kvlog vs etcd ${etcdVersion}${scale.quick ? ' (--quick)' : ''}, ${new Date().toISOString().slice(0, 10)}, ${((Date.now() - started) / 1000).toFixed(0)} s`,
  )
  console.log(table(rows))
  const markdown = args.flags.get('markdown')
  if (markdown !== undefined) await writeFile(markdown, markdownTable(figures))
  const svg = args.flags.get('svg')
  if (svg !== undefined) {
    await writeFile(
      svg,
      chart(figures, `kvlog vs etcd ${etcdVersion} — ${new Date().toISOString().slice(0, 10)}${scale.quick ? ' (quick)' : ''}`),
    )
  }
  if (args.json) {
    const workloads: Record<string, object> = {}
    for (const f of figures) {
      workloads[f.name] = {
        kvlog: round(f.kvlog),
        etcd: round(f.etcd),
        unit: f.unit,
        higherIsBetter: f.higherIsBetter,
        ratio: round(ratio(f)),
        ...(f.pass ? { pass: f.pass } : {}),
      }
    }
    console.log(JSON.stringify({ workloads }))
  }
}

/** The table for docs/benchmarks.md. */
function markdownTable(figures: Figure[]): string {
  const lines = ['| workload | kvlog | etcd | unit | kvlog / etcd | | note |', '|---|---:|---:|---|---:|---|---|']
  for (const f of figures) {
    lines.push(
      `| ${f.name} | ${formatNumber(f.kvlog)} | ${formatNumber(f.etcd)} | ${f.unit} | ${ratio(f).toFixed(2)} | ${isBetter(f) ? 'better' : '**worse**'} | ${f.note ?? ''} |`,
    )
  }
  return lines.join('\n') + '\n'
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(4)) : 0
}

await runBench(main, closeGenerators)
