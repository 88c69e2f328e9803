import { expect } from 'chai'
import { fromRuns, ratio, ratioSpread, verdict, type Figure } from '../../../bench/compare/figures.js'

const figure = (kvlog: number[], etcd: number[], higherIsBetter = true): Figure =>
  fromRuns({ name: 'x', unit: 'ops/s', higherIsBetter }, { kvlog, etcd }, (v) => v)

describe('bench/compare/figures', () => {
  it('quotes the median of the runs with the spread of the rounds’ ratios', () => {
    const f = figure([90, 110, 100], [100, 100, 125])
    expect(f.kvlog).to.equal(100)
    expect(f.etcd).to.equal(100)
    expect(ratioSpread(f)).to.deep.equal([0.8, 1.1])
  })

  it('makes a figure with a round that measured nothing a failed one, not the median of the other rounds', () => {
    const f = figure([90, NaN, 100], [100, 100, 125])
    expect(f.kvlog).to.satisfy(Number.isNaN)
    expect(f.etcd).to.equal(100)
  })

  it('never turns a side that measured nothing into a ratio', () => {
    expect(ratio({ kvlog: 0, etcd: 0 })).to.satisfy(Number.isNaN)
    expect(ratio({ kvlog: 5, etcd: NaN })).to.satisfy(Number.isNaN)
    expect(verdict({ kvlog: 0, etcd: 0, higherIsBetter: true })).to.equal('against')
  })

  it('puts a figure in kvlog’s favour only when its ratio says so in the figure’s direction', () => {
    expect(verdict({ kvlog: 107, etcd: 100, higherIsBetter: false })).to.equal('against')
    expect(verdict({ kvlog: 93, etcd: 100, higherIsBetter: true })).to.equal('against')
    expect(verdict({ kvlog: 107, etcd: 100, higherIsBetter: true })).to.equal('favour')
    expect(verdict({ kvlog: 93, etcd: 100, higherIsBetter: false })).to.equal('favour')
    // Printed as 1.00: level, in nobody's favour.
    expect(verdict({ kvlog: 1002, etcd: 1000, higherIsBetter: true })).to.equal('level')
  })
})
