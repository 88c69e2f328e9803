/** kvJsonText: the JSON text of a kv written from its fields, byte for byte kvToJson's. */
import { expect } from 'chai'
import { kvJsonText, kvToJson } from '../../apiserver/codec.js'
import type { KeyValue } from '../../log/types.js'

describe('codec: kvJsonText', () => {
  const kvs: KeyValue[] = [
    { key: Buffer.from('/a/b'), value: Buffer.from('{"x":"\\u0000\\n é 😀"}'), createRevision: 3, modRevision: 9, version: 4, lease: 0n },
    {
      key: Buffer.from([0xff, 0x00, 0x80]),
      value: Buffer.from([0xc3, 0x28]),
      createRevision: 1,
      modRevision: 1,
      version: 1,
      lease: 18446744073709551615n,
    },
    { key: Buffer.from('\uFEFFbom'), value: Buffer.alloc(0), createRevision: 7, modRevision: 8, version: 2, lease: 5n },
  ]
  for (const keysOnly of [false, true]) {
    it(`writes the bytes JSON.stringify(kvToJson(kv, ${keysOnly})) writes`, () => {
      for (const kv of kvs) {
        const text = kvJsonText(kv.key, kv.value, kv.createRevision, kv.modRevision, kv.version, kv.lease, keysOnly)
        expect(text).to.equal(JSON.stringify(kvToJson(kv, keysOnly)))
      }
    })
  }
})
