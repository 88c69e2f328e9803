import { expect } from 'chai'
import { Order, rounds, type Side } from '../../../bench/compare/plan.js'

/** The order in which sides ran, over the given measurements (each `count` rounds) on one sequence. */
async function ran(counts: number[]): Promise<Side[][]> {
  const order = new Order()
  const out: Side[][] = []
  for (const count of counts) {
    const seen: Side[] = []
    await rounds(count, async (side) => seen.push(side), order)
    out.push(seen)
  }
  return out
}

describe('bench/compare/plan', () => {
  it('alternates which system goes first from round to round', async () => {
    expect(await ran([3])).to.deep.equal([['kvlog', 'etcd', 'etcd', 'kvlog', 'kvlog', 'etcd']])
  })

  it('carries the alternation from one measurement to the next, so no measurement always starts with kvlog', async () => {
    const [a, b, c] = await ran([1, 1, 3])
    expect(a).to.deep.equal(['kvlog', 'etcd'])
    expect(b).to.deep.equal(['etcd', 'kvlog'])
    expect(c.slice(0, 2)).to.deep.equal(['kvlog', 'etcd'])
    // Two measurements of three rounds: each side goes first three times.
    const [x, y] = await ran([3, 3])
    const firsts = [...x, ...y].filter((_, i) => i % 2 === 0)
    expect(firsts.filter((s) => s === 'kvlog')).to.have.length(3)
  })

  it('gives each side one result per round, in round order', async () => {
    let n = 0
    const r = await rounds(3, async (side) => `${side}${n++}`, new Order())
    expect(r).to.deep.equal({ kvlog: ['kvlog0', 'kvlog3', 'kvlog4'], etcd: ['etcd1', 'etcd2', 'etcd5'] })
  })
})
