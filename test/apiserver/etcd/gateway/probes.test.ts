/**
 * /livez and /readyz on the etcd client port, as etcd serves them from 3.4.29 and 3.5.11 on (KEP-4331;
 * kubeadm's etcd probes): 200 "ok", `?verbose` lists the checks, and /readyz fails with 503 while a
 * CORRUPT alarm is active while /livez stays 200. Debian's etcd 3.4.23 predates them (404), so this runs
 * against kvlog only.
 */
import { expect } from 'chai'
import { connectEtcd3 } from '../../../support/etcd3-proto.js'
import { startServerProcess, type ServerProcess } from '../../../support/server-process.js'

describe('etcd client port: /livez and /readyz', function () {
  this.timeout(30_000)
  let server: ServerProcess
  const get = async (path: string, method = 'GET') => {
    const res = await fetch(`http://${server.grpc}${path}`, { method })
    return { status: res.status, body: await res.text() }
  }

  before(async () => {
    server = await startServerProcess()
  })

  after(async () => {
    await server?.cleanup()
  })

  it('answer ok while the server serves; verbose lists the checks', async () => {
    expect(await get('/livez')).to.deep.equal({ status: 200, body: 'ok\n' })
    expect(await get('/readyz')).to.deep.equal({ status: 200, body: 'ok\n' })
    expect(await get('/readyz?verbose')).to.deep.equal({
      status: 200,
      body: '[+]data_corruption ok\n[+]serializable_read ok\n[+]linearizable_read ok\nok\n',
    })
    expect((await get('/livez', 'POST')).status).to.equal(405)
  })

  it('a CORRUPT alarm fails /readyz (data_corruption), not /livez', async () => {
    const g = connectEtcd3(server.grpc)
    try {
      await g.call('Maintenance', 'Alarm', { action: 'Activate', memberID: '0', alarm: 'Corrupt' })
      const ready = await get('/readyz')
      expect(ready.status).to.equal(503)
      expect(ready.body).to.equal('[-]data_corruption failed: alarm activated: CORRUPT\nhealth check failed\n')
      expect((await get('/livez')).status).to.equal(200)
      await g.call('Maintenance', 'Alarm', { action: 'Deactivate', memberID: '0', alarm: 'Corrupt' })
      expect((await get('/readyz')).status).to.equal(200)
    } finally {
      g.close()
    }
  })
})
