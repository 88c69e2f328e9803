/**
 * `npm run bench:scale` (bench/scale/) at tiny sizes: two kvlog stores grown offline and an etcd store
 * grown through etcd's API with the big store's keys, every workload run once on each, a table with
 * big / small and big / etcd, one JSON line of figures, and the stores removed. Only that it runs and
 * that every store measured every figure is asserted, not how fast anything is.
 */
import { expect } from 'chai'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runNodeScript } from '../support/node-script.js'

const SCRIPT = fileURLToPath(new URL('../../bench/scale/scale.js', import.meta.url))

const ROUND_FIGURES = [
  'restartMs',
  'getP50',
  'getP99',
  'getsPerSec',
  'putP50',
  'putP99',
  'putsPerSec',
  'listMs',
  'listRssGrowthMb',
  'listAnonGrowthMb',
]
const STORE_FIGURES = [
  'keys',
  'revisions',
  'compactionMs',
  'defragmentMs',
  'diskBeforeCompactMb',
  'diskAfterCompactMb',
  'diskAfterDefragmentMb',
]

interface Store {
  kind: string
  keys: number
  rounds: Array<Record<string, number>>
  [figure: string]: unknown
}

describe('bench:scale at tiny sizes (kvlog stores and a real etcd)', function () {
  // Tiny, but it starts kvlog and etcd several times each and forks load generators on a shared machine.
  this.timeout(300_000)

  it('measures every figure on both kvlog stores and on etcd, prints big / etcd, and removes the stores', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-scale-'))
    try {
      const args = ['--gib', '0.02', '--small-gib', '0.01', '--list-keys', '1000', '--seconds', '1', '--rounds', '1', '--dir', dir]
      const { code, stdout, stderr } = await runNodeScript(SCRIPT, [...args, '-o', 'json'])
      expect(code, stderr).to.equal(0)
      const lines = stdout.trimEnd().split('\n')
      const report = JSON.parse(lines[lines.length - 1]) as Record<string, unknown>
      expect(report.listKeys).to.equal(1000)
      const [small, big, etcd] = [report.small, report.big, report.etcd] as Store[]
      expect([small.kind, big.kind, etcd.kind]).to.deep.equal(['kvlog', 'kvlog', 'etcd'])
      // etcd holds all of the big store's keys at this size, each with two versions.
      expect(etcd.keys).to.equal(big.keys)
      expect(etcd.version).to.be.a('string')
      for (const store of [small, big, etcd]) {
        expect(store.rounds).to.have.length(1)
        for (const name of ROUND_FIGURES) expect(store.rounds[0][name], `${store.kind} ${name}`).to.be.a('number').greaterThan(0)
        for (const name of STORE_FIGURES) expect(store[name], `${store.kind} ${name}`).to.be.a('number').greaterThan(0)
      }
      for (const ratios of [report.bigOverSmall, report.bigOverEtcd] as Array<Record<string, number>>) {
        for (const name of ['keys', 'restartMs', 'getP99', 'putP99', 'listMs', 'compactionMs', 'diskAfterDefragmentMb']) {
          expect(ratios[name], name).to.be.a('number').greaterThan(0)
        }
      }
      expect(lines[1]).to.match(/big \/ small +etcd \S+ +big \/ etcd/)
      expect(await readdir(dir)).to.deep.equal([])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
