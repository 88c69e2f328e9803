/**
 * kube-apiserver chooses what it asks of etcd by the version Maintenance.Status reports
 * (k8s.io/apiserver storage/feature): watch progress requests from etcd 3.5.13 on (3.4.31 on the 3.4
 * line). KV.RangeStream is etcd 3.7's streamed Range, so a server that reports 3.7 is taken to have it.
 * Every feature the reported version stands for must be served, on etcd as on kvlog; kvlog reports
 * `etcdVersion` (3.5.16 by default) and serves both (RangeStream: range-stream.test.ts).
 */
import { expect } from 'chai'
import { SCHEMA } from '../../../config/schema.js'
import { connectEtcd3, grpc, grpcError, openWatch } from '../../support/etcd3-proto.js'
import { targets } from './targets.js'

/** What kube-apiserver asks of an etcd that reports `version`. */
export function kubeFeatures(version: string): { requestWatchProgress: boolean; rangeStream: boolean } {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map((p) => Number.parseInt(p, 10))
  const atLeast = (a: number, b: number, c: number) => major > a || (major === a && (minor > b || (minor === b && patch >= c)))
  return { requestWatchProgress: atLeast(3, 5, 13) || (major === 3 && minor === 4 && patch >= 31), rangeStream: atLeast(3, 7, 0) }
}

describe('kubeFeatures', () => {
  it('follows the versions kube-apiserver gates on', () => {
    expect(kubeFeatures('3.4.23')).to.deep.equal({ requestWatchProgress: false, rangeStream: false })
    expect(kubeFeatures('3.4.31')).to.deep.equal({ requestWatchProgress: true, rangeStream: false })
    expect(kubeFeatures('3.5.12')).to.deep.equal({ requestWatchProgress: false, rangeStream: false })
    expect(kubeFeatures(SCHEMA.etcdVersion.default)).to.deep.equal({ requestWatchProgress: true, rangeStream: false })
    expect(kubeFeatures('3.7.0')).to.deep.equal({ requestWatchProgress: true, rangeStream: true })
  })
})

for (const target of targets) {
  describe(`Status.version and the features it turns on, against ${target.name}`, function () {
    this.timeout(30_000)

    it('serves every feature kube-apiserver uses with the version it reports', async () => {
      const store = await target.start()
      const g = connectEtcd3(store.endpoint)
      try {
        const status = (await g.call('Maintenance', 'Status', {})) as { version: string }
        expect(status.version).to.match(/^\d+\.\d+\.\d+$/)
        if (target.name === 'kvlog') expect(status.version).to.equal(SCHEMA.etcdVersion.default)
        const features = kubeFeatures(status.version)
        if (features.requestWatchProgress) {
          const w = openWatch(g)
          w.send({ create_request: { key: Buffer.from('a') } })
          await w.next((r) => r.created === true)
          w.send({ progress_request: {} })
          const answer = await w.next((r) => r.watch_id === '-1')
          expect(answer.events).to.deep.equal([])
          w.end()
        }
        // RangeStream is not in the etcd3 package's proto: asked by its path, an unserved method is UNIMPLEMENTED.
        const client = new grpc.Client(store.endpoint, grpc.credentials.createInsecure())
        const unimplemented = await grpcError(
          new Promise((resolve, reject) => {
            const call = client.makeServerStreamRequest(
              '/etcdserverpb.KV/RangeStream',
              (b: Buffer) => b,
              (b: Buffer) => b,
              Buffer.alloc(0),
            )
            call.on('data', resolve)
            call.on('error', reject)
            call.on('end', resolve)
          }),
        ).then(
          (e) => e.code === grpc.status.UNIMPLEMENTED,
          () => false,
        )
        client.close()
        if (features.rangeStream) expect(unimplemented, 'KV.RangeStream served').to.equal(false)
        // etcd before 3.7 has no RangeStream; kvlog serves it whatever version it reports.
        expect(unimplemented).to.equal(target.name === 'etcd' && !features.rangeStream)
      } finally {
        g.close()
        await store.stop()
      }
    })
  })
}
