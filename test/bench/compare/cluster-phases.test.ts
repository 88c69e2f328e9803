/**
 * bench:cluster's write phases (bench/compare/cluster-phases.ts): the histogram read from a /metrics
 * text, the difference of two scrapes summed over rounds, and its count, mean and quantiles.
 */
import { expect } from 'chai'
import { addDifference, parsePhases, summarize, type PhaseHistograms } from '../../../bench/compare/cluster-phases.js'

/** A /metrics text with one phase whose observations fell into the buckets ≤ 0.01, ≤ 0.02 and above 0.05. */
const scrape = (phase: string, atMost10ms: number, atMost20ms: number, over50ms: number, sum: number) => `
# HELP kvlog_cluster_phase_seconds Where a write's time goes.
# TYPE kvlog_cluster_phase_seconds histogram
kvlog_cluster_phase_seconds_bucket{le="0.01",phase="${phase}"} ${atMost10ms}
kvlog_cluster_phase_seconds_bucket{le="0.02",phase="${phase}"} ${atMost10ms + atMost20ms}
kvlog_cluster_phase_seconds_bucket{le="0.05",phase="${phase}"} ${atMost10ms + atMost20ms}
kvlog_cluster_phase_seconds_bucket{le="+Inf",phase="${phase}"} ${atMost10ms + atMost20ms + over50ms}
kvlog_cluster_phase_seconds_sum{phase="${phase}"} ${sum}
kvlog_cluster_phase_seconds_count{phase="${phase}"} ${atMost10ms + atMost20ms + over50ms}
kvlog_cluster_publish_count 3
`

describe('bench:cluster write phases', () => {
  it('reads the histogram of each phase and nothing else', () => {
    const h = parsePhases(scrape('apply', 2, 1, 0, 0.03))
    expect([...h.keys()]).to.deep.equal(['apply'])
    expect(h.get('apply')!.count).to.equal(3)
    expect(h.get('apply')!.buckets.get(Infinity)).to.equal(3)
  })

  it('sums the differences of scrapes over rounds and interpolates quantiles within a bucket', () => {
    const total: PhaseHistograms[] = []
    // Round 1: 100 observations at most 10 ms; round 2: 100 more between 10 and 20 ms, on the same member.
    addDifference(total, [parsePhases(scrape('write', 50, 0, 0, 0.25))], [parsePhases(scrape('write', 150, 0, 0, 0.75))])
    addDifference(total, [parsePhases(scrape('write', 150, 0, 0, 0.75))], [parsePhases(scrape('write', 150, 100, 0, 2.25))])
    const s = summarize(total, 'write')!
    expect(s.count).to.equal(200)
    expect(s.meanMs).to.be.closeTo(10, 1e-9)
    expect(s.p50Ms).to.be.closeTo(10, 1e-9)
    expect(s.p99Ms).to.be.closeTo(19.8, 1e-9)
    expect(summarize(total, 'queue')).to.equal(undefined)
  })

  it('reports the last finite bound for a quantile past it', () => {
    const s = summarize([parsePhases(scrape('apply', 0, 0, 10, 1))], 'apply')!
    expect(s.p99Ms).to.equal(50)
  })
})
