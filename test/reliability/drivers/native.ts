/**
 * The native front door (HTTP + WebSocket) as a reliability driver: operations through KvlogClient
 * (clients/), whose error classes already say what a failure means (OutcomeUnknownError: may have been
 * applied; UnreachableError: nothing sent; KvlogClientError: answered with a stable code); watches through
 * the recording WatchConnection of test/support.
 */
import type { Credentials } from '../../../clients/auth.js'
import { KvlogClient, KvlogClientError, OutcomeUnknownError, UnreachableError, type KeyValue } from '../../../clients/index.js'
import { WatchConnection, type WireKv } from '../../support/watch-client.js'
import type { KeySelection, Operation, OpResult, TxnCompare, TxnOp, TxnOpResult } from '../history.js'
import type { Classified, Door, Driver } from './types.js'

const buf = (b64: string) => Buffer.from(b64, 'base64')

export function wireKv(kv: KeyValue): WireKv {
  const out: WireKv = {
    keyBase64: kv.key.toString('base64'),
    valueBase64: kv.value.toString('base64'),
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
  }
  if (kv.lease !== 0n) out.lease = kv.lease.toString()
  return out
}

function selectionJson(sel: KeySelection): Record<string, unknown> {
  const o: Record<string, unknown> = { keyBase64: sel.keyBase64 }
  if (sel.prefix) o.prefix = true
  if (sel.fromKey) o.fromKey = true
  if (sel.rangeEndBase64 !== undefined) o.rangeEndBase64 = sel.rangeEndBase64
  return o
}

function compareJson(c: TxnCompare): Record<string, unknown> {
  return {
    keyBase64: c.keyBase64,
    target: c.target,
    result: c.result,
    ...(c.target === 'VALUE' ? { valueBase64: c.value } : { value: c.value }),
  }
}

function opJson(op: TxnOp): Record<string, unknown> {
  if (op.type === 'put')
    return { type: 'put', keyBase64: op.keyBase64, valueBase64: op.valueBase64, ...(op.lease ? { lease: op.lease } : {}) }
  return { type: op.type, ...selectionJson(op.sel) }
}

function rangeOptions(sel: KeySelection): { prefix?: boolean; fromKey?: boolean; rangeEnd?: Buffer } {
  return { prefix: sel.prefix, fromKey: sel.fromKey, ...(sel.rangeEndBase64 !== undefined ? { rangeEnd: buf(sel.rangeEndBase64) } : {}) }
}

/** What an error of the client library (clients/) says about a write's outcome (also the resource client's). */
export function classifyClientError(err: unknown): Classified {
  if (err instanceof OutcomeUnknownError) return { outcome: 'unknown', code: err.code }
  if (err instanceof UnreachableError) return { outcome: 'fail', code: err.code }
  if (err instanceof KvlogClientError) return { outcome: 'fail', code: err.code }
  throw err
}

export class NativeDriver implements Driver {
  readonly door = 'native'
  private readonly client: KvlogClient

  /** `credentials`: with auth enabled (the client logs in on first use and again after a 401). */
  constructor(endpoint: string, timeoutMs = 5000, credentials?: Credentials) {
    this.client = new KvlogClient({ endpoint, timeoutMs, readRetries: 1, ...(credentials !== undefined ? { credentials } : {}) })
  }

  supports(type: Operation['type']): boolean {
    return type !== 'leaseGrant' && type !== 'leaseRevoke' && type !== 'object'
  }

  async execute(op: Operation): Promise<OpResult> {
    const c = this.client
    switch (op.type) {
      case 'put':
        return {
          revision: (await c.put(buf(op.keyBase64), buf(op.valueBase64), op.lease !== undefined ? { lease: op.lease } : {})).revision,
        }
      case 'delete': {
        const r = await c.delete(buf(op.sel.keyBase64), rangeOptions(op.sel))
        return { revision: r.revision, deleted: r.deleted }
      }
      case 'range': {
        const r = await c.range(buf(op.sel.keyBase64), { ...rangeOptions(op.sel), revision: op.revision })
        return { revision: r.revision, kvs: r.kvs.map(wireKv) }
      }
      case 'txn': {
        const r = await c.txn({ compare: op.compare.map(compareJson), success: op.success.map(opJson), failure: op.failure.map(opJson) })
        const results: TxnOpResult[] = r.results.map((x) => ({
          type: x.type as TxnOpResult['type'],
          ...(typeof x.deleted === 'number' ? { deleted: x.deleted } : {}),
          ...(Array.isArray(x.kvs) ? { kvs: x.kvs as WireKv[] } : {}),
        }))
        return { revision: r.revision, succeeded: r.succeeded, results }
      }
      case 'compact': {
        const r = await c.compact(op.revision)
        return { revision: (r.header as { revision: number }).revision }
      }
      default:
        throw new TypeError(`the native door has no ${op.type}`)
    }
  }

  classify(err: unknown): Classified {
    return classifyClientError(err)
  }

  async close(): Promise<void> {}
}

/** The Authorization header of a fixed bearer token (none without one). */
export function bearer(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: `Bearer ${token}` }
}

/** The native door at `endpoint` (an http:// URL; watches use its /v1/watch WebSocket); `token`: a fixed bearer token. */
export function nativeDoor(endpoint: string, token?: string): Door {
  return {
    name: 'native',
    driver: () => new NativeDriver(endpoint, 5000, token !== undefined ? { token } : undefined),
    connectWatch: (label) => WatchConnection.connect(endpoint, label, bearer(token)),
    watches: (spec) => spec.objectView !== true,
    close: async () => undefined,
  }
}
