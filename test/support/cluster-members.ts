/** Options of an in-process cluster member for tests: the conformance suite's limits, short timers. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openJetStreamLog, type JetStreamLog, type JetStreamLogOptions } from '../../log/jetstream/jetstream-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS, type LevelLogOptions } from '../../log/level/options.js'
import { levelReplicaStorage } from '../../log/level/replica-storage.js'
import { DEFAULT_LIMITS } from '../log/conformance/suite.js'
import { startNatsCluster, type NatsCluster } from './nats-cluster.js'
import { waitFor } from './wait.js'

export function memberOptions(
  urls: string,
  clusterName: string,
  memberName: string,
  dir: string,
  extra: Partial<JetStreamLogOptions> = {},
  copySettings: Partial<LevelLogOptions> = {},
): Parameters<typeof openJetStreamLog>[0] {
  const o: Partial<JetStreamLogOptions> & Pick<JetStreamLogOptions, 'natsUrls' | 'memberName' | 'copy'> = {
    natsUrls: urls.split(','),
    clusterName,
    memberName,
    leaseCheckInterval: 50,
    ...extra,
    copy: levelReplicaStorage({
      ...DEFAULT_LEVEL_LOG_OPTIONS,
      dir,
      segmentMaxEntries: DEFAULT_LIMITS.segmentMaxEntries,
      maxTxnOps: DEFAULT_LIMITS.maxTxnOps,
      maxRequestBytes: DEFAULT_LIMITS.maxRequestBytes,
      compactionBatchRevisions: 3,
      leaseMinTtl: DEFAULT_LIMITS.leaseMinTtl,
      compactionThread: false,
      ...copySettings,
    }),
  }
  return o
}

/** In-process members of one cluster over three real nats-servers, for a describe block (its hooks start and stop them). */
export interface InProcessMembers {
  nats(): NatsCluster
  /** Opens member `name` (closed after the block); `extra` and `copySettings` as memberOptions takes them. */
  start(name: string, extra?: Partial<JetStreamLogOptions>, copySettings?: Partial<LevelLogOptions>): Promise<JetStreamLog>
  /** Waits until every one of `logs` has all of them on its roster. */
  waitRoster(logs: JetStreamLog[]): Promise<void>
}

/** Registers before/after hooks in the calling describe block: nats-servers, a temp dir, members closed after. */
export function inProcessMembers(clusterName: string): InProcessMembers {
  let nats: NatsCluster | undefined
  let dir = ''
  const open: JetStreamLog[] = []
  before(async () => {
    nats = await startNatsCluster()
    dir = await mkdtemp(join(tmpdir(), `kvlog-js-${clusterName}-`))
  })
  after(async () => {
    for (const log of open) await log.close().catch(() => undefined)
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })
  return {
    nats: () => nats!,
    async start(name, extra = {}, copySettings = {}) {
      const log = await openJetStreamLog(memberOptions(nats!.urls, clusterName, name, join(dir, name), extra, copySettings))
      open.push(log)
      return log
    },
    async waitRoster(logs) {
      const roster = (l: JetStreamLog) => (l as unknown as { applier: { roster: string[] } }).applier.roster.length
      await waitFor(`all ${logs.length} on the roster`, () => logs.every((l) => roster(l) === logs.length), 30_000)
    },
  }
}
