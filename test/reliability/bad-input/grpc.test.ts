/**
 * Bad input on the etcd gRPC door, with the native door's bystanders watching (bystanders.ts): random
 * bytes instead of HTTP/2, the HTTP/2 preface followed by random or truncated frames, random bytes as
 * protobuf messages of unary calls and of the Watch stream, a message over the receive limit, and a
 * transaction with 100,000 ops. The server answers every call that reaches a method with a gRPC status,
 * never dies, and nobody else notices.
 */
import * as grpc from '@grpc/grpc-js'
import { expect } from 'chai'
import fc from 'fast-check'
import { connect } from 'node:net'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'
import { sleep } from '../../support/watch-client.js'
import { GrpcDriver } from '../drivers/grpc.js'
import { Bystanders } from './bystanders.js'

const SEED = Number(process.env.KVLOG_TEST_SEED ?? 616161)
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')

type RawUnary = (request: Buffer, options: { deadline: number }, callback: (err: grpc.ServiceError | null) => void) => void

/** A client that sends raw bytes as the protobuf message of etcd methods (no encoding on our side). */
function rawClient(address: string): grpc.Client & Record<string, RawUnary> & { Watch(): grpc.ClientDuplexStream<Buffer, Buffer> } {
  const identity = (b: Buffer) => b
  const method = (path: string, stream = false) => ({
    path,
    requestStream: stream,
    responseStream: stream,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  })
  const Ctor = grpc.makeGenericClientConstructor(
    {
      Put: method('/etcdserverpb.KV/Put'),
      Range: method('/etcdserverpb.KV/Range'),
      Txn: method('/etcdserverpb.KV/Txn'),
      LeaseGrant: method('/etcdserverpb.Lease/LeaseGrant'),
      Status: method('/etcdserverpb.Maintenance/Status'),
      Watch: method('/etcdserverpb.Watch/Watch', true),
    },
    'Raw',
  )
  return new Ctor(address, grpc.credentials.createInsecure()) as never
}

function callRaw(client: Record<string, RawUnary>, name: string, bytes: Buffer): Promise<number> {
  return new Promise((resolve) =>
    client[name].call(client, bytes, { deadline: Date.now() + 10_000 }, (err) => resolve(err?.code ?? grpc.status.OK)),
  )
}

/** Writes bytes on a raw TCP connection to the gRPC port, then drops it. */
async function rawBytes(address: string, bytes: Buffer): Promise<void> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))]
  await new Promise<void>((resolve) => {
    const s = connect(port, host, () => {
      s.write(bytes)
      setTimeout(() => {
        s.destroy()
        resolve()
      }, 5)
    })
    s.on('error', () => resolve())
  })
}

describe('reliability: bad input on the etcd gRPC door', function () {
  this.timeout(120_000)
  let server: ServerProcess
  let bystanders: Bystanders

  before(async () => {
    server = await startServerProcess(['--max-txn-ops', '128'])
    bystanders = await Bystanders.start(server)
  })

  after(async () => {
    await server?.stop('SIGTERM').catch(() => undefined)
    await server?.cleanup()
  })

  it('survives random bytes, and random or truncated HTTP/2 frames after the preface, on raw connections', async () => {
    const frames = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 400 }).map((b) => Buffer.from(b)),
      fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.concat([PREFACE, Buffer.from(b)])),
      // A frame header announcing more than follows (length, type, flags, stream id), cut short.
      fc.tuple(fc.integer({ min: 0, max: 2 ** 24 - 1 }), fc.nat(9), fc.nat(255), fc.nat(40)).map(([len, type, flags, cut]) => {
        const h = Buffer.alloc(9 + 32, 0x61)
        h.writeUIntBE(len, 0, 3)
        h[3] = type
        h[4] = flags
        h.writeUInt32BE(1, 5)
        return Buffer.concat([PREFACE, h.subarray(0, cut)])
      }),
    )
    await fc.assert(
      fc.asyncProperty(frames, (bytes) => rawBytes(server.grpc, bytes)),
      { seed: SEED, numRuns: 80 },
    )
    expect(server.child.exitCode, server.stderr()).to.equal(null)
  })

  it('answers random bytes as protobuf requests of unary methods with a gRPC status, never dying', async () => {
    const client = rawClient(server.grpc)
    const seen = new Set<number>()
    const method = fc.constantFrom('Put', 'Range', 'Txn', 'LeaseGrant', 'Status')
    await fc.assert(
      fc.asyncProperty(method, fc.uint8Array({ maxLength: 300 }), async (name, bytes) => {
        const code = await callRaw(client, name, Buffer.from(bytes))
        expect(code, `${name}: status`).to.be.a('number')
        expect(code, `${name}: the call must not time out`).to.not.equal(grpc.status.DEADLINE_EXCEEDED)
        seen.add(code)
      }),
      { seed: SEED, numRuns: 200 },
    )
    client.close()
    expect(seen.size, 'random requests are answered, some with errors').to.be.greaterThan(1)
    expect(server.child.exitCode, server.stderr()).to.equal(null)
  })

  it('keeps serving a Watch stream that receives random messages, or ends it with a status', async () => {
    const client = rawClient(server.grpc)
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 100 }), { minLength: 1, maxLength: 10 }), async (messages) => {
        const stream = client.Watch()
        const ended = new Promise<void>((resolve) => {
          stream.on('error', () => resolve())
          stream.on('end', () => resolve())
        })
        stream.on('data', () => undefined)
        for (const m of messages) stream.write(Buffer.from(m))
        await Promise.race([ended, sleep(50)])
        stream.cancel()
      }),
      { seed: SEED, numRuns: 40 },
    )
    client.close()
    expect(server.child.exitCode, server.stderr()).to.equal(null)
  })

  it('refuses a message over the receive limit and a 100,000-op transaction, writing nothing', async () => {
    const client = rawClient(server.grpc)
    expect(await callRaw(client, 'Put', Buffer.alloc(8 * 1024 * 1024, 0x0a))).to.equal(grpc.status.RESOURCE_EXHAUSTED)
    client.close()
    const driver = new GrpcDriver(server.grpc, 30_000)
    const success = Array.from({ length: 100_000 }, (_, i) => ({
      type: 'put' as const,
      keyBase64: Buffer.from(`/huge/${i}`).toString('base64'),
      valueBase64: 'eA==',
    }))
    const err = await driver.execute({ type: 'txn', compare: [], success, failure: [] }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err, 'the huge txn was refused').to.not.equal(undefined)
    const code = driver.classify(err)
    expect(code.outcome, JSON.stringify(code)).to.equal('fail')
    expect(['TOO_MANY_OPS', 'REQUEST_TOO_LARGE', 'GRPC_RESOURCE_EXHAUSTED']).to.include(code.code)
    const left = await driver.execute({ type: 'range', sel: { keyBase64: Buffer.from('/huge/').toString('base64'), prefix: true } })
    expect(left.kvs, 'nothing of the refused transaction was written').to.deep.equal([])
    await driver.close()
  })

  it('is alive and the bystanders were not hurt (control writes, control watch exact, memory bounded)', async () => {
    expect(server.child.exitCode, server.stderr()).to.equal(null)
    await bystanders.finish()
  })
})
