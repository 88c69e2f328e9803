/**
 * Options of the cluster engine (the config keys of the same names in config/schema.ts, where the
 * defaults are documented). The local copy is a LevelLog opened with `level`.
 */
import type { LevelLogOptions } from '../level/options.js'

export interface JetStreamLogOptions {
  /** NATS server URLs (any of the cluster's servers; the client finds the others). */
  natsUrls: string[]
  /** Names the stream (KVLOG_<name>), the bucket (kvlog_<name>) and the subjects (kvlog.<name>.*). */
  clusterName: string
  /** This member's name, unique in the cluster. */
  memberName: string
  /** Replicas of the stream and the bucket (1, 3 or 5; at most the number of nats-servers). */
  natsReplicas: number
  /** What MemberList reports for this member. */
  clientUrls: string[]
  /** A NATS credentials file (JWT + nkey seed), or '' for none. */
  natsCreds: string
  /** A CA file to verify the NATS servers' TLS certificates with, or '' for none. */
  natsTlsCa: string
  /** A leader that has not renewed its lease for this long (ms) loses it; another member may take over. */
  leaderLeaseMs: number
  /** How long a publish may wait for the stream's acknowledgement before it is retried (ms). */
  publishTimeoutMs: number
  /**
   * The most any one JetStream call on the data path (stream look-ups, bucket reads and writes, reading a
   * message) may wait for its answer (ms).
   */
  callTimeoutMs: number
  /** How long a forwarded write, or a read waiting to catch up, may wait (ms) before UNAVAILABLE. */
  requestTimeoutMs: number
  /** At most this many commands, and about this many bytes, in one stream message. */
  maxGroupCommands: number
  maxGroupBytes: number
  /** How often the leader looks for expired leases (ms). */
  leaseCheckInterval: number
  /**
   * The leader stores a snapshot of its copy once this many stream messages were applied since the last
   * one (0: no snapshots, and the stream is never purged).
   */
  snapshotInterval: number
  /** How many snapshots the object store keeps; the stream is purged below the oldest of them. */
  snapshotKeep: number
  /** How often the leader checks whether a snapshot is due (ms). */
  snapshotCheckIntervalMs: number
  /** The stream is not purged past a member seen alive this recently (ms). */
  purgeGraceMs: number
  /**
   * How many of the last applied stream messages each member keeps byte for byte (tail.ts): a new leader
   * republishes from them what the stream lost; a member fills holes from its peers' copies.
   */
  tailMessages: number
  /** The local copy (its leaseCheckInterval is ignored: leases expire through the log). */
  level: Partial<LevelLogOptions> & { dir: string }
  /** Where progress lines (connecting, leadership) go. */
  log?: (line: string) => void
}

export const DEFAULT_JETSTREAM_OPTIONS = {
  clusterName: 'kvlog',
  natsReplicas: 3,
  clientUrls: [] as string[],
  natsCreds: '',
  natsTlsCa: '',
  leaderLeaseMs: 3000,
  publishTimeoutMs: 2000,
  callTimeoutMs: 2000,
  requestTimeoutMs: 10_000,
  maxGroupCommands: 1024,
  maxGroupBytes: 512 * 1024,
  leaseCheckInterval: 500,
  snapshotInterval: 10_000,
  snapshotKeep: 2,
  snapshotCheckIntervalMs: 10_000,
  purgeGraceMs: 300_000,
  tailMessages: 10_000,
}

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
  }
}
