/**
 * Bad input on the etcd v3 gRPC door, against every target: bytes that are not protobuf, fields with the
 * wrong wire type, requests over the maximum request size, unknown services and methods, and requests
 * etcd refuses by rule (empty key, too many txn ops, duplicate keys). Each gets the gRPC status etcd gives,
 * and the server keeps serving: a watch opened before the bad input still delivers events after it.
 *
 * etcdserver errors are matched on code and message, because clientv3 (and so etcdctl and
 * kube-apiserver) turns them back into typed errors by their message; transport errors (unparsable
 * bytes, too large for gRPC) only on code, since Go's gRPC and grpc-js word them differently.
 */
import { expect } from 'chai'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { connectEtcd3, grpc, grpcError, openWatch, type WatchSession } from '../../support/etcd3-proto.js'
import { targets, type Started } from './targets.js'

const MiB = 1024 * 1024

/** A unary call with raw request bytes, bypassing any protobuf encoding. */
function rawCall(client: grpc.Client, path: string, body: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      (err, res) => (err ? reject(err) : resolve(res!)),
    ),
  )
}

for (const target of targets) {
  describe(`gRPC bad input against ${target.name}`, function () {
    this.timeout(30_000)
    let store: Started
    let g: EtcdGrpc
    let raw: grpc.Client
    let watch: WatchSession
    let puts = 0

    /** The server still answers, and the watch opened first still delivers events. */
    async function stillServing(): Promise<void> {
      const k = `alive/${++puts}`
      await g.call('KV', 'Put', { key: Buffer.from(k), value: Buffer.from('1') })
      const got = (await g.call('KV', 'Range', { key: Buffer.from(k) })) as { kvs: unknown[] }
      expect(got.kvs).to.have.length(1)
      await watch.next((r) => (r.events as { kv: { key: Buffer } }[]).some((e) => e.kv.key.toString() === k))
    }

    before(async () => {
      store = await target.start()
      g = connectEtcd3(store.endpoint)
      raw = new grpc.Client(store.endpoint, grpc.credentials.createInsecure())
      watch = openWatch(g)
      watch.send({ create_request: { key: Buffer.from('alive/'), range_end: Buffer.from('alive0') } })
      await watch.next((r) => r.created === true)
    })

    after(async () => {
      watch?.end()
      raw?.close()
      g?.close()
      await store?.stop()
    })

    it('bytes that are not protobuf → INTERNAL (etcd: "error unmarshalling request")', async () => {
      // 0xff... : field 31, wire type 7, which does not exist.
      const e = await grpcError(rawCall(raw, '/etcdserverpb.KV/Range', Buffer.from([0xff, 0xff, 0xff, 0xff])))
      expect(e.code).to.equal(grpc.status.INTERNAL)
      const truncated = await grpcError(rawCall(raw, '/etcdserverpb.KV/Put', Buffer.from([0x0a, 0x10, 0x61])))
      expect(truncated.code).to.equal(grpc.status.INTERNAL)
      await stillServing()
    })

    it('a field with the wrong wire type → INTERNAL', async () => {
      // RangeRequest.key (field 1, bytes) sent as a varint; PutRequest.lease (field 3, int64) as bytes.
      const e = await grpcError(rawCall(raw, '/etcdserverpb.KV/Range', Buffer.from([0x08, 0x01])))
      expect(e.code).to.equal(grpc.status.INTERNAL)
      const lease = await grpcError(rawCall(raw, '/etcdserverpb.KV/Put', Buffer.from([0x0a, 0x01, 0x6b, 0x1a, 0x01, 0x41])))
      expect(lease.code).to.equal(grpc.status.INTERNAL)
      await stillServing()
    })

    it('a Watch stream sent garbage fails alone; other streams go on', async () => {
      const stream = raw.makeBidiStreamRequest(
        '/etcdserverpb.Watch/Watch',
        (b: Buffer) => b,
        (b: Buffer) => b,
      )
      const failed = new Promise<grpc.ServiceError>((resolve) => stream.on('error', resolve))
      stream.on('data', () => undefined)
      stream.write(Buffer.from([0xff, 0xff, 0xff]))
      expect((await failed).code).to.equal(grpc.status.INTERNAL)
      await stillServing()
    })

    it('a request over the maximum request size → INVALID_ARGUMENT "etcdserver: request is too large"', async () => {
      // etcd's default --max-request-bytes is 1.5 MiB; gRPC itself accepts up to 0.5 MiB more.
      const e = await grpcError(g.call('KV', 'Put', { key: Buffer.from('big'), value: Buffer.alloc(1.6 * MiB, 0x61) }))
      expect([e.code, e.details]).to.deep.equal([grpc.status.INVALID_ARGUMENT, 'etcdserver: request is too large'])
      const inTxn = await grpcError(
        g.call('KV', 'Txn', { success: [{ request_put: { key: Buffer.from('big'), value: Buffer.alloc(1.6 * MiB, 0x61) } }] }),
      )
      expect([inTxn.code, inTxn.details]).to.deep.equal([grpc.status.INVALID_ARGUMENT, 'etcdserver: request is too large'])
      expect(((await g.call('KV', 'Range', { key: Buffer.from('big') })) as { kvs: unknown[] }).kvs).to.deep.equal([])
      await stillServing()
    })

    it('a message over the gRPC receive limit → RESOURCE_EXHAUSTED', async () => {
      const e = await grpcError(g.call('KV', 'Put', { key: Buffer.from('huge'), value: Buffer.alloc(3 * MiB, 0x61) }))
      expect(e.code).to.equal(grpc.status.RESOURCE_EXHAUSTED)
      await stillServing()
    })

    it('unknown methods and services → UNIMPLEMENTED', async () => {
      for (const path of ['/etcdserverpb.KV/NoSuchMethod', '/etcdserverpb.NoSuchService/Range', '/kvlog.Nothing/Here']) {
        const e = await grpcError(rawCall(raw, path, Buffer.alloc(0)))
        expect(e.code, path).to.equal(grpc.status.UNIMPLEMENTED)
      }
      await stillServing()
    })

    it('requests etcd refuses by rule: empty key, too many txn ops, duplicate key, unknown lease', async () => {
      const cases: [string, string, Record<string, unknown>, grpc.status, string][] = [
        ['KV', 'Put', { key: Buffer.alloc(0), value: Buffer.from('v') }, grpc.status.INVALID_ARGUMENT, 'etcdserver: key is not provided'],
        ['KV', 'Range', { key: Buffer.alloc(0) }, grpc.status.INVALID_ARGUMENT, 'etcdserver: key is not provided'],
        [
          'KV',
          'Txn',
          { success: Array.from({ length: 129 }, (_, i) => ({ request_put: { key: Buffer.from(`k${i}`), value: Buffer.from('v') } })) },
          grpc.status.INVALID_ARGUMENT,
          'etcdserver: too many operations in txn request',
        ],
        [
          'KV',
          'Txn',
          {
            success: [
              { request_put: { key: Buffer.from('d'), value: Buffer.from('1') } },
              { request_put: { key: Buffer.from('d'), value: Buffer.from('2') } },
            ],
          },
          grpc.status.INVALID_ARGUMENT,
          'etcdserver: duplicate key given in txn request',
        ],
        [
          'KV',
          'Put',
          { key: Buffer.from('l'), value: Buffer.from('v'), lease: '12345' },
          grpc.status.NOT_FOUND,
          'etcdserver: requested lease not found',
        ],
        ['Lease', 'LeaseRevoke', { ID: '12345' }, grpc.status.NOT_FOUND, 'etcdserver: requested lease not found'],
      ]
      for (const [service, method, req, code, details] of cases) {
        const e = await grpcError(g.call(service, method, req))
        expect([e.code, e.details], `${service}.${method}`).to.deep.equal([code, details])
      }
      expect(((await g.call('KV', 'Range', { key: Buffer.from('d') })) as { header: { revision: string } }).header.revision).to.equal(
        String(1 + puts),
      )
      await stillServing()
    })
  })
}
