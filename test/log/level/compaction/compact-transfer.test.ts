/**
 * log/level/compaction/compact-transfer.ts: a batch plan packed on the compaction thread comes out on the main thread with
 * the same ops (keys and values byte for byte, in order), scanned entries and kept figures, and the
 * buffers it names are the ones to transfer.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { packPlan, unpackPlan, type PlannedWrite } from '../../../../log/level/compaction/compact-transfer.js'
import type { BatchOp } from '../../../../log/level/segments.js'

const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))
const op: fc.Arbitrary<BatchOp> = fc.oneof(
  fc.record({ type: fc.constant('put' as const), key: bytes, value: bytes }),
  fc.record({ type: fc.constant('del' as const), key: bytes }),
)
const plan: fc.Arbitrary<PlannedWrite> = fc.record({
  ops: fc.array(op, { maxLength: 60 }),
  scanned: fc.array(fc.record({ rev: fc.integer({ min: 1, max: 2 ** 52 }), bytes: fc.nat(), timestamp: fc.nat() }), { maxLength: 60 }),
  kept: fc.record({ entries: fc.integer({ min: -1000, max: 1000 }), bytes: fc.integer({ min: -1e9, max: 1e9 }) }),
})

/** Ops as plain data, so deep equality compares bytes and not Buffer views. */
const plain = (ops: readonly BatchOp[]) =>
  ops.map((o) => (o.type === 'put' ? { type: o.type, key: [...o.key], value: [...o.value] } : { type: o.type, key: [...o.key] }))

describe('log/compact-transfer: a batch plan across threads', function () {
  it('unpack(pack(plan)) has the same ops, scanned entries and kept figures', () => {
    fc.assert(
      fc.property(plan, (p) => {
        const { packed } = packPlan(p)
        const out = unpackPlan(packed)
        expect(plain(out.ops)).to.deep.equal(plain(p.ops))
        expect(out.scanned).to.deep.equal(p.scanned)
        expect(out.kept).to.deep.equal(p.kept)
      }),
      { numRuns: 200 },
    )
  })

  it('transfers the ops buffer and the scanned figures, and survives a real transfer', async () => {
    const p: PlannedWrite = {
      ops: [
        { type: 'del', key: Buffer.from('h/a') },
        { type: 'put', key: Buffer.from('l/7'), value: Buffer.from([1, 2, 3]) },
      ],
      scanned: [{ rev: 7, bytes: 40, timestamp: 1_700_000_000_000 }],
      kept: { entries: 1, bytes: 3 },
    }
    const { packed, transfer } = packPlan(p)
    expect(transfer).to.have.members([packed.ops, packed.scanned.buffer])
    // structuredClone with a transfer list does what postMessage does: the sender's buffers are detached.
    const received = structuredClone(packed, { transfer })
    expect(packed.ops.byteLength, 'detached after the transfer').to.equal(0)
    const out = unpackPlan(received)
    expect(plain(out.ops)).to.deep.equal(plain(p.ops))
    expect(out.scanned).to.deep.equal(p.scanned)
  })

  it('refuses a buffer with an unknown op type', () => {
    const { packed } = packPlan({ ops: [{ type: 'del', key: Buffer.from('k') }], scanned: [], kept: { entries: 0, bytes: 0 } })
    new Uint8Array(packed.ops)[0] = 9
    expect(() => unpackPlan(packed)).to.throw(/unknown op type 9 at byte 0/)
  })
})
