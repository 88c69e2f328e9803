/**
 * An etcd v3 client that records every operation for the checkers: its input and output in the model's
 * terms (linearizability/types.ts), with performance.now() at call and return. It speaks etcd's own proto
 * (the etcd3 package's copy, test/support/etcd3-proto.ts), so the same traffic runs against etcd and kvlog.
 *
 * An error the model predicts (compacted, future revision, lease not found) is recorded as such; any other
 * failure (a timeout, a dropped connection, a server that went away) leaves the outcome unknown: the op is
 * recorded with return = Infinity. A call that gets no answer in `timeoutMs` is such an unknown one.
 */
import { grpc } from '../../support/etcd3-proto.js'
import { etcd3Service } from '../../support/etcd3-proto.js'
import { etcdGrpc, type EtcdGrpc } from '../../support/etcd-grpc.js'
import type {
  Compare,
  ErrorCode,
  Input,
  Kv,
  OpResult,
  Operation,
  Output,
  RangeReq,
  RangeResult,
  TxnOp,
  WatchEvent,
} from '../linearizability/types.js'

type Msg = Record<string, unknown>

/** Reconnect fast after a server restart: the default backoff grows to minutes. */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 500,
  'grpc.keepalive_time_ms': 2_000,
  'grpc.keepalive_timeout_ms': 2_000,
}

export function connect(endpoint: string): EtcdGrpc {
  return etcdGrpc(endpoint, grpc.credentials.createInsecure(), etcd3Service, CHANNEL_OPTIONS)
}

const bytes = (s: string) => Buffer.from(s, 'latin1')
const text = (b: unknown) => (b === undefined || b === null ? '' : Buffer.from(b as Uint8Array).toString('latin1'))

export function kvOf(m: Msg): Kv {
  const kv: Kv = {
    key: text(m.key),
    value: text(m.value),
    create: Number(m.create_revision ?? 0),
    mod: Number(m.mod_revision ?? 0),
    version: Number(m.version ?? 0),
  }
  if (m.lease !== undefined && String(m.lease) !== '0') kv.lease = String(m.lease)
  return kv
}

export function eventOf(e: Msg): WatchEvent {
  const out: WatchEvent = { type: e.type === 'Delete' || e.type === 1 ? 'DELETE' : 'PUT', kv: kvOf(e.kv as Msg) }
  if (e.prev_kv !== undefined && e.prev_kv !== null) out.prevKv = kvOf(e.prev_kv as Msg)
  return out
}

export function rangeRequest(r: RangeReq): Msg {
  return {
    key: bytes(r.key),
    ...(r.end !== undefined ? { range_end: bytes(r.end) } : {}),
    ...(r.revision ? { revision: r.revision } : {}),
    ...(r.limit ? { limit: r.limit } : {}),
    keys_only: r.keysOnly === true,
    count_only: r.countOnly === true,
    serializable: r.serializable === true,
  }
}

function rangeResult(m: Msg): RangeResult {
  return { kvs: ((m.kvs as Msg[]) ?? []).map(kvOf), count: Number(m.count ?? 0), more: m.more === true }
}

function opRequest(op: TxnOp): Msg {
  if (op.type === 'range') return { request_range: rangeRequest(op.req) }
  if (op.type === 'put') return { request_put: { key: bytes(op.key), value: bytes(op.value), ...(op.lease ? { lease: op.lease } : {}) } }
  return { request_delete_range: { key: bytes(op.key), ...(op.end !== undefined ? { range_end: bytes(op.end) } : {}) } }
}

const TARGETS: Record<Compare['target'], string> = { VALUE: 'Value', VERSION: 'Version', CREATE: 'Create', MOD: 'Mod', LEASE: 'Lease' }
const RESULTS: Record<Compare['result'], string> = { EQUAL: 'Equal', NOT_EQUAL: 'NotEqual', LESS: 'Less', GREATER: 'Greater' }
const TARGET_FIELD: Record<Compare['target'], string> = {
  VALUE: 'value',
  VERSION: 'version',
  CREATE: 'create_revision',
  MOD: 'mod_revision',
  LEASE: 'lease',
}

function compareRequest(c: Compare): Msg {
  return {
    key: bytes(c.key),
    target: TARGETS[c.target],
    result: RESULTS[c.result],
    [TARGET_FIELD[c.target]]: c.target === 'VALUE' ? bytes(String(c.value)) : c.value,
  }
}

