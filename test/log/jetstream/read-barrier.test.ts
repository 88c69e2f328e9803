/**
 * Linearizable reads when the stream cannot say where it ends, with an in-process member over three real
 * nats-servers: with the server that holds the (one-replica) stream stopped (every thread of it), a read
 * fails UNAVAILABLE within clusterRequestTimeout instead of with the NATS client's own error; once the
 * server runs again, reads are answered.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'nats'
import { openJetStreamLog, type JetStreamLog } from '../../../log/jetstream/jetstream-log.js'
import { clusterNames } from '../../../log/jetstream/options.js'
import { memberOptions } from '../../support/cluster-members.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { allThreadsStopped } from '../../support/stopped.js'
import { waitFor } from '../../support/wait.js'

describe('JetStreamLog: linearizable reads while the stream does not answer', function () {
  this.timeout(90_000)
  let nats: NatsCluster
  let dir: string
  let log: JetStreamLog | undefined
  let paused: number | undefined
  before(async () => {
    nats = await startNatsCluster()
    dir = await mkdtemp(join(tmpdir(), 'kvlog-js-reads-'))
  })
  after(async () => {
    if (paused !== undefined) nats.resume(paused)
    await log?.close().catch(() => undefined)
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('fails a read UNAVAILABLE while the stream is unreachable, and answers again after', async () => {
    const names = clusterNames('reads')
    log = await openJetStreamLog(memberOptions(nats.urls, 'reads', 'a', join(dir, 'a'), { natsReplicas: 1, clusterRequestTimeout: 1500 }))
    const a = log
    await waitFor('a to lead', () => a.isLeading, 20_000)
    await a.put('k', 'v')
    const nc = await connect({ servers: nats.urls.split(',') })
    const holder = (await (await nc.jetstreamManager()).streams.info(names.stream)).cluster?.leader
    await nc.close()
    paused = nats.servers.findIndex((s) => s.name === holder)
    expect(paused, `the server holding the stream (${holder})`).to.be.at.least(0)
    await nats.pause(paused)
    // A read sent before every thread of the server has stopped may still be served by it, rightly.
    await allThreadsStopped(nats.servers[paused].child!.pid!, `nats-server ${holder}`)
    const code = await a.range('k').then(
      () => 'answered',
      (err: { code?: string }) => err.code ?? 'none',
    )
    nats.resume(paused)
    paused = undefined
    expect(code).to.equal('UNAVAILABLE')
    const deadline = Date.now() + 30_000
    for (;;) {
      const r = await a.range('k').catch((err: { code?: string }) => {
        if (err.code !== 'UNAVAILABLE' || Date.now() > deadline) throw err
        return undefined
      })
      if (r !== undefined) {
        expect(r.kvs.map((kv) => kv.value.toString())).to.deep.equal(['v'])
        break
      }
    }
  })
})
