/**
 * The recorded history of a reliability run, door-neutral: every operation with its real-time start and
 * end, what it asked and what it was told; every watch stream (test/apiserver/watch/checker.ts shapes);
 * what the server showed right after each restart; the oracle (the whole log, fetched from the server's
 * own history before anything could hide it: a compaction, the end).
 *
 * Keys and values are base64 (any bytes). Times are performance.now() of the process that recorded them,
 * so "A ended before B started" is a comparison of numbers.
 */
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import type { LogicalWatch, OracleView } from '../apiserver/watch/checker.js'
import type { WireKv } from '../support/watch-client.js'

/** One key (keyBase64 alone), a prefix, every key >= keyBase64, or [keyBase64, rangeEndBase64). */
export interface KeySelection {
  keyBase64: string
  prefix?: boolean
  fromKey?: boolean
  rangeEndBase64?: string
}

export type CompareTarget = 'MOD' | 'VERSION' | 'CREATE' | 'VALUE'
export type CompareResult = 'EQUAL' | 'NOT_EQUAL' | 'LESS' | 'GREATER'

/** A compare on one key: a number for MOD/VERSION/CREATE, base64 bytes for VALUE. */
export interface TxnCompare {
  keyBase64: string
  target: CompareTarget
  result: CompareResult
  value: number | string
}

export type TxnOp =
  | { type: 'put'; keyBase64: string; valueBase64: string; lease?: string }
  | { type: 'delete'; sel: KeySelection }
  | { type: 'range'; sel: KeySelection }

export type Operation =
  | { type: 'put'; keyBase64: string; valueBase64: string; lease?: string }
  | { type: 'delete'; sel: KeySelection }
  | { type: 'txn'; compare: TxnCompare[]; success: TxnOp[]; failure: TxnOp[] }
  /** `revision` absent: the latest state (a linearizable read). */
  | { type: 'range'; sel: KeySelection; revision?: number }
  /** Raise the compact revision (not a write: it gets no revision). */
  | { type: 'compact'; revision: number }
  | { type: 'leaseGrant'; ttlSeconds: number }
  | { type: 'leaseRevoke'; lease: string }
  /**
   * A resource-API write of the object stored at `keyBase64`, with kube-apiserver's preconditions:
   * create (the key must be absent), update and delete (its mod revision must be `resourceVersion`).
   * The server builds the stored bytes (uid, timestamps), so a put is told apart by `tag`, a unique value
   * the object carries (objectTag); the stored bytes come back in the result.
   */
  | { type: 'object'; verb: 'create' | 'update' | 'delete'; keyBase64: string; resourceVersion?: number; tag: string }

/** What one txn op answered (only what the checker compares). */
export interface TxnOpResult {
  type: 'put' | 'delete' | 'range'
  deleted?: number
  kvs?: WireKv[]
}

export interface OpResult {
  /** header.revision: a write's own revision, else the revision the answer reflects. */
  revision: number
  succeeded?: boolean
  deleted?: number
  kvs?: WireKv[]
  results?: TxnOpResult[]
  lease?: string
  /** An object op's stored bytes (create, update); for a delete, `revision` is the deleted version's. */
  valueBase64?: string
}

/**
 * ok: the server answered with success. fail: the server answered with an error code, or nothing was
 * sent (unreachable): not applied. unknown: the connection failed after the request may have been sent.
 */
export type Outcome = 'ok' | 'fail' | 'unknown'

export interface OpRecord {
  id: number
  /** Which client (one sequence of operations, never two at once). */
  client: string
  /** Which front door: native, grpc, resources. */
  door: string
  start: number
  end: number
  op: Operation
  outcome: Outcome
  /** The stable error code for fail, or the client-side one (UNREACHABLE, OUTCOME_UNKNOWN). */
  code?: string
  result?: OpResult
}

/** What the server showed right after a restart (before any client was let back in). */
export interface RecoveryCheck {
  /** Which restart (1, 2, ...), and the fault that caused it. */
  index: number
  fault: string
  at: number
  /** The server's revision and compact revision after it came back. */
  revision: number
  compactRevision: number
  /** History from the compact revision to `revision`, re-read after the restart. */
  events: OracleView['events']
  /** Every key at `revision`. */
  kvs: WireKv[]
}

