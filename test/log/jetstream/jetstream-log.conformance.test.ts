/**
 * Runs the log conformance suite against the cluster engine: three nats-server processes (one JetStream
 * cluster), and per test a fresh kvlog cluster (its own stream and bucket) of two members. The stream is
 * R1 here (an R3 stream takes ~0.7 s to create, per test); test/apiserver/cluster/ runs R3. The log
 * under test is the second member, a follower: its writes are forwarded to the leader, and it answers
 * from its own copy once it has applied them; reopen() restarts it on its copy.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'nats'
import type { Log } from '../../../log/backend.js'
import { openJetStreamLog, type JetStreamLog } from '../../../log/jetstream/jetstream-log.js'
import { memberOptions } from '../../support/cluster-members.js'
import { clusterNames } from '../../../log/jetstream/options.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { waitFor } from '../../support/wait.js'
import { logConformanceSuite, type LogFixture } from '../conformance/suite.js'

let nats: NatsCluster | undefined
let clusters = 0
const R1 = { natsReplicas: 1 }

async function closeQuietly(log: Log | undefined): Promise<void> {
  try {
    await log?.close()
  } catch {
    // already closed (the close tests do that themselves)
  }
}

async function openCluster(): Promise<LogFixture> {
  const urls = nats!.urls
  const name = `conf${process.pid}x${++clusters}`
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-js-conformance-'))
  const leader: JetStreamLog = await openJetStreamLog(memberOptions(urls, name, 'a', join(dir, 'a'), R1))
  await waitFor('a leader', () => leader.isLeading, 10_000)
  let log: Log = await openJetStreamLog(memberOptions(urls, name, 'b', join(dir, 'b'), R1))
  return {
    log,
    reopen: async () => {
      await closeQuietly(log)
      log = await openJetStreamLog(memberOptions(urls, name, 'b', join(dir, 'b'), R1))
      return log
    },
    cleanup: async () => {
      await closeQuietly(log)
      await closeQuietly(leader)
      await rm(dir, { recursive: true, force: true })
      const nc = await connect({ servers: urls.split(',') })
      const jsm = await nc.jetstreamManager()
      const names = clusterNames(name)
      await jsm.streams.delete(names.stream).catch(() => undefined)
      await jsm.streams.delete(`KV_${names.bucket}`).catch(() => undefined)
      await nc.close()
    },
  }
}

describe('JetStreamLog', function () {
  this.timeout(60_000)
  before(async () => {
    nats = await startNatsCluster()
  })
  after(async () => {
    await nats?.stop()
  })
  logConformanceSuite('JetStreamLog (3 nats-servers, 2 members, follower under test)', openCluster)
})
