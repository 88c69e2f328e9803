/**
 * Workload 1: `etcdctl check perf --load=l` and `--load=xl` (60 s each, etcd's own tool and criteria:
 * throughput ≥ 90% of the load's rate, slowest request ≤ 500 ms, stddev ≤ 100 ms).
 *
 * --quick cannot afford etcdctl's fixed minute: it runs the same model with our generators for a few
 * seconds instead (the load's rate and clients, 1 KiB values under a fresh prefix, the same criteria),
 * and says so in the table.
 */
import { spawn } from 'node:child_process'
import { fromRuns, rounds, type Figure, type Pair, type Scale } from '../figures.js'
import { runLoad } from '../generators.js'
import type { System } from '../systems.js'

/** etcdctl's checkPerfCfgMap (3.4). */
const LOADS = { l: { limit: 8000, clients: 500 }, xl: { limit: 15_000, clients: 1000 } } as const

interface CheckResult {
  writesPerSec: number
  pass: boolean
  /** Why etcdctl reported no throughput (e.g. a request timed out): the round is a failed measurement. */
  error?: string
}

/**
 * One `etcdctl check perf` run. A run that ends without a throughput line is a failed measurement (NaN),
 * not an error that throws away the rest of bench:compare: the run goes on and fails at its end.
 */
function etcdctl(system: System, load: string): Promise<CheckResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('etcdctl', ['--endpoints', system.grpc, 'check', 'perf', `--load=${load}`], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    child.on('error', reject)
    child.on('exit', () => {
      const writes = /Throughput (?:is|too low:) (\d+) writes\/s/.exec(out)
      if (writes === null) {
        const error = out.trim().split('\n').pop() ?? 'no output'
        console.error(`etcdctl check perf --load=${load} on ${system.name} gave no throughput: ${error}`)
        return resolve({ writesPerSec: NaN, pass: false, error })
      }
      resolve({ writesPerSec: Number(writes[1]), pass: out.trimEnd().split('\n').pop()?.trim() === 'PASS' })
    })
  })
}

async function model(system: System, load: keyof typeof LOADS, scale: Scale, run: number): Promise<CheckResult> {
  const { limit, clients } = LOADS[load]
  const t = await runLoad(
    {
      cmd: 'puts',
      target: system.grpc,
      clients,
      connections: 100,
      durationMs: scale.checkPerfModelMs,
      rate: limit,
      keyPrefix: `/check-perf-model/${load}/${run}/`,
      keys: 1_000_000,
      valueBytes: 1024,
    },
    scale.generators,
  )
  return { writesPerSec: t.opsPerSec, pass: t.opsPerSec >= 0.9 * limit && t.max <= 500 && t.stddev <= 100 }
}

export async function checkPerf(pair: Pair, scale: Scale): Promise<Figure[]> {
  const figures: Figure[] = []
  let run = 0
  for (const load of ['l', 'xl'] as const) {
    const r = await rounds(pair, scale, (s) => (scale.quick ? model(s, load, scale, run++) : etcdctl(s, load)))
    const verdicts = (side: CheckResult[]) => side.map((c) => (c.error !== undefined ? 'ERROR' : c.pass ? 'PASS' : 'FAIL')).join(' ')
    figures.push({
      ...fromRuns({ name: `check-perf-${load}`, unit: 'writes/s', higherIsBetter: true }, r, (c) => c.writesPerSec),
      note: `${scale.quick ? 'model (quick), ' : ''}kvlog ${verdicts(r.kvlog)}, etcd ${verdicts(r.etcd)}`,
      pass: { kvlog: r.kvlog.every((c) => c.pass), etcd: r.etcd.every((c) => c.pass) },
    })
  }
  return figures
}
