/**
 * `--markdown FILE[,FILE...]`: the comparison's tables, written into README.md and docs/benchmarks.md
 * between marker comments, from one run, with its date, so no table mixes runs:
 *
 *   <!-- bench:compare NAME -->
 *   ...replaced...
 *   <!-- /bench:compare NAME -->
 *
 * NAME `summary` is the README's two-column table (a figure is in kvlog's favour only when its ratio,
 * rounded as printed, is better than 1.00 in the figure's direction; 1.00 is level), NAME `current` the
 * full table of docs/benchmarks.md. A file must hold at least one region.
 */
import { formatNumber } from '../lib/report.js'
import { ratio, ratioSpread, spread, verdict, type Figure } from './figures.js'
import type { RunInfo } from './json.js'

/** Readable names for the README, by figure name. */
const LABELS: Array<[RegExp, string]> = [
  [/^check-perf-(x?l)$/, '`etcdctl check perf --load=$1` writes/s'],
  [/^grpc-put-(\d+)-puts-per-sec$/, 'gRPC puts/s, $1 clients'],
  [/^grpc-put-(\d+)-p50-ms$/, 'gRPC put latency p50, $1 clients'],
  [/^grpc-put-(\d+)-p99-ms$/, 'gRPC put latency p99, $1 clients'],
  [/^native-http-put-(\d+)-puts-per-sec$/, 'native HTTP puts/s vs etcd gRPC, $1 clients'],
  [/^native-http-put-(\d+)-p50-ms$/, 'native HTTP put p50 vs etcd gRPC, $1 clients'],
  [/^native-http-put-(\d+)-p99-ms$/, 'native HTTP put p99 vs etcd gRPC, $1 clients'],
  [/^grpc-range-point-gets-per-sec$/, 'point gets/s'],
  [/^grpc-range-prefix-(\d+)-lists-per-sec$/, '$1-key lists/s'],
  [/^watch-(\d+)w-(\d+)rps-deliveries-per-sec$/, 'watch deliveries/s, $1 watchers, $2 rev/s offered'],
  [/^watch-(\d+)w-(\d+)rps-p99-ms$/, 'watch p99, $1 watchers, $2 rev/s offered'],
  [/^native-ws-watch-(\d+)w-(\d+)rps-deliveries-per-sec$/, 'native WebSocket watch deliveries/s vs etcd gRPC'],
  [/^native-ws-watch-(\d+)w-(\d+)rps-p99-ms$/, 'native WebSocket watch p99 vs etcd gRPC'],
  [/^watch-resume-(\d+)w-(\d+)-behind-ms$/, 'resume of $1 watchers $2 revisions behind'],
  [/^watch-saturated-(\d+)w-deliveries-per-sec$/, 'watch deliveries/s at saturation, $1 watchers'],
  [/^watch-saturated-(\d+)w-p99-ms$/, 'watch p99 at saturation, $1 watchers'],
  [/^cpu-put-(\d+)rps-us-per-put$/, 'server CPU per durable put at $1 puts/s'],
  [/^cpu-watch-(\d+)w-(\d+)rps-us-per-event$/, 'server CPU per watch delivery, $1 watchers, $2 rev/s'],
  [/^list-(\d+)-objects-1KiB-ms$/, 'a paged list of $1 objects of 1 KiB'],
  [/^list-(\d+)-objects-rss-growth-mb$/, "the server's RSS growth during that list"],
  [/^memory-rss-(\d+)-keys-1KiB-mb$/, 'memory (RSS), $1 keys of 1 KiB'],
  [/^restart-(\d+)-keys-(\d+)-revisions-ms$/, 'restart, $1 keys / $2 revisions'],
  [/^compaction-(\d+)-revisions-ms$/, 'compaction of $1 revisions (time, writes meanwhile)'],
  [/^compaction-write-p99-ms$/, "writes' p99 during that compaction"],
  [/^disk-after-compact-mb$/, 'disk after compaction'],
  [/^disk-after-compact-defrag-mb$/, 'disk after compaction + defragment'],
  [/^disk-kvlog-compact-vs-etcd-compact-defrag-mb$/, 'disk after compaction: kvlog as it is / etcd defragmented'],
  [/^disk-live-data-mb$/, 'disk, the live data alone'],
]

