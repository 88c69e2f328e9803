/**
 * bench:scale's etcd store grown through a real etcd's API (bench/scale/grow-etcd.ts): the keys asked for,
 * two versions each, or fewer when the next block would take the backend past the bound given.
 */
import { expect } from 'chai'
import { call, connect } from '../../../bench/compare/grpc.js'
import { startEtcd, type System } from '../../../bench/compare/systems.js'
import { growEtcd } from '../../../bench/scale/grow-etcd.js'
import { scaleKey, SCALE_PREFIX } from '../../../bench/scale/grow.js'
import type { Message } from '../../../apiserver/etcd/proto.js'

const MB = 1e6

describe('bench:scale: growing etcd through its API', function () {
  this.timeout(300_000)
  let etcd: System | undefined

  afterEach(async () => {
    await etcd?.destroy()
    etcd = undefined
  })

  /** The count of keys under the scale prefix, and key i's version. */
  async function read(target: string, i: number): Promise<{ count: number; version: number }> {
    const client = connect(target)
    try {
      const prefix = Buffer.from(SCALE_PREFIX)
      const end = Buffer.from(prefix)
      end[end.length - 1]++
      const all = await call(client.kv.Range.bind(client.kv), { key: prefix, range_end: end, count_only: true })
      const one = await call(client.kv.Range.bind(client.kv), { key: scaleKey(i) })
      return { count: Number(all.count), version: Number(((one.kvs as Message[])[0] ?? {}).version ?? 0) }
    } finally {
      client.close()
    }
  }

  it('writes the keys asked for, each twice', async () => {
    etcd = await startEtcd()
    const progress: number[] = []
    const grown = await growEtcd(etcd.grpc, 1500, 1024 ** 3, (done) => progress.push(done))
    expect(grown.keys).to.equal(1500)
    expect(progress.at(-1)).to.equal(1500)
    expect(grown.dbBytes).to.be.greaterThan(1500 * 2 * 1024)
    expect(await read(etcd.grpc, 0)).to.deep.equal({ count: 1500, version: 2 })
    expect((await read(etcd.grpc, 1499)).version).to.equal(2)
  })

  it('stops before a block that would take the backend past the bound; the keys grown have both versions', async () => {
    etcd = await startEtcd()
    // A block of keys (two versions of 1–2 KiB each) is tens of MB: the bound lets one in, not two.
    const grown = await growEtcd(etcd.grpc, 100_000, 120 * MB, () => {})
    expect(grown.keys).to.be.greaterThan(0).and.below(100_000)
    expect(grown.dbBytes).to.be.at.most(120 * MB)
    const last = await read(etcd.grpc, grown.keys - 1)
    expect(last).to.deep.equal({ count: grown.keys, version: 2 })
  })
})
