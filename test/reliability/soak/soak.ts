/**
 * `npm run soak -- [--duration SECONDS] [--seed N] [--clients N] [--fsync always|never] [--json] [--dump FILE]`: the reliability soak
 * (run.ts). Prints progress on stderr; with --json, ends with one JSON line on stdout (the report). Exits
 * 1 when the checker found a violation or an acknowledged write was lost, so CI and scripts can use it.
 * Replay a failing run with the same --seed (the faults' timing still varies with the machine); --dump
 * writes the whole recorded history as JSON, for a closer look.
 */
import { parseArgs } from 'node:util'
import { dumpHistory } from '../history.js'
import { runSoak } from './run.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    seed: { type: 'string' },
    clients: { type: 'string', default: '6' },
    json: { type: 'boolean', default: false },
    dump: { type: 'string' },
    fsync: { type: 'string', default: 'always' },
  },
})

const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31)
const durationSeconds = Number(values.duration)
const fsync = values.fsync
if (!Number.isFinite(durationSeconds) || durationSeconds <= 0 || !Number.isInteger(seed) || (fsync !== 'always' && fsync !== 'never')) {
  process.stderr.write('usage: soak [--duration SECONDS] [--seed N] [--clients N] [--fsync always|never] [--json] [--dump FILE]\n')
  process.exit(2)
}
const t0 = Date.now()
const log = (line: string) => process.stderr.write(`[soak ${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`)
log(`seed ${seed}, ${durationSeconds} s`)
const { report, history } = await runSoak({ durationSeconds, seed, clients: Number(values.clients), fsync, log })
if (values.dump !== undefined) {
  await dumpHistory(values.dump, history)
  log(`history written to ${values.dump}`)
}
process.stdout.write(JSON.stringify(report, null, values.json ? undefined : 2) + '\n')
process.exit(report.violations === 0 && report.ackedWritesLost === 0 ? 0 : 1)
