/**
 * `npm run bench:cluster` (bench/compare/cluster.ts) in CI, one short round: it starts a 3-member etcd
 * cluster and 3 nats-servers + 3 kvlog members, runs every measurement against both (puts at 64 and
 * 1,000 clients, watch fan-out, leader failover) and reports numbers for both in one JSON line, with the
 * kvlog members' write phases during the puts. Only that it runs and reports is asserted, not how fast
 * anything is (figures come from full runs: docs/benchmarks.md).
 */
import { expect } from 'chai'
import { fileURLToPath } from 'node:url'
import { runNodeScript } from '../support/node-script.js'

const SCRIPT = fileURLToPath(new URL('../../bench/compare/cluster.js', import.meta.url))

const EXPECTED = [
  'put-64-clients-per-sec',
  'put-64-clients-p50-ms',
  'put-64-clients-p99-ms',
  'put-1000-clients-per-sec',
  'put-1000-clients-p50-ms',
  'put-1000-clients-p99-ms',
  'watch-30w-deliveries-per-sec',
  'watch-30w-writes-per-sec',
  'failover-ms',
]

interface Figure {
  kvlog: number
  etcd: number
  unit: string
  ratio: number
  target?: number
  met?: boolean
  rounds: { kvlog: number[]; etcd: number[] }
}

const run = (args: string[]) => runNodeScript(SCRIPT, args)

describe('bench:cluster, one short round (3 etcd members vs 3 nats-servers + 3 kvlog members)', function () {
  this.timeout(400_000)

  it('measures puts, watch fan-out and failover on both clusters and ends with one JSON line', async () => {
    const { code, stdout, stderr } = await run(['--rounds', '1', '--seconds', '1', '--watchers', '30', '--watch-rate', '200', '-o', 'json'])
    expect(code, stderr).to.equal(0)
    const report = JSON.parse(stdout.trim()) as {
      rounds: number
      loadAverage: { before: number[] }
      figures: Record<string, Figure>
      phases: Array<{ clients: number; phases: Record<string, { count: number; p99Ms: number } | undefined>; members: unknown[] }>
    }
    expect(report.rounds).to.equal(1)
    expect(report.loadAverage.before).to.have.length(3)
    expect(Object.keys(report.figures).sort()).to.deep.equal([...EXPECTED].sort())
    for (const [name, f] of Object.entries(report.figures)) {
      expect(f.kvlog > 0 && Number.isFinite(f.kvlog), `${name}.kvlog = ${f.kvlog}`).to.equal(true)
      expect(f.etcd > 0 && Number.isFinite(f.etcd), `${name}.etcd = ${f.etcd}`).to.equal(true)
      expect(f.rounds.kvlog).to.have.length(1)
      expect(f.unit).to.be.a('string').and.not.equal('')
    }
    // Every write went through the phases the members time, and each of the three members applied messages.
    expect(report.phases.map((p) => p.clients)).to.deep.equal([64, 1000])
    for (const p of report.phases) {
      for (const phase of ['queue', 'publish', 'delivery', 'apply', 'majority', 'write']) {
        expect(p.phases[phase]?.count, `${p.clients} clients: ${phase}`).to.be.above(0)
      }
      expect(p.members).to.have.length(3)
    }
    // Failover is measured from a real SIGKILL of each cluster's leader: both came back within the bound.
    expect(report.figures['failover-ms'].kvlog).to.be.below(60_000)
    expect(report.figures['failover-ms'].etcd).to.be.below(60_000)
  })
})
