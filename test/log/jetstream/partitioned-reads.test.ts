/**
 * Linearizable reads on a member whose stream server is cut off from the others, with in-process members
 * over three real nats-servers whose routes run through TCP proxies: the server that leads the log's
 * stream is partitioned from the other two (its client, one member, still reaches it), the other two elect
 * a new stream leader and a write lands there. That server keeps answering STREAM.INFO with the old end of
 * the stream; a read on the member behind it must not return the value before the write: it fails
 * UNAVAILABLE until the partition heals, then sees the write.
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
import { waitFor } from '../../support/wait.js'

const CLUSTER = 'cutoff'
/** Reads the partitioned side makes while the partition holds. */
const READS = 6

describe('JetStreamLog: a linearizable read behind a partitioned stream leader', function () {
  this.timeout(180_000)
  let nats: NatsCluster
  let dir: string
  const logs: JetStreamLog[] = []
  let cut: number | undefined
  before(async () => {
    nats = await startNatsCluster(3, { routeProxies: true })
    dir = await mkdtemp(join(tmpdir(), 'kvlog-js-cutoff-'))
  })
  after(async () => {
    if (cut !== undefined) nats.heal(cut)
    for (const log of logs) await log.close().catch(() => undefined)
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const open = async (name: string, server: number): Promise<JetStreamLog> => {
    const log = await openJetStreamLog(
      memberOptions(nats.servers[server].url, CLUSTER, name, join(dir, name), { clusterRequestTimeout: 1500 }),
    )
    logs.push(log)
    return log
  }
  const value = async (log: JetStreamLog, serializable = false): Promise<string> => {
    const r = await log.range('k', { serializable })
    return r.kvs.map((kv) => kv.value.toString()).join()
  }

  it('never returns the value a write acknowledged elsewhere replaced; UNAVAILABLE, then the write', async () => {
    const first = await open('a', 0)
    await waitFor('a to lead', () => first.isLeading, 30_000)
    const nc = await connect({ servers: nats.urls.split(',') })
    const holder = (await (await nc.jetstreamManager()).streams.info(clusterNames(CLUSTER).stream)).cluster?.leader
    await nc.close()
    const behind = nats.servers.findIndex((s) => s.name === holder)
    expect(behind, `the server leading the stream (${holder})`).to.be.at.least(0)
    // One member on each server: the reader behind the stream leader's server, writers on the other two.
    const others = [0, 1, 2].filter((i) => i !== behind)
    const byServer = new Map<number, JetStreamLog>([[0, first]])
    for (const [i, name] of [
      [1, 'b'],
      [2, 'c'],
    ] as const) {
      byServer.set(i, await open(name, i))
    }
    const reader = byServer.get(behind)!
    const writer = byServer.get(others[0])!
    await waitFor('all three on the roster', () => logs.every((l) => l.roster.length === 3), 30_000)
    await writer.put('k', 'v1')
    await waitFor('the reader to apply v1', () => reader.view.revision >= writer.view.revision, 30_000)
    expect(await value(reader)).to.equal('v1')

    cut = behind
    nats.partition(behind)
    const deadline = Date.now() + 90_000
    for (;;) {
      const done = await writer.put('k', 'v2').then(
        () => true,
        () => false,
      )
      if (done) break
      expect(Date.now(), 'a write on the majority side').to.be.below(deadline)
    }

    const seen: string[] = []
    for (let i = 0; i < READS; i++) {
      seen.push(await value(reader).catch((err: { code?: string }) => err.code ?? String(err)))
    }
    expect(seen, 'reads behind the cut-off server').to.not.include('v1')
    expect(
      seen.every((s) => s === 'UNAVAILABLE' || s === 'v2'),
      seen.join(),
    ).to.equal(true)
    // Served from the copy as it is, without a quorum: the old value, as asked.
    expect(await value(reader, true)).to.equal('v1')

    nats.heal(behind)
    cut = undefined
    const healed = Date.now() + 90_000
    for (;;) {
      const v = await value(reader).catch((err: { code?: string }) => {
        if (err.code !== 'UNAVAILABLE') throw err
        return undefined
      })
      if (v !== undefined) {
        expect(v).to.equal('v2')
        break
      }
      expect(Date.now(), 'a read after the partition heals').to.be.below(healed)
    }
  })
})
