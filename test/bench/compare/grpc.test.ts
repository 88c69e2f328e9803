import { expect } from 'chai'
import { encode, messageType } from '../../../apiserver/etcd/proto.js'
import { readRangeResponse, readWatchResponse } from '../../../bench/compare/grpc.js'

describe('bench/compare/grpc readWatchResponse', () => {
  it('gives every event of a response its own value, so latency is sampled per event', () => {
    const kv = (value: string) => ({ key: Buffer.from('/k'), value: Buffer.from(value), mod_revision: 2 })
    const bytes = encode(messageType('etcdserverpb.WatchResponse'), {
      header: { revision: 4 },
      watch_id: 3,
      events: [{ kv: kv('{"t":1}') }, { kv: kv('{"t":2}') }, { kv: kv('{"t":3}') }],
    })
    const values: string[] = []
    const r = readWatchResponse(bytes, (v) => values.push(v.toString()))
    expect(r.events).to.equal(3)
    expect(r.watchId).to.equal(3)
    expect(values).to.deep.equal(['{"t":1}', '{"t":2}', '{"t":3}'])
  })
})

describe('bench/compare/grpc readRangeResponse', () => {
  it("reads a page's revision, kvs, last key, more and count without decoding the values", () => {
    const kv = (key: string) => ({ key: Buffer.from(key), value: Buffer.alloc(1024, 'v'), mod_revision: 7, create_revision: 3, version: 2 })
    const bytes = encode(messageType('etcdserverpb.RangeResponse'), {
      header: { cluster_id: 1, member_id: 2, revision: 1_234_567, raft_term: 5 },
      kvs: [kv('/list/a'), kv('/list/b'), kv('/list/c')],
      more: true,
      count: 100_000,
    })
    const r = readRangeResponse(bytes)
    expect({ ...r, lastKey: r.lastKey?.toString() }).to.deep.equal({
      revision: 1_234_567,
      kvs: 3,
      lastKey: '/list/c',
      more: true,
      count: 100_000,
    })
    const empty = readRangeResponse(encode(messageType('etcdserverpb.RangeResponse'), { header: { revision: 9 } }))
    expect(empty).to.deep.equal({ revision: 9, kvs: 0, more: false, count: 0 })
  })
})
