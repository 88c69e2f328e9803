/** Options of an in-process cluster member for tests: the conformance suite's limits, short timers. */
import { openJetStreamLog, type JetStreamLogOptions } from '../../log/jetstream/jetstream-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS, type LevelLogOptions } from '../../log/level/options.js'
import { levelReplicaStorage } from '../../log/level/replica-storage.js'
import { DEFAULT_LIMITS } from '../log/conformance/suite.js'

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
