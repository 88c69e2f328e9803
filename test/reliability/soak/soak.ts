/**
 * `npm run soak -- [--cluster] [--auth] [--duration SECONDS] [--seed N] [--clients N] [--fsync always|never] [--json | -o json] [--dump FILE]`:
 * the reliability soak: one server (run.ts) or, with --cluster, three nats-servers and three cluster
 * members (cluster-run.ts). Prints progress on stderr, then a summary table on stdout; with --json (or
 * -o json), one JSON line (the report) instead. Exits 1 when the checker found a violation or an
 * acknowledged write was lost, so CI and scripts can use it. Replay a failing run with the same --seed
 * (the faults' timing still varies with the machine); --dump writes the whole recorded history as JSON,
 * for a closer look; --server-logs DIR keeps every cluster member's stderr there. --auth enables auth on
 * the server: some clients run as users with limited permissions, the others as root (auth.ts).
 */
import { parseArgs } from 'node:util'
import { table } from '../../../bench/lib/report.js'
import { dumpHistory } from '../history.js'
import { runClusterSoak } from './cluster-run.js'
import { runSoak, type SoakReport } from './run.js'

const USAGE =
  'usage: soak [--cluster] [--auth] [--duration SECONDS] [--seed N] [--clients N] [--fsync always|never] [--json | -o json|table] [--dump FILE] [--server-logs DIR]\n'

const { values } = parseArgs({
  options: {
    cluster: { type: 'boolean', default: false },
    auth: { type: 'boolean', default: false },
    duration: { type: 'string', default: '60' },
    seed: { type: 'string' },
    clients: { type: 'string', default: '6' },
    json: { type: 'boolean', default: false },
    output: { type: 'string', short: 'o', default: 'table' },
    dump: { type: 'string' },
    'server-logs': { type: 'string' },
    fsync: { type: 'string', default: 'always' },
  },
})

const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31)
const durationSeconds = Number(values.duration)
const fsync = values.fsync
const json = values.json || values.output === 'json'
if (
  !Number.isFinite(durationSeconds) ||
  durationSeconds <= 0 ||
  !Number.isInteger(seed) ||
  (fsync !== 'always' && fsync !== 'never') ||
  (values.output !== 'json' && values.output !== 'table')
) {
  process.stderr.write(USAGE)
  process.exit(2)
}
const t0 = Date.now()
const log = (line: string) => process.stderr.write(`[soak ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`)
log(`seed ${seed}, ${durationSeconds} s${values.cluster ? ', cluster' : ''}${values.auth ? ', auth' : ''}`)
const clients = Number(values.clients)
const { report, history } = values.cluster
  ? await runClusterSoak({ durationSeconds, seed, clients, log, serverLogs: values['server-logs'], auth: values.auth })
  : await runSoak({ durationSeconds, seed, clients, fsync, log, auth: values.auth })
if (values.dump !== undefined) {
  await dumpHistory(values.dump, history)
  log(`history written to ${values.dump}`)
}
process.stdout.write(json ? JSON.stringify(report) + '\n' : summaryTable(report) + '\n')
process.exit(report.violations === 0 && report.ackedWritesLost === 0 ? 0 : 1)

/**
 * The report for people: one row per figure; maps become "key=value" lists; the auth figures get a row
 * each (auth.NAME); the samples follow.
 */
function summaryTable(r: SoakReport): string {
  const rows: Array<Array<string | number>> = [['figure', 'value']]
  const add = (name: string, value: unknown) => {
    const shown =
      typeof value === 'object' && value !== null
        ? Object.entries(value as Record<string, unknown>)
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(' ')
        : (value as string | number)
    rows.push([name, shown === '' ? '-' : shown])
  }
  for (const [name, value] of Object.entries(r)) {
    if (name === 'violationSamples') continue
    if (name === 'auth') {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (k !== 'violations') add(`auth.${k}`, v)
    } else add(name, value)
  }
  const samples = r.violationSamples.length > 0 ? `\n\nviolations:\n${r.violationSamples.join('\n')}` : ''
  return table(rows) + samples
}
