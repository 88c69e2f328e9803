/**
 * A compaction batch's writes as they cross from the compaction thread to the main thread
 * (compact-thread.ts): every op's key and value packed into one ArrayBuffer, and a scan's scanned
 * entries' figures into a Float64Array, both transferred rather than copied (a hist walk's batch is its
 * ops alone). On the main thread the ops' keys and values are views into that buffer: a batch of hundreds
 * of ops arrives as two objects to deserialize instead of a Buffer per key and value, and the main
 * thread's heap gets only the op objects the LevelDB batch is built from.
 *
 *   ops:      [type u8][key length u32][key]([value length u32][value])  ... (value for puts only)
 *   scanned:  [rev, bytes, timestamp] ...
 */
import type { BatchPlan } from './compact-batch.js'
import type { BatchOp } from '../segments.js'

const PUT = 1
const DEL = 2

/** What the main thread needs of a plan to write it (compactor.ts). */
export type PlannedWrite = Pick<BatchPlan, 'ops' | 'scanned' | 'kept'>

export interface PackedPlan {
  ops: ArrayBuffer
  scanned: Float64Array
  kept: { entries: number; bytes: number }
}

/** Ops packed into one ArrayBuffer (the layout above). */
export function packOps(ops: readonly BatchOp[]): ArrayBuffer {
  let size = 0
  for (const op of ops) size += 5 + op.key.length + (op.type === 'put' ? 4 + op.value.length : 0)
  const bytes = new Uint8Array(new ArrayBuffer(size))
  const view = new DataView(bytes.buffer)
  let at = 0
  const put = (b: Buffer) => {
    view.setUint32(at, b.length)
    bytes.set(b, at + 4)
    at += 4 + b.length
  }
  for (const op of ops) {
    view.setUint8(at++, op.type === 'put' ? PUT : DEL)
    put(op.key)
    if (op.type === 'put') put(op.value)
  }
  return bytes.buffer
}

/** The ops of packOps, their keys and values views into `packed`. */
export function unpackOps(packed: ArrayBuffer): BatchOp[] {
  const view = new DataView(packed)
  const ops: BatchOp[] = []
  let at = 0
  const take = () => {
    const length = view.getUint32(at)
    const b = Buffer.from(packed, at + 4, length)
    at += 4 + length
    return b
  }
  while (at < packed.byteLength) {
    const type = view.getUint8(at++)
    if (type === PUT) ops.push({ type: 'put', key: take(), value: take() })
    else if (type === DEL) ops.push({ type: 'del', key: take() })
    else throw new Error(`compaction batch: unknown op type ${type} at byte ${at - 1}`)
  }
  return ops
}

/** The plan's writes packed, and the buffers to transfer with them. */
export function packPlan(plan: PlannedWrite): { packed: PackedPlan; transfer: ArrayBuffer[] } {
  const ops = packOps(plan.ops)
  const scanned = new Float64Array(plan.scanned.length * 3)
  plan.scanned.forEach((s, i) => scanned.set([s.rev, s.bytes, s.timestamp], i * 3))
  return { packed: { ops, scanned, kept: plan.kept }, transfer: [ops, scanned.buffer as ArrayBuffer] }
}

export function unpackPlan(packed: PackedPlan): PlannedWrite {
  const ops = unpackOps(packed.ops)
  const s = packed.scanned
  const scanned = []
  for (let i = 0; i < s.length; i += 3) scanned.push({ rev: s[i], bytes: s[i + 1], timestamp: s[i + 2] })
  return { ops, scanned, kept: packed.kept }
}