export interface History {
  ops: OpRecord[]
  watches: LogicalWatch[]
  recoveries: RecoveryCheck[]
  oracle: OracleView
  /** The revision every live watch had to reach at the end (undefined: do not check). */
  finalRevision?: number
}

/** Whether an operation may change the store. */
export function isWrite(op: Operation): boolean {
  return op.type === 'put' || op.type === 'delete' || op.type === 'txn' || op.type === 'leaseRevoke' || op.type === 'object'
}

/** The field of a resource-API object that carries a write's unique tag (data.<OBJECT_TAG_FIELD>). */
export const OBJECT_TAG_FIELD = 'soakTag'

/** The identity of an object write's value: its tag (never valid base64, so it cannot clash with a value). */
export const tagIdentity = (tag: string) => `tag:${tag}`

/** The tag identity of a stored value that is a resource-API object carrying one, else undefined. */
export function objectTag(valueBase64: string): string | undefined {
  const text = Buffer.from(valueBase64, 'base64').toString('utf8')
  if (!text.startsWith('{') || !text.includes(OBJECT_TAG_FIELD)) return undefined
  try {
    const tag = (JSON.parse(text) as { data?: Record<string, unknown> }).data?.[OBJECT_TAG_FIELD]
    return typeof tag === 'string' ? tagIdentity(tag) : undefined
  } catch {
    return undefined
  }
}

/**
 * Every value an operation would put, on any branch: unique values tie an event to its operation. Object
 * writes give their tag identity (objectTag of the stored value).
 */
export function putValues(op: Operation): string[] {
  if (op.type === 'put') return [op.valueBase64]
  if (op.type === 'object') return op.verb === 'delete' ? [] : [tagIdentity(op.tag)]
  if (op.type !== 'txn') return []
  return [...op.success, ...op.failure].flatMap((o) => (o.type === 'put' ? [o.valueBase64] : []))
}

/** A short description for violation messages. */
export function describeOp(r: OpRecord): string {
  const key = (b64: string) => JSON.stringify(Buffer.from(b64, 'base64').toString('utf8'))
  const op = r.op
  let what: string
  switch (op.type) {
    case 'put':
      what = `put ${key(op.keyBase64)}`
      break
    case 'delete':
    case 'range':
      what = `${op.type} ${key(op.sel.keyBase64)}${op.sel.prefix ? '*' : op.sel.fromKey ? '..' : op.sel.rangeEndBase64 ? `..${key(op.sel.rangeEndBase64)}` : ''}`
      break
    case 'object':
      what = `${op.verb} ${key(op.keyBase64)}${op.resourceVersion !== undefined ? ` if rv ${op.resourceVersion}` : ''}`
      break
    case 'txn':
      what = `txn(${op.compare.length} compares, ${op.success.length}/${op.failure.length} ops)`
      break
    default:
      what = op.type
  }
  return `op #${r.id} ${r.door}/${r.client} ${what} [${r.outcome}${r.code ? ` ${r.code}` : ''}${r.result ? ` @${r.result.revision}` : ''}]`
}

/**
 * Writes a history as one JSON document, element by element: a long run's history is larger than the
 * biggest string JSON.stringify can build.
 */
export async function dumpHistory(path: string, h: History): Promise<void> {
  const out = createWriteStream(path)
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain')
  }
  const list = async (name: string, items: readonly unknown[], last = false) => {
    await write(`${JSON.stringify(name)}:[`)
    for (let i = 0; i < items.length; i++) await write((i > 0 ? ',' : '') + JSON.stringify(items[i]))
    await write(last ? ']' : '],')
  }
  await write(`{"finalRevision":${JSON.stringify(h.finalRevision ?? null)},"oracle":{"first":${h.oracle.first},"last":${h.oracle.last},`)
  await list('events', h.oracle.events, true)
  await write('},')
  await list('ops', h.ops)
  await list('recoveries', h.recoveries)
  await list('watches', h.watches, true)
  await write('}\n')
  out.end()
  await once(out, 'finish')
}