export function label(name: string): string {
  for (const [pattern, text] of LABELS) if (pattern.test(name)) return name.replace(pattern, text).replace(/\b1 clients\b/, '1 client')
  return name
}

/** Figures left out of the README's summary (docs/benchmarks.md has them): kvlog's native doors' latencies. */
const NOT_IN_SUMMARY = /^native-http-put-\d+-p(50|99)-ms$/

const two = (x: number) => x.toFixed(2)

/** "0.91 (0.85–0.97)": the median's ratio and the spread of the rounds' ratios (one round: no spread). */
export function ratioText(f: Figure): string {
  const [lo, hi] = ratioSpread(f)
  return f.runs.kvlog.length > 1 ? `${two(ratio(f))} (${two(lo)}–${two(hi)})` : two(ratio(f))
}

/** "1,234 (1,200–1,300)": a side's median and its runs' min–max. */
function valueText(runs: number[], median: number): string {
  const [lo, hi] = spread(runs)
  return runs.length > 1 ? `${formatNumber(median)} (${formatNumber(lo)}–${formatNumber(hi)})` : formatNumber(median)
}

function heading(info: RunInfo): string {
  return (
    `Measured against etcd ${info.etcdVersion} on the same machine, ${info.date.slice(0, 16).replace('T', ' ')} UTC, ` +
    `in one run of \`npm run bench:compare${info.quick ? ' -- --quick' : ''}\`: medians of ${info.rounds} ` +
    `run${info.rounds === 1 ? '' : 's'} per side alternating which system goes first, the rounds' min–max in brackets ` +
    `(ratio kvlog / etcd${info.quick ? '; --quick: a smoke run, not figures to quote' : ''}).`
  )
}

/** The README's table: in kvlog's favour, against kvlog; level figures on a line below. */
export function summaryTable(figures: Figure[], info: RunInfo): string {
  const cell = (f: Figure) => [label(f.name), ratioText(f)]
  const shown = figures.filter((f) => !NOT_IN_SUMMARY.test(f.name))
  const favour = shown.filter((f) => verdict(f) === 'favour').map(cell)
  const against = shown.filter((f) => verdict(f) === 'against').map(cell)
  const level = shown.filter((f) => verdict(f) === 'level')
  const lines = [heading(info), '', "| in kvlog's favour | | against kvlog | |", '|---|---:|---|---:|']
  for (let i = 0; i < Math.max(favour.length, against.length); i++) {
    lines.push(`| ${[...(favour[i] ?? ['', '']), ...(against[i] ?? ['', ''])].join(' | ')} |`)
  }
  if (level.length > 0) lines.push('', `Level (1.00): ${level.map((f) => `${label(f.name)} ${ratioText(f)}`).join('; ')}.`)
  return lines.join('\n')
}

/** docs/benchmarks.md's table: every figure, both sides' medians and spreads. */
export function currentTable(figures: Figure[], info: RunInfo): string {
  const lines = [heading(info), '', '| workload | kvlog | etcd | unit | kvlog / etcd | | note |', '|---|---:|---:|---|---:|---|---|']
  for (const f of figures) {
    const v = verdict(f)
    lines.push(
      `| ${f.name} | ${valueText(f.runs.kvlog, f.kvlog)} | ${valueText(f.runs.etcd, f.etcd)} | ${f.unit} | ${ratioText(f)} | ` +
        `${v === 'favour' ? 'better' : v === 'level' ? 'level' : '**worse**'} | ${f.note ?? ''} |`,
    )
  }
  return lines.join('\n')
}

const REGIONS: Record<string, (figures: Figure[], info: RunInfo) => string> = { summary: summaryTable, current: currentTable }

/** `text` with every marked region it holds replaced by this run's table; an error when it holds none. */
export function fillRegions(text: string, figures: Figure[], info: RunInfo): string {
  let found = 0
  const out = text.replace(
    /(<!-- bench:compare (\w+) -->\n)[\s\S]*?(\n<!-- \/bench:compare \2 -->)/g,
    (_whole, open: string, name: string, close: string) => {
      const render = REGIONS[name]
      if (render === undefined) throw new Error(`unknown bench:compare region "${name}"`)
      found++
      return open + render(figures, info) + close
    },
  )
  if (found === 0) throw new Error(`no <!-- bench:compare NAME --> region (${Object.keys(REGIONS).join(', ')})`)
  return out
}
