/**
 * log/level/records.ts: the lean reader of log entries that compaction scans with (decodeEntryRefs) gives the
 * same kind, key and prevRevision as the full decoder, over the number and length forms msgpack has, and
 * falls back to the full decoder for entries laid out otherwise.
 */
import { expect } from 'chai'
import { Packr } from 'msgpackr'
import { decodeEntry, decodeEntryRefs, encodeEntry, readEntryRefs, type LoggedEntry } from '../../../log/level/records.js'
import { OP_DELETE, OP_PUT, type LoggedOp } from '../../../log/ops.js'
import { rng } from '../../support/random.js'

const SEED = 20261123

/** Each op's kind, key and prevRevision, comparable with deep.equal. */
const refsOf = (e: { timestamp: number; ops: ReadonlyArray<Pick<LoggedOp, 'kind' | 'key' | 'prevRevision'>> }) => ({
  timestamp: e.timestamp,
  ops: e.ops.map((op) => ({ kind: op.kind, key: op.key.toString('hex'), prevRevision: op.prevRevision })),
})

/** Numbers across msgpack's forms: fixint, 8/16/32-bit, and above 2^32 (written as float64). */
function revisionFrom(random: () => number): number {
  const bits = [0, 7, 8, 16, 31, 32, 40, 53][Math.floor(random() * 8)]
  return Math.min(Number.MAX_SAFE_INTEGER, Math.floor(random() * 2 ** bits))
}

function randomEntry(random: () => number): LoggedEntry {
  const lengths = [0, 1, 31, 255, 256, 65_535, 65_536]
  const ops: LoggedOp[] = Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
    const kind = random() < 0.7 ? OP_PUT : OP_DELETE
    return {
      kind,
      key: Buffer.alloc(lengths[Math.floor(random() * 5)] || 1, Math.floor(random() * 256)),
      value: kind === OP_PUT ? Buffer.alloc(lengths[Math.floor(random() * lengths.length)], 7) : Buffer.alloc(0),
      createRevision: revisionFrom(random),
      version: revisionFrom(random),
      lease: random() < 0.5 ? 0n : BigInt(revisionFrom(random)) * 1024n + 1n,
      prevRevision: revisionFrom(random),
    }
  })
  return { timestamp: 1_700_000_000_000 + Math.floor(random() * 1e9), ops }
}

describe('log/records: decodeEntryRefs', () => {
  it(`reads kind, key and prevRevision as decodeEntry does, without falling back (500 random entries, seed ${SEED})`, () => {
    const random = rng(SEED)
    for (let i = 0; i < 500; i++) {
      const bytes = encodeEntry(randomEntry(random))
      const lean = readEntryRefs(bytes)
      expect(lean, `entry ${i} read by the lean reader`).to.not.equal(undefined)
      expect(refsOf(lean!), `entry ${i}`).to.deep.equal(refsOf(decodeEntry(bytes)))
    }
  })

  it('gives keys as views into the entry, not copies', () => {
    const bytes = encodeEntry({
      timestamp: 1,
      ops: [{ kind: OP_PUT, key: Buffer.from('k'), value: Buffer.from('v'), createRevision: 1, version: 1, lease: 0n, prevRevision: 0 }],
    })
    const [op] = decodeEntryRefs(bytes).ops
    expect(op.key.buffer).to.equal(bytes.buffer)
  })

  it('falls back to decodeEntry for entries laid out otherwise, and fails as it does on damaged ones', () => {
    // Another writer's msgpack: the op's kind as a float, an extra trailing op field.
    const other = new Packr({ useRecords: false, moreTypes: false }).pack([5, [[0.0, Buffer.from('a'), null, 1, 1, 0, 3, 'extra']]])
    expect(readEntryRefs(other)).to.equal(undefined)
    expect(refsOf(decodeEntryRefs(other))).to.deep.equal({ timestamp: 5, ops: [{ kind: OP_PUT, key: '61', prevRevision: 3 }] })

    const bytes = encodeEntry(randomEntry(rng(SEED)))
    const cut = bytes.subarray(0, bytes.length - 3)
    expect(readEntryRefs(cut)).to.equal(undefined)
    expect(() => decodeEntryRefs(cut)).to.throw()
  })
})

describe('log/records: authors', () => {
  const ops: LoggedOp[] = [
    { kind: OP_PUT, key: Buffer.from('k'), value: Buffer.from('v'), createRevision: 2, version: 1, lease: 0n, prevRevision: 0 },
  ]
  it('keep the door, the user, or an anonymous client’s agent, and entries without one read as before', () => {
    for (const author of [{ door: 'http' }, { door: 'etcd', user: 'alice' }, { door: 'resources', agent: 'kubectl/v1.31.0' }]) {
      const entry = { timestamp: 1_700_000_000_000, ops, author }
      expect(decodeEntry(encodeEntry(entry)).author).to.deep.equal(author)
      expect(refsOf(decodeEntryRefs(encodeEntry(entry)))).to.deep.equal(refsOf(entry))
    }
    expect(decodeEntry(encodeEntry({ timestamp: 1, ops })).author).to.equal(undefined)
  })
})
