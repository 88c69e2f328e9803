/**
 * The watch stream splitter: any chunking of a stream of JSON objects (strings with braces, escapes,
 * multi-byte characters, nested arrays) yields the same objects in order.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { JsonObjectStream, MalformedStreamError } from '../../../clients/index.js'

const events = [
  { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '2' }, data: { x: '{not "a} brace' } } },
  { type: 'MODIFIED', object: { metadata: { name: 'b\\"}' }, data: { emoji: '✓ 漢字 🚀', list: [[1, { y: [] }], '\\'] } } },
  { type: 'DELETED', object: { metadata: { name: 'c' } } },
  { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1000 (2000)' } },
]

/** Feeds `text` cut at the given offsets, decoding bytes as a fetch body reader would. */
function feed(text: string, cuts: number[]): unknown[] {
  const bytes = Buffer.from(text, 'utf8')
  const decoder = new TextDecoder()
  const parser = new JsonObjectStream()
  const out: unknown[] = []
  let at = 0
  for (const c of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    out.push(...parser.push(decoder.decode(bytes.subarray(at, c), { stream: true })))
    at = c
  }
  expect(parser.partial).to.equal(false)
  return out
}

describe('JsonObjectStream (watch stream parser)', () => {
  it('splits newline-delimited events in one chunk', () => {
    expect(feed(events.map((e) => JSON.stringify(e)).join('\n') + '\n', [])).to.deep.equal(events)
  })

  it('splits concatenated objects with no separator, and pretty-printed ones', () => {
    expect(feed(events.map((e) => JSON.stringify(e)).join(''), [])).to.deep.equal(events)
    expect(feed(events.map((e) => JSON.stringify(e, null, 2)).join('\r\n'), [])).to.deep.equal(events)
  })

  it('gives the same objects for any chunking (bytes cut anywhere, inside strings and UTF-8 sequences)', () => {
    const text = events.map((e) => JSON.stringify(e)).join('\n')
    const len = Buffer.byteLength(text)
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: len - 1 }), { maxLength: 40 }), (cuts) => {
        expect(feed(text, cuts)).to.deep.equal(events)
      }),
      { numRuns: 300 },
    )
  })

  it('reports an object cut by the end of the stream as partial', () => {
    const p = new JsonObjectStream()
    expect(p.push('{"type":"ADDED","object":{"metadata":')).to.deep.equal([])
    expect(p.partial).to.equal(true)
    expect(p.push('{}}}')).to.have.length(1)
    expect(p.partial).to.equal(false)
  })

  it('rejects a stream that is not a sequence of objects', () => {
    expect(() => new JsonObjectStream().push('[1,2]'))
      .to.throw(MalformedStreamError)
      .with.property('code', 'MALFORMED_STREAM')
    expect(() => new JsonObjectStream().push('{"a":1} oops')).to.throw(MalformedStreamError)
    expect(() => new JsonObjectStream().push('{"a":tru}')).to.throw(MalformedStreamError)
  })
})
