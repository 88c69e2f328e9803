/**
 * A transaction's total work is bounded before it runs (maxTxnTotalOps): nested transactions each within
 * maxTxnOps per branch can otherwise multiply into thousands of range deletes and puts that hold the
 * writer for everyone. One real `kvlog serve`; the same shapes go through every door that takes a txn
 * (etcd gRPC, etcd's JSON gateway, native /v1/txn), refused with TOO_MANY_OPS and nothing written, while a
 * txn of exactly maxTxnTotalOps ops commits.
 */
import type { ServiceError } from '@grpc/grpc-js'
import { expect } from 'chai'
import type { Message } from '../../apiserver/etcd/proto.js'
import { etcdGrpc, type EtcdGrpc } from '../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

/** maxTxnTotalOps's default: the server runs with it. */
const MAX_TOTAL = 1024
/** etcd's JSON error for its ErrGRPCTooManyOps: INVALID_ARGUMENT and etcd's own text, which etcd clients match. */
const TOO_MANY_OPS_GATEWAY = 'grpc 3: etcdserver: too many operations in txn request'
const b64 = (s: string) => Buffer.from(s).toString('base64')

/** `nested` inner txns in one success branch, each with `deletes` range deletes and `puts` puts. */
interface Shape {
  nested: number
  deletes: number
  puts: number
}

const total = (s: Shape) => s.nested * (1 + s.deletes + s.puts)

/** The shape that held every write for half a minute: 128 × (64 range deletes + 64 puts). */
const FLOOD: Shape = { nested: 128, deletes: 64, puts: 64 }
/** 8 × (1 + 127) = 1024: exactly the default limit. */
const AT_LIMIT: Shape = { nested: 8, deletes: 0, puts: 127 }
const OVER_LIMIT: Shape = { nested: 25, deletes: 0, puts: 40 }

function keys(s: Shape, i: number): { dels: Array<[string, string]>; puts: string[] } {
  return {
    dels: Array.from({ length: s.deletes }, (_, j) => [`d/${i}/${j}/`, `d/${i}/${j}0`] as [string, string]),
    puts: Array.from({ length: s.puts }, (_, j) => `p/${i}/${j}`),
  }
}

function nativeTxn(s: Shape): unknown {
  return {
    success: Array.from({ length: s.nested }, (_, i) => {
      const k = keys(s, i)
      return {
        type: 'txn',
        success: [
          ...k.dels.map(([key, rangeEnd]) => ({ type: 'delete', key, rangeEnd })),
          ...k.puts.map((key) => ({ type: 'put', key, value: 'v' })),
        ],
      }
    }),
  }
}

/** etcd's TxnRequest as JSON (the gateway's form: bytes in base64). */
function gatewayTxn(s: Shape): unknown {
  return {
    success: Array.from({ length: s.nested }, (_, i) => {
      const k = keys(s, i)
      return {
        request_txn: {
          success: [
            ...k.dels.map(([key, end]) => ({ request_delete_range: { key: b64(key), range_end: b64(end) } })),
            ...k.puts.map((key) => ({ request_put: { key: b64(key), value: b64('v') } })),
          ],
        },
      }
    }),
  }
}

/** The same as a gRPC message (bytes as Buffers). */
function grpcTxn(s: Shape): Message {
  const buf = (v: string) => Buffer.from(v, 'base64')
  const json = gatewayTxn(s) as { success: Array<{ request_txn: { success: Message[] } }> }
  return {
    success: json.success.map((op) => ({
      request_txn: {
        success: op.request_txn.success.map((inner) => {
          const d = inner.request_delete_range as { key: string; range_end: string } | undefined
          if (d !== undefined) return { request_delete_range: { key: buf(d.key), range_end: buf(d.range_end) } }
          const p = inner.request_put as { key: string; value: string }
          return { request_put: { key: buf(p.key), value: buf(p.value) } }
        }),
      },
    })),
  }
}

describe('security: per-request txn cost', function () {
  this.timeout(120_000)
  let server: ServerProcess
  let grpc: EtcdGrpc

  before(async () => {
    server = await startServerProcess()
    grpc = etcdGrpc(server.grpc)
  })
  after(async () => {
    grpc?.close()
    await server?.cleanup()
  })

  const revision = async () =>
    ((await (await fetch(`${server.http}/v1/status`)).json()) as { header: { revision: number } }).header.revision

  /** Sends the txn through each door; resolves with each door's kvlog code ('ok' when it committed). */
  async function doors(s: Shape): Promise<Record<string, string>> {
    const out: Record<string, string> = {}
    const native = await fetch(`${server.http}/v1/txn`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(nativeTxn(s)),
    })
    out.native = native.ok ? 'ok' : ((await native.json()) as { error: { code: string } }).error.code
    const gw = await fetch(`http://${server.grpc}/v3/kv/txn`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(gatewayTxn(s)),
    })
    const gwBody = (await gw.json()) as { succeeded?: boolean; code?: number; error?: string }
    out.gateway = gw.ok ? 'ok' : `grpc ${gwBody.code}: ${gwBody.error}`
    try {
      await grpc.call('KV', 'Txn', grpcTxn(s))
      out.grpc = 'ok'
    } catch (err) {
      out.grpc = String((err as ServiceError).metadata.get('kvlog-code')[0])
    }
    return out
  }

  it('refuses 128 nested txns of 64 range deletes and 64 puts with TOO_MANY_OPS on every door, writing nothing', async () => {
    expect(total(FLOOD)).to.be.greaterThan(MAX_TOTAL)
    const before = await revision()
    const out = await doors(FLOOD)
    expect(out).to.deep.equal({ native: 'TOO_MANY_OPS', gateway: TOO_MANY_OPS_GATEWAY, grpc: 'TOO_MANY_OPS' })
    expect(await revision()).to.equal(before)
  })

  it('refuses one op over the limit and commits a txn of exactly maxTxnTotalOps ops', async () => {
    expect(total(OVER_LIMIT)).to.equal(MAX_TOTAL + 1)
    expect(total(AT_LIMIT)).to.equal(MAX_TOTAL)
    const before = await revision()
    expect(await doors(OVER_LIMIT)).to.deep.equal({ native: 'TOO_MANY_OPS', gateway: TOO_MANY_OPS_GATEWAY, grpc: 'TOO_MANY_OPS' })
    expect(await revision()).to.equal(before)
    expect(await doors(AT_LIMIT)).to.deep.equal({ native: 'ok', gateway: 'ok', grpc: 'ok' })
    expect(await revision()).to.equal(before + 3)
  })
})
