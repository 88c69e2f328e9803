/**
 * The hand-written encodings (apiserver/etcd/wire.ts) decode, with protobufjs and our .proto files, to the
 * messages proto.ts would have encoded from objects.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { decode, encode, messageType } from '../../../apiserver/etcd/proto.js'
import { kvMessage, rangeResponse as rangeResponseMessage } from '../../../apiserver/etcd/convert.js'
import { eventsField, eventsFields, HeaderEncoder, putResponse, rangeResponse, watchHead } from '../../../apiserver/etcd/wire.js'
import type { Event, KeyValue } from '../../../log/types.js'

const ResponseHeader = messageType('etcdserverpb.ResponseHeader')
const PutResponse = messageType('etcdserverpb.PutResponse')
const RangeResponse = messageType('etcdserverpb.RangeResponse')
const WatchResponse = messageType('etcdserverpb.WatchResponse')

const U64_MAX = 2n ** 64n - 1n
const revision = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })
const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))
const keyValue: fc.Arbitrary<KeyValue> = fc.record({
  key: bytes.filter((b) => b.length > 0),
  value: bytes,
  createRevision: revision,
  modRevision: revision,
  version: fc.integer({ min: 0, max: 2 ** 40 }),
  lease: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
})
const event: fc.Arbitrary<Event> = fc
  .record({
    type: fc.constantFrom('PUT' as const, 'DELETE' as const),
    kv: keyValue,
    prevKv: fc.option(keyValue, { nil: undefined }),
  })
  .map((e) => (e.prevKv === undefined ? { type: e.type, kv: e.kv } : e))

/** The message as decoded by protobufjs with every default present, for deep comparison. */
const roundTrip = (type: ReturnType<typeof messageType>, bytes: Buffer) => decode(type, bytes)

function eventObject(e: Event): Record<string, unknown> {
  const m: Record<string, unknown> = { kv: kvMessage(e.kv) }
  if (e.type === 'DELETE') m.type = 1
  if (e.prevKv !== undefined) m.prev_kv = kvMessage(e.prevKv)
  return m
}

describe('apiserver/etcd/wire', () => {
  it('encodes response headers as protobufjs does, for any ids and revision', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), fc.bigInt({ min: 0n, max: U64_MAX }), revision, (cluster, member, rev) => {
        const bytes = new HeaderEncoder(cluster, member, 2).header(rev)
        const expected = { cluster_id: cluster.toString(), member_id: member.toString(), revision: String(rev), raft_term: '2' }
        expect(roundTrip(ResponseHeader, bytes)).to.deep.equal(expected)
        expect(roundTrip(ResponseHeader, bytes)).to.deep.equal(roundTrip(ResponseHeader, encode(ResponseHeader, expected)))
      }),
    )
  })

  it('encodes PutResponse with and without prev_kv', () => {
    const header = new HeaderEncoder(7n, 9n, 2)
    fc.assert(
      fc.property(revision, fc.option(keyValue, { nil: undefined }), (rev, prev) => {
        const expected: Record<string, unknown> = { header: { cluster_id: '7', member_id: '9', revision: rev, raft_term: 2 } }
        if (prev !== undefined) expected.prev_kv = kvMessage(prev)
        expect(roundTrip(PutResponse, putResponse(header.header(rev), prev))).to.deep.equal(
          roundTrip(PutResponse, encode(PutResponse, expected)),
        )
      }),
    )
  })

  it('encodes RangeResponse as protobufjs encodes the message convert.ts builds, for any kvs, more and count', () => {
    const header = new HeaderEncoder(7n, 9n, 2)
    const range = fc.record({ kvs: fc.array(keyValue, { maxLength: 8 }), more: fc.boolean(), count: fc.nat() })
    fc.assert(
      fc.property(revision, range, (rev, r) => {
        const bytes = rangeResponse(header.header(rev), r)
        const expected = encode(RangeResponse, rangeResponseMessage({ cluster_id: '7', member_id: '9', revision: rev, raft_term: 2 }, r))
        expect(roundTrip(RangeResponse, bytes)).to.deep.equal(roundTrip(RangeResponse, expected))
      }),
    )
  })

  it('a watch head followed by events fields is the WatchResponse with those events, negative ids included', () => {
    const header = new HeaderEncoder(1n, 2n, 2)
    fc.assert(
      fc.property(fc.integer({ min: -1, max: 2 ** 40 }), revision, fc.array(event, { maxLength: 5 }), (id, rev, events) => {
        const bytes = Buffer.concat([watchHead(header.header(rev), id), eventsFields(events)])
        const expected = encode(WatchResponse, {
          header: { cluster_id: '1', member_id: '2', revision: rev, raft_term: 2 },
          watch_id: id,
          events: events.map(eventObject),
        })
        expect(roundTrip(WatchResponse, bytes)).to.deep.equal(roundTrip(WatchResponse, expected))
      }),
    )
  })

  it('encodes each event object once', () => {
    const e: Event = {
      type: 'PUT',
      kv: { key: Buffer.from('k'), value: Buffer.from('v'), createRevision: 2, modRevision: 3, version: 2, lease: 0n },
    }
    expect(eventsField(e)).to.equal(eventsField(e))
    expect(eventsField({ ...e })).to.not.equal(eventsField(e))
    expect(eventsField({ ...e })).to.deep.equal(eventsField(e))
  })
})