function opResult(r: Msg): OpResult {
  if (r.response_range) return { type: 'range', ...rangeResult(r.response_range as Msg) }
  if (r.response_put) return { type: 'put' }
  return { type: 'delete', deleted: Number((r.response_delete_range as Msg).deleted ?? 0) }
}

function errorCode(err: unknown): ErrorCode {
  const details = (err as { details?: string }).details ?? ''
  if (details.includes('required revision has been compacted')) return 'compacted'
  if (details.includes('required revision is a future revision')) return 'future-rev'
  if (details.includes('requested lease not found')) return 'lease-not-found'
  // grpc-js fails a call at once while its channel has no connection: nothing was sent.
  if ((err as { code?: number }).code === grpc.status.UNAVAILABLE && details.startsWith('No connection established')) return 'not-sent'
  return 'unknown'
}

const revisionOf = (m: Msg) => Number((m.header as Msg | undefined)?.revision ?? 0)

export class RecordingClient {
  /** The last call failed without an answer the model predicts (the server is away, or slow). */
  failing = false

  constructor(
    readonly id: number,
    readonly g: EtcdGrpc,
    private readonly history: Operation[],
    private readonly timeoutMs = 3_000,
  ) {}

  range(req: RangeReq): Promise<Output> {
    return this.record({ type: 'range', req }, 'KV', 'Range', rangeRequest(req), (m) => ({
      revision: revisionOf(m),
      range: rangeResult(m),
    }))
  }

  put(key: string, value: string, lease?: string): Promise<Output> {
    const req = { key: bytes(key), value: bytes(value), ...(lease ? { lease } : {}) }
    return this.record({ type: 'put', key, value, ...(lease ? { lease } : {}) }, 'KV', 'Put', req, (m) => ({ revision: revisionOf(m) }))
  }

  delete(key: string, end?: string): Promise<Output> {
    const req = { key: bytes(key), ...(end !== undefined ? { range_end: bytes(end) } : {}) }
    return this.record({ type: 'delete', key, ...(end !== undefined ? { end } : {}) }, 'KV', 'DeleteRange', req, (m) => ({
      revision: revisionOf(m),
      deleted: Number(m.deleted ?? 0),
    }))
  }

  txn(compare: Compare[], success: TxnOp[], failure: TxnOp[]): Promise<Output> {
    const req = { compare: compare.map(compareRequest), success: success.map(opRequest), failure: failure.map(opRequest) }
    return this.record({ type: 'txn', compare, success, failure }, 'KV', 'Txn', req, (m) => ({
      revision: revisionOf(m),
      succeeded: m.succeeded === true,
      results: ((m.responses as Msg[]) ?? []).map(opResult),
    }))
  }

  compact(revision: number): Promise<Output> {
    return this.record({ type: 'compact', revision }, 'KV', 'Compact', { revision }, (m) => ({ revision: revisionOf(m) }))
  }

  leaseGrant(ttl: number): Promise<Output> {
    return this.record({ type: 'leaseGrant', ttl }, 'Lease', 'LeaseGrant', { TTL: ttl }, (m) => ({
      revision: revisionOf(m),
      id: String(m.ID),
    }))
  }

  leaseRevoke(id: string): Promise<Output> {
    return this.record({ type: 'leaseRevoke', id }, 'Lease', 'LeaseRevoke', { ID: id }, (m) => ({ revision: revisionOf(m) }))
  }

  defragment(): Promise<Output> {
    return this.record({ type: 'defragment' }, 'Maintenance', 'Defragment', {}, () => ({ revision: 0 }))
  }

  private async record(input: Input, service: string, method: string, request: Msg, convert: (m: Msg) => Output): Promise<Output> {
    const op: Operation = { client: this.id, input, output: { error: 'unknown' }, call: performance.now(), return: Infinity }
    this.history.push(op)
    let timer: NodeJS.Timeout | undefined
    try {
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), this.timeoutMs)))
      const m = await Promise.race([this.g.call(service, method, request), timeout])
      op.output = convert(m)
      op.return = performance.now()
      this.failing = false
    } catch (err) {
      const code = errorCode(err)
      this.failing = code === 'unknown' || code === 'not-sent'
      if (code !== 'unknown') {
        op.output = { error: code }
        op.return = performance.now()
      }
    } finally {
      clearTimeout(timer)
    }
    return op.output
  }
}
