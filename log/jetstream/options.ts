/**
 * Options of the cluster engine. Each setting is a setting of config/schema.ts of the same name, which
 * documents it and holds its one default; the server passes its Config through jetStreamLogOptions, and
 * tests override single values over DEFAULT_JETSTREAM_OPTIONS. The rest is decided by the wiring: the
 * NATS URLs and advertised client URLs (split from the settings), the member's name (a default derived
 * from the host), and where the local copy lives (a ReplicaStorage of the replication contract).
 *
 * Where each is used:
 *   clusterName, natsReplicas                   the stream, bucket and subject names (clusterNames below)
 *   natsCreds, natsTlsCa, natsPingInterval,
 *   natsMaxPingsOut, natsReconnectWait          the NATS connection (connection.ts)
 *   leaderLease                                 the leader's lease in the bucket (election.ts)
 *   natsPublishTimeout, clusterRequestTimeout   publish retries, forwarded writes, reads that catch up
 *   natsCallTimeout                             every other JetStream call on the data path
 *   clusterMaxGroupCommands, clusterMaxGroupBytes   one stream message's group (publisher.ts)
 *   clusterSnapshotInterval, clusterSnapshotKeep,
 *   clusterSnapshotCheckInterval, clusterPurgeGrace snapshots and purges (snapshotter.ts)
 *   clusterTailMessages, clusterTailReplyBytes   the kept tail (tail.ts) and its replies (durability.ts)
 *   clusterDiskReserve                           the free space the copy keeps (disk-space.ts)
 *   clusterCorruptCheckInterval                  the corruption check (corruption-check.ts)
 *   leaseCheckInterval                           how often the leader looks for expired leases
 *   clusterApplyMaxAhead, clusterApplyHoldMax,
 *   clusterConsumerStallTimeout,
 *   clusterConsumerInactiveThreshold,
 *   clusterFillRetryInterval                     the applier and its consumer (applier.ts)
 *   clusterStrictReconfigCheck                   MemberRemove's check (reconfig-check.ts)
 */
import { DEFAULT_CONFIG, type Config } from '../../config/index.js'
import { pickSettings } from '../settings.js'
import type { ReplicaStorage } from '../replica.js'

export const JETSTREAM_LOG_SETTINGS = [
  'clusterName',
  'natsReplicas',
  'natsCreds',
  'natsTlsCa',
  'natsPingInterval',
  'natsMaxPingsOut',
  'natsReconnectWait',
  'leaderLease',
  'natsPublishTimeout',
  'natsCallTimeout',
  'clusterRequestTimeout',
  'clusterMaxGroupCommands',
  'clusterMaxGroupBytes',
  'clusterSnapshotInterval',
  'clusterSnapshotKeep',
  'clusterSnapshotCheckInterval',
  'clusterPurgeGrace',
  'clusterCorruptCheckInterval',
  'clusterTailMessages',
  'clusterDiskReserve',
  'leaseCheckInterval',
  'clusterApplyMaxAhead',
  'clusterApplyHoldMax',
  'clusterConsumerStallTimeout',
  'clusterConsumerInactiveThreshold',
  'clusterFillRetryInterval',
  'clusterStrictReconfigCheck',
  'clusterTailReplyBytes',
] as const satisfies readonly (keyof Config)[]

export type JetStreamLogSettings = Pick<Config, (typeof JETSTREAM_LOG_SETTINGS)[number]>

export interface JetStreamLogOptions extends JetStreamLogSettings {
  /** NATS server URLs (any of the cluster's servers; the client finds the others): config.natsUrl, split. */
  natsUrls: string[]
  /** This member's name, unique in the cluster. */
  memberName: string
  /** What MemberList reports for this member: config.advertiseClientUrls, split. */
  clientUrls: string[]
  /** The peer URLs that name this member (MemberAdd, MemberList): config.advertisePeerUrls, split. */
  peerUrls: string[]
  /** The local copy: its directory and the engine that holds it. */
  copy: ReplicaStorage
  /**
   * Where progress lines (connecting, leadership) go; 'warn' for retries and failures, 'debug' for a line
   * per publish attempt and outcome (written only when `debug` is set).
   */
  log?: (line: string, level?: 'warn' | 'debug') => void
  /** Whether `log` writes debug lines: the publisher builds its per-message lines only then. */
  debug?: boolean
}

/** The engine's settings out of a full Config. */
export function jetStreamLogSettings(config: Readonly<Config>): JetStreamLogSettings {
  return pickSettings(config, JETSTREAM_LOG_SETTINGS)
}

/** A comma-separated list setting as its items. */
function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
}

/** How the server opens the engine: its settings, and the member that the wiring decided. */
export function jetStreamLogOptions(
  config: Readonly<Config>,
  member: Pick<JetStreamLogOptions, 'memberName' | 'copy' | 'log' | 'debug'>,
): JetStreamLogOptions {
  return {
    ...jetStreamLogSettings(config),
    natsUrls: list(config.natsUrl),
    clientUrls: list(config.advertiseClientUrls),
    peerUrls: list(config.advertisePeerUrls),
    ...member,
  }
}

export const DEFAULT_JETSTREAM_OPTIONS: Readonly<JetStreamLogSettings & Pick<JetStreamLogOptions, 'clientUrls' | 'peerUrls'>> =
  Object.freeze({
    ...jetStreamLogSettings(DEFAULT_CONFIG),
    clientUrls: [],
    peerUrls: [],
  })

const NAME = /^[A-Za-z0-9_-]{1,64}$/

export function checkName(what: string, name: string): string {
  if (!NAME.test(name)) throw new Error(`${what} '${name}' is not valid: use 1 to 64 letters, digits, '-' or '_'`)
  return name
}

/** The JetStream names that belong to one kvlog cluster. */
export interface ClusterNames {
  stream: string
  subject: string
  bucket: string
  forward: string
  /** Core NATS: every member's durable applied sequence (durability.ts). */
  durable: string
  /** Core NATS request/reply: members' durable positions; `<tail>.<member>` serves its kept messages. */
  tail: string
  description: string
  /** The object store bucket that holds the snapshots. */
  snapshots: string
  /** Core NATS: `<alive>.<member>` is subscribed while the member's NATS connection is up (election.ts). */
  alive: string
  /** Core NATS request, many replies: the leader asks every member for a hash of its copy (corruption-check.ts). */
  digest: string
}

export function clusterNames(clusterName: string): ClusterNames {
  checkName('cluster name', clusterName)
  return {
    stream: `KVLOG_${clusterName}`,
    subject: `kvlog.${clusterName}.log`,
    bucket: `kvlog_${clusterName}`,
    forward: `kvlog.${clusterName}.forward`,
    durable: `kvlog.${clusterName}.durable`,
    tail: `kvlog.${clusterName}.tail`,
    description: `kvlog log of cluster ${clusterName} (format 1)`,
    snapshots: `kvlog_${clusterName}_snapshots`,
    alive: `kvlog.${clusterName}.alive`,
    digest: `kvlog.${clusterName}.digest`,
  }
}
