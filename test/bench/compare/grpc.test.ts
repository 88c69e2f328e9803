import { expect } from 'chai'
import { encode, messageType } from '../../../apiserver/etcd/proto.js'
import { readWatchResponse } from '../../../bench/compare/grpc.js'

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
