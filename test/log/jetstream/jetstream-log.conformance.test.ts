/**
 * Runs the log conformance suite against the cluster engine: three nats-server processes (one JetStream
 * cluster, R3), and per test a fresh kvlog cluster (its own stream and bucket) of two members. The log
 * under test is the second member, a follower: its writes are forwarded to the leader, and it answers
 * from its own copy once it has applied them; reopen() restarts it on its copy.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'nats'
import type { Log } from '../../../log/backend.js'
import { openJetStreamLog, type JetStreamLog, type JetStreamLogOptions } from '../../../log/jetstream/jetstream-log.js'
import { clusterNames } from '../../../log/jetstream/options.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../../log/options.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { waitFor } from '../../support/wait.js'
import { DEFAULT_LIMITS, logConformanceSuite, type LogFixture } from '../conformance/suite.js'

let nats: NatsCluster | undefined
let clusters = 0

async function closeQuietly(log: Log | undefined): Promise<void> {
  try {
    await log?.close()
  } catch {
    // already closed (the close tests do that themselves)
  }
}

export function memberOptions(urls: string, clusterName: string, memberName: string, dir: string): Parameters<typeof openJetStreamLog>[0] {
  const o: Partial<JetStreamLogOptions> & Pick<JetStreamLogOptions, 'natsUrls' | 'memberName' | 'level'> = {
    natsUrls: urls.split(','),
    clusterName,
    memberName,
    leaseCheckInterval: 50,
    level: {
      ...DEFAULT_LEVEL_LOG_OPTIONS,
      dir,
      segmentMaxEntries: DEFAULT_LIMITS.segmentMaxEntries,
      maxTxnOps: DEFAULT_LIMITS.maxTxnOps,
      maxRequestBytes: DEFAULT_LIMITS.maxRequestBytes,
      compactionBatchRevisions: 3,
      leaseMinTtl: DEFAULT_LIMITS.leaseMinTtl,
      compactionThread: false,
    },
  }
  return o
}

async function openCluster(): Promise<LogFixture> {
  const urls = nats!.urls
  const name = `conf${process.pid}x${++clusters}`
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-js-conformance-'))
  const leader: JetStreamLog = await openJetStreamLog(memberOptions(urls, name, 'a', join(dir, 'a')))
  await waitFor('a leader', () => leader.isLeading, 10_000)
  let log: Log = await openJetStreamLog(memberOptions(urls, name, 'b', join(dir, 'b')))
  return {
    log,
    reopen: async () => {
      await closeQuietly(log)
      log = await openJetStreamLog(memberOptions(urls, name, 'b', join(dir, 'b')))
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
