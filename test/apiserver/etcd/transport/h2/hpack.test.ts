/**
 * HPACK (apiserver/etcd/transport/h2/hpack.ts, huffman.ts): the examples of RFC 7541 Appendix C, decoded
 * in sequence by one decoder (so its dynamic table is checked too), with and without Huffman coding;
 * what kvlog encodes decodes back; and blocks that break the rules are refused.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { encodeHeaders, HpackDecoder } from '../../../../../apiserver/etcd/transport/h2/hpack.js'
import { HpackError } from '../../../../../apiserver/etcd/transport/h2/hpack-error.js'
import { huffmanDecode } from '../../../../../apiserver/etcd/transport/h2/huffman.js'

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex')
const plain = (headers: object) => ({ ...headers })

const FIRST = { ':method': 'GET', ':scheme': 'http', ':path': '/', ':authority': 'www.example.com' }
const SECOND = { ...FIRST, 'cache-control': 'no-cache' }
const THIRD = {
  ':method': 'GET',
  ':scheme': 'https',
  ':path': '/index.html',
  ':authority': 'www.example.com',
  'custom-key': 'custom-value',
}

describe('apiserver/etcd/transport/h2: HPACK', function () {
  it('decodes RFC 7541 C.3 (requests, raw strings) with one dynamic table', () => {
    const d = new HpackDecoder()
    expect(plain(d.decode(hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d')))).to.deep.equal(FIRST)
    expect(plain(d.decode(hex('8286 84be 5808 6e6f 2d63 6163 6865')))).to.deep.equal(SECOND)
    expect(plain(d.decode(hex('8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65')))).to.deep.equal(THIRD)
  })

  it('decodes RFC 7541 C.4 (requests, Huffman-coded strings) with one dynamic table', () => {
    const d = new HpackDecoder()
    expect(plain(d.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff')))).to.deep.equal(FIRST)
    expect(plain(d.decode(hex('8286 84be 5886 a8eb 1064 9cbf')))).to.deep.equal(SECOND)
    expect(plain(d.decode(hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf')))).to.deep.equal(THIRD)
  })

  it('evicts the oldest entries when the table is full, and follows a size update', () => {
    const d = new HpackDecoder(64)
    // Two literals with indexing of 32 + 1 + 1 bytes each: the second evicts the first.
    d.decode(Buffer.concat([hex('40 01 61 01 31'), hex('40 01 62 01 32')]))
    expect(plain(d.decode(hex('be')))).to.deep.equal({ b: '2' })
    expect(() => d.decode(hex('bf'))).to.throw(HpackError)
    // A size update to 0 empties the table.
    expect(plain(d.decode(hex('20')))).to.deep.equal({})
    expect(() => d.decode(hex('be'))).to.throw(HpackError)
  })

  it('refuses what breaks the rules', () => {
    const cases: Array<[string, string]> = [
      ['80', 'index 0'],
      ['ff 00', 'an index beyond both tables'],
      ['3f e2 1f', 'a size update over the announced limit'],
      ['82 20', 'a size update after a field'],
      ['00 01 61 85 ff', 'a string longer than the block'],
      ['00 01 61 81 00', 'Huffman padding that is not all ones'],
      ['00 01 61 82 ff ff', 'Huffman padding of more than 7 bits'],
      ['ff ff ff ff ff ff 7f', 'an integer over 2^31'],
      ['82 82', 'a repeated pseudo-header'],
    ]
    for (const [block, what] of cases) expect(() => new HpackDecoder().decode(hex(block)), what).to.throw(HpackError)
  })

  it('decodes a Huffman string to the bytes it codes', () => {
    expect(huffmanDecode(hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff')).toString()).to.equal('www.example.com')
    expect(huffmanDecode(hex('6402')).toString()).to.equal('302')
    expect(huffmanDecode(Buffer.alloc(0)).length).to.equal(0)
  })

  it('what kvlog encodes decodes to the same fields (static matches, static names, new names)', () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/)
    const value = fc.stringMatching(/^[\x20-\x7e]{0,200}$/)
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, maxLength: 12 }), (fields) => {
        const all: Array<[string, string]> = [[':status', '200'], ['content-type', 'application/grpc'], ...fields]
        const decoded = plain(new HpackDecoder().decode(encodeHeaders(all)))
        expect(decoded).to.deep.equal(Object.fromEntries(all))
      }),
    )
    // ':status: 200' is static entry 8: one byte.
    expect(encodeHeaders([[':status', '200']])).to.deep.equal(hex('88'))
  })
})
