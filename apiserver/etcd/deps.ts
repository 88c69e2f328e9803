/** What the etcd gRPC services are built from (composed in apiserver/server.ts). */
import type { AutoCompactor } from '../../compaction/index.js'
import type { Config } from '../../config/index.js'
import type { ClusterInfo } from '../cluster-info.js'
import type { Authorizer } from '../auth/authorizer.js'
import type { CallerLogs } from '../auth/guarded-log.js'
import type { WatchService } from '../watch/service.js'
import type { Alarms } from './alarms.js'
import type { Headers } from './identity.js'

export interface EtcdDeps {
  /**
   * The log, only as a caller: `logs.as(callerOf(auth, call), 'etcd')` checks every read and write with
   * the caller's permissions and records the caller as the author. The unchecked log is not reachable.
   */
  logs: CallerLogs
  headers: Headers
  compactor: AutoCompactor
  watch: WatchService
  config: Config
  /** Identities and permissions (apiserver/auth/): every call is checked before it touches the log. */
  auth: Authorizer
  /** The gRPC address (host:port) clients reach this member at (MemberList's clientURLs), known once listening. */
  clientUrl(): string
  /** The Prometheus text the native port serves at /metrics, for the client port's /metrics. */
  metrics?: () => Promise<{ contentType: string; text: string }>
  /** Cluster mode: the members MemberList lists. */
  cluster?: ClusterInfo
  /** etcd's alarms, one set for the Maintenance service and the client port's /readyz. */
  alarms: Alarms
  /** The server serves: started, not draining, and a cluster member caught up with the log (/readyz). */
  ready: () => Promise<boolean>
  /** The server's log (pino's surface): a line per call that fails. */
  logger?: CallLogger
}

export interface CallLogger {
  info(fields: object, message: string): void
  warn(fields: object, message: string): void
}
