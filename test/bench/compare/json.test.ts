import { expect } from 'chai'
import { fromRuns } from '../../../bench/compare/figures.js'
import { failedFigures, jsonLine } from '../../../bench/compare/json.js'

const info = { date: '2026-11-28T20:00:00.000Z', etcdVersion: '3.4.23', quick: true, rounds: 2 }

describe('bench/compare/json', () => {
  it('writes a failed measurement as null and names it, never as zero', () => {
    const good = fromRuns({ name: 'good', unit: 'ms', higherIsBetter: false }, { kvlog: [1, 2], etcd: [2, 3] }, (v) => v)
    const bad = fromRuns({ name: 'bad', unit: 'ms', higherIsBetter: false }, { kvlog: [1, NaN], etcd: [NaN, NaN] }, (v) => v)
    const line = JSON.parse(jsonLine([good, bad], info)) as {
      workloads: Record<string, { kvlog: number | null; etcd: number | null; ratio: number | null; runs: { etcd: Array<number | null> } }>
      failed: string[]
    }
    expect(line.workloads.good.kvlog).to.equal(1)
    expect(line.workloads.bad.etcd).to.equal(null)
    expect(line.workloads.bad.ratio).to.equal(null)
    expect(line.workloads.bad.runs.etcd).to.deep.equal([null, null])
    expect(line.failed).to.deep.equal(['bad'])
  })

  it('counts a figure with one failed run, or a side at zero, as failed', () => {
    const oneRun = fromRuns({ name: 'one-run', unit: 'ms', higherIsBetter: false }, { kvlog: [1, Infinity, 1], etcd: [1, 1, 1] }, (v) => v)
    const zero = fromRuns({ name: 'zero', unit: 'puts/s', higherIsBetter: true }, { kvlog: [0], etcd: [500] }, (v) => v)
    expect(failedFigures([oneRun, zero])).to.deep.equal(['one-run', 'zero'])
  })

  it('takes a growth of zero as measured, but not a zero denominator nor a failed run', () => {
    const growth = { unit: 'MB', higherIsBetter: false, zeroMeasures: true }
    const none = fromRuns({ name: 'none', ...growth }, { kvlog: [0, 0, 0.5], etcd: [800, 900, 850] }, (v) => v)
    const noDenominator = fromRuns({ name: 'no-denominator', ...growth }, { kvlog: [0], etcd: [0] }, (v) => v)
    const lost = fromRuns({ name: 'lost', ...growth }, { kvlog: [0, NaN, 0], etcd: [800, 900, 850] }, (v) => v)
    const shrank = fromRuns({ name: 'shrank', ...growth }, { kvlog: [-1], etcd: [800] }, (v) => v)
    expect(failedFigures([none, noDenominator, lost, shrank])).to.deep.equal(['no-denominator', 'lost', 'shrank'])
  })
})
