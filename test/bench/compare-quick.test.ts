/**
 * `npm run bench:compare -- --quick --json` (bench/compare/) in CI: it starts a real etcd and kvlog, runs
 * a small version of every workload and reports each with numbers for both systems, then writes the
 * marked tables of copies of README.md and docs/benchmarks.md. Only that it runs and that both systems
 * measured every figure is asserted, not how fast anything is.
 */
import { expect } from 'chai'
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runNodeScript } from '../support/node-script.js'

const SCRIPT = fileURLToPath(new URL('../../bench/compare/compare.js', import.meta.url))
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** One pattern per workload of bench:compare (1–10, and kvlog's native figures for 2 and 4). */
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
  /^list-\d+-objects-1KiB-ms$/,
  /^list-\d+-objects-rss-growth-mb$/,
]

interface Workload {
  kvlog: number | null
  etcd: number | null
  unit: string
  higherIsBetter: boolean
  ratio: number | null
  runs: { kvlog: Array<number | null>; etcd: Array<number | null> }
}

const run = (args: string[]) => runNodeScript(SCRIPT, args)

describe('bench:compare --quick (kvlog vs a real etcd)', function () {
  // Small, but it starts etcd and kvlog three times each and forks load generators on a shared machine.
  this.timeout(300_000)

  it('runs every workload against both systems, ends with one JSON line of numbers, and writes the tables', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-compare-'))
    const docs = [join(dir, 'README.md'), join(dir, 'benchmarks.md')]
    await copyFile(join(ROOT, 'README.md'), docs[0])
    await copyFile(join(ROOT, 'docs', 'benchmarks.md'), docs[1])
    try {
      const { code, stdout, stderr } = await run(['--quick', '--json', '--markdown', docs.join(',')])
      expect(code, stderr).to.equal(0)
      const lines = stdout.trimEnd().split('\n')
      expect(lines.length).to.be.greaterThan(EXPECTED.length, 'a table before the JSON line')
      const { workloads, failed, rounds } = JSON.parse(lines[lines.length - 1]) as {
        workloads: Record<string, Workload>
        failed: string[]
        rounds: number
      }
      expect(failed).to.deep.equal([])
      for (const pattern of EXPECTED) {
        expect(
          Object.keys(workloads).some((name) => pattern.test(name)),
          `a workload matching ${pattern}`,
        ).to.equal(true)
      }
      for (const [name, w] of Object.entries(workloads)) {
        // Both systems measured: a missing measurement is null, never 0.
        for (const side of ['kvlog', 'etcd'] as const) {
          expect(w[side], `${name}.${side}`).to.be.a('number').greaterThan(0)
          expect(w.runs[side], `${name}.runs.${side}`).to.have.length(rounds)
        }
        expect(w.ratio, `${name}.ratio`).to.be.a('number').greaterThan(0)
        expect(w.unit).to.be.a('string').and.not.equal('')
        expect(w.higherIsBetter).to.be.a('boolean')
        // The table has a row for each workload.
        expect(stdout).to.include(name)
      }
      const [readme, benchmarks] = await Promise.all(docs.map((f) => readFile(f, 'utf8')))
      const today = new Date().toISOString().slice(0, 10)
      expect(readme).to.match(new RegExp(`<!-- bench:compare summary -->\nMeasured against etcd [^\n]* ${today} `))
      expect(benchmarks).to.match(new RegExp(`<!-- bench:compare current -->\nMeasured against etcd [^\n]* ${today} `))
      expect(benchmarks).to.include('| grpc-put-64-puts-per-sec |')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
