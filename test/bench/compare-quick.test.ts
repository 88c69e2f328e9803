/**
 * `npm run bench:compare -- --quick --json` (bench/compare/) in CI: it starts a real etcd and kvlog, runs
 * a small version of every workload and reports each with numbers for both systems. Only that it runs
 * and reports is asserted, not how fast anything is.
 */
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { runNodeScript } from '../support/node-script.js'

const SCRIPT = fileURLToPath(new URL('../../bench/compare/compare.js', import.meta.url))

/** One pattern per workload of bench:compare (1–9, and kvlog's native figures for 2 and 4). */
const EXPECTED = [
  /^check-perf-l$/,
  /^check-perf-xl$/,
  /^grpc-put-1-puts-per-sec$/,
  /^grpc-put-64-puts-per-sec$/,
  /^grpc-put-1000-puts-per-sec$/,
  /^grpc-put-1000-p50-ms$/,
  /^grpc-put-1000-p99-ms$/,
  /^native-http-put-64-puts-per-sec$/,
  /^grpc-range-point-gets-per-sec$/,
  /^grpc-range-prefix-\d+-lists-per-sec$/,
  /^watch-\d+w-\d+rps-deliveries-per-sec$/,
  /^watch-\d+w-\d+rps-p99-ms$/,
  /^native-ws-watch-\d+w-\d+rps-deliveries-per-sec$/,
  /^watch-resume-\d+w-\d+-behind-ms$/,
  /^watch-saturated-\d+w-deliveries-per-sec$/,
  /^watch-saturated-\d+w-p99-ms$/,
  /^cpu-put-\d+rps-us-per-put$/,
  /^cpu-watch-\d+w-\d+rps-us-per-event$/,
  /^compaction-\d+-revisions-ms$/,
  /^compaction-write-p99-ms$/,
  /^disk-after-compact-mb$/,
  /^disk-after-compact-defrag-mb$/,
  /^disk-live-data-mb$/,
  /^memory-rss-\d+-keys-1KiB-mb$/,
  /^restart-\d+-keys-\d+-revisions-ms$/,
]

interface Workload {
  kvlog: number
  etcd: number
  unit: string
  higherIsBetter: boolean
  ratio: number
}

const run = (args: string[]) => runNodeScript(SCRIPT, args)

describe('bench:compare --quick (kvlog vs a real etcd)', function () {
  // Small, but it starts etcd and kvlog three times each and forks load generators on a shared machine.
  this.timeout(300_000)

  it('runs every workload against both systems and ends with one JSON line of numbers', async () => {
    const { code, stdout, stderr } = await run(['--quick', '--json'])
    expect(code, stderr).to.equal(0)
    const lines = stdout.trimEnd().split('\n')
    expect(lines.length).to.be.greaterThan(EXPECTED.length, 'a table before the JSON line')
    const { workloads } = JSON.parse(lines[lines.length - 1]) as { workloads: Record<string, Workload> }
    for (const pattern of EXPECTED) {
      expect(
        Object.keys(workloads).some((name) => pattern.test(name)),
        `a workload matching ${pattern}`,
      ).to.equal(true)
    }
    for (const [name, w] of Object.entries(workloads)) {
      for (const side of ['kvlog', 'etcd', 'ratio'] as const) {
        expect(Number.isFinite(w[side]), `${name}.${side} = ${w[side]}`).to.equal(true)
      }
      expect(w.kvlog > 0 || w.etcd > 0, `${name} measured something`).to.equal(true)
      expect(w.unit).to.be.a('string').and.not.equal('')
      expect(w.higherIsBetter).to.be.a('boolean')
      // The table has a row for each workload.
      expect(stdout).to.include(name)
    }
  })
})
