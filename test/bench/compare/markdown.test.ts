import { expect } from 'chai'
import { fromRuns, type Figure } from '../../../bench/compare/figures.js'
import { currentTable, fillRegions, label, summaryTable } from '../../../bench/compare/markdown.js'

const info = { date: '2026-11-28T20:00:00.000Z', etcdVersion: '3.4.23', quick: false, rounds: 3 }
const fig = (name: string, kvlog: number[], etcd: number[], higherIsBetter: boolean): Figure =>
  fromRuns({ name, unit: 'x', higherIsBetter }, { kvlog, etcd }, (v) => v)

/** The README table's rows as [favour label, favour ratio, against label, against ratio]. */
function columns(md: string): string[][] {
  return md
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| in kvlog'))
    .map((l) => l.slice(2, -2).split(' | '))
}

describe('bench/compare/markdown', () => {
  const figures = [
    fig('grpc-put-64-puts-per-sec', [1070, 1070, 1070], [1000, 1000, 1000], true),
    fig('watch-resume-100w-10000-behind-ms', [1070, 1000, 1100], [1000, 1000, 1000], false),
    fig('watch-saturated-1000w-deliveries-per-sec', [1000, 1001, 999], [1000, 1000, 1000], true),
    fig('restart-100000-keys-1000000-revisions-ms', [24, 25, 23], [100, 100, 100], false),
  ]

  it('lists a figure in kvlog’s favour only when its ratio, in the figure’s direction, says so', () => {
    const md = summaryTable(figures, info)
    const favour = columns(md).map((c) => c[0])
    const against = columns(md).map((c) => c[2])
    expect(favour).to.include('gRPC puts/s, 64 clients')
    expect(favour).to.include('restart, 100000 keys / 1000000 revisions')
    // A slower resume (1.07, lower is better) is against kvlog, and 1.00 is in neither column.
    expect(against).to.include('resume of 100 watchers 10000 revisions behind')
    expect(favour).not.to.include('resume of 100 watchers 10000 revisions behind')
    expect(favour).not.to.include('watch deliveries/s at saturation, 1000 watchers')
    expect(md).to.include('Level (1.00): watch deliveries/s at saturation, 1000 watchers 1.00 (1.00–1.00)')
    expect(md).to.include('2026-11-28 20:00 UTC')
  })

  it('names figures for people, one client in the singular', () => {
    expect(summaryTable([fig('grpc-put-1-p50-ms', [2], [1], false)], info)).to.include('| gRPC put latency p50, 1 client | 2.00 |')
    expect(label('list-100000-objects-1KiB-ms')).to.equal('a paged list of 100000 objects of 1 KiB')
    expect(label('list-100000-objects-rss-growth-mb')).to.equal("the server's RSS growth during that list")
  })

  it('shows every ratio with the spread of its rounds', () => {
    expect(summaryTable(figures, info)).to.include('| 1.07 (1.00–1.10) |')
    expect(currentTable(figures, info)).to.include('| 1,070 (1,000–1,100) | 1,000 (1,000–1,000) | x | 1.07 (1.00–1.10) | **worse** |')
  })

  it('replaces only the marked regions, and refuses a file without one', () => {
    const text = 'intro\n<!-- bench:compare summary -->\nold table\n<!-- /bench:compare summary -->\noutro\n'
    const out = fillRegions(text, figures, info)
    expect(out.startsWith('intro\n<!-- bench:compare summary -->\nMeasured against etcd 3.4.23')).to.equal(true)
    expect(out).not.to.include('old table')
    expect(out.endsWith('\n<!-- /bench:compare summary -->\noutro\n')).to.equal(true)
    expect(fillRegions(out, figures, info)).to.equal(out)
    expect(() => fillRegions('no markers', figures, info)).to.throw(/no <!-- bench:compare NAME --> region/)
  })
})
