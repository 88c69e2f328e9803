/**
 * npm run robustness -- --target etcd|kvlog|cluster --profile kubernetes|etcd --failpoint NAME
 *   --duration S [--clients N] [--seed N] [--json]
 *
 * NAME: none, kill, pause, network, or (kvlog and cluster) a failpoint of log/failpoints.ts, which panics,
 * or NAME=sleep(ms). Prints progress and a summary; with --json the last line is the report as JSON.
 * Exits 1 when a check failed or could not decide.
 */
import { parseArgs } from 'node:util'
import { runRobustness } from './run.js'
import type { TargetName } from './targets.js'

const { values } = parseArgs({
  options: {
    target: { type: 'string', default: 'kvlog' },
    profile: { type: 'string', default: 'kubernetes' },
    failpoint: { type: 'string', default: 'none' },
    duration: { type: 'string', default: '10' },
    clients: { type: 'string', default: '6' },
    seed: { type: 'string', default: String(Date.now() % 100_000) },
    json: { type: 'boolean', default: false },
  },
})
if (!['etcd', 'kvlog', 'cluster'].includes(values.target)) throw new Error(`--target must be etcd, kvlog or cluster, not ${values.target}`)
const { report } = await runRobustness({
  target: values.target as TargetName,
  profile: values.profile,
  failpoint: values.failpoint,
  durationSeconds: Number(values.duration),
  clients: Number(values.clients),
  seed: Number(values.seed),
  log: (line) => console.error(line),
})
const { details, ...figures } = report
for (const d of details) console.error(d)
console.error(`seed ${values.seed}: ${JSON.stringify(figures)}`)
if (values.json) console.log(JSON.stringify(report))
const failed = report.linearizability !== 'ok' || report.watchViolations > 0 || report.lostAckedWrites > 0
process.exit(failed ? 1 : 0)
