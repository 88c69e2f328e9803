/**
 * What the doors show of a cluster (cluster mode only): the members with their client URLs, whether this
 * member has caught up with the log (/readyz), and the ids etcd's APIs give members and the cluster. The
 * ids are derived from the names and the members' incarnations (recorded in the log), so every member
 * reports the same ids for the same members.
 */
import { createHash } from 'node:crypto'

export interface ClusterMember {
  name: string
  clientUrls: string[]
  peerUrls?: string[]
}

/** A member MemberAdd registered that has not started yet. */
export interface PendingMember {
  id: string
  peerUrls: string[]
  learner: boolean
}

/** The cluster engine's counters (log/jetstream/metrics.ts), read when /metrics is scraped. */
export interface ClusterFigures {
  leaderChanges: number
  fenceRejections: number
  publish: { count: number; sumMs: number }
  forward: { count: number; sumMs: number }
  /** Snapshots this member stored (it does while it leads) and the stream purges it made. */
  snapshots: {
    count: number
    sumMs: number
    failures: number
    lastSeq: number
    lastBytes: number
    lastDurationMs: number
    purgedBelow: number
  }
  durableWait: { count: number; sumMs: number }
  refilled: number
  consumersMade: number
  consumerServer: string
  consumerForks: number
  readWhileRemakingConsumer: number
  natsDisconnects: number
  leadership(): { renewalFailures: number; stepDowns: number; leadersSeen: number; unknownPublishOutcomes: number }
  copies(): { applierStopped: boolean; diskLow: boolean; durableLag: Array<{ name: string; lag: number }> }
  corruption(): { checks: number; mismatches: number; inconclusive: number }
  /** Calls `listener` with each write phase's time as it is observed (log/jetstream/metrics.ts, PHASES). */
  onPhase(listener: (phase: string, ms: number) => void): () => void
}

export interface ClusterInfo {
  clusterName: string
  memberName: string
  metrics: ClusterFigures
  members(): Promise<ClusterMember[]>
  /** The client URLs last seen for `member`, also once it is down ([] if never seen). */
  lastClientUrls(member: string): string[]
  /** The members whose majority acknowledges writes. */
  readonly roster: readonly string[]
  /** Takes `name` off the roster; with `addedId` (name ''), a member added that never started. */
  removeMember(name: string, addedId?: string): Promise<void>
  /** Registers a member by its peer URLs (MemberAdd); resolves with its id. */
  addMember(peerUrls: string[], learner: boolean): Promise<string>
  /** Gives `name` (with `addedId`, name '': a member added that never started) new peer URLs (MemberUpdate). */
  updateMember(name: string, addedId: string | undefined, peerUrls: string[]): Promise<void>
  /** The peer URLs MemberUpdate gave the started member `name` (listed instead of those it advertises). */
  updatedPeerUrls(name: string): readonly string[] | undefined
  /** Makes a learner count toward the majority (MemberPromote). */
  promoteMember(name: string): Promise<void>
  /** Members that apply the log without counting toward the majority. */
  readonly learners: readonly string[]
  readonly pendingMembers: readonly PendingMember[]
  /** The id MemberAdd gave `name`, if it joined as an added member. */
  addedIdOf(name: string): string | undefined
  /** A member's incarnation ('' when none is recorded: a copy made before incarnations). */
  incarnationOf(name: string): string
  /** Whether this member knows a leader now (etcd's "has leader": WithRequireLeader watches end without one). */
  hasLeader(): boolean
  /** Whether this member has applied everything the log held when asked. */
  caughtUp(): Promise<boolean>
}

/** A nonzero uint64 (decimal string) from a name. */
export function nameId(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\0')).digest()
  return (h.readBigUInt64BE(0) | 1n).toString()
}

/**
 * A member's etcd id: the one MemberAdd answered with for a member that joined as an added one; else from
 * the cluster's and the member's names, and its incarnation when it has one (a member back under the same
 * name with an empty copy gets a new id, as etcd gives a new member one).
 */
export function memberIdOf(info: Pick<ClusterInfo, 'clusterName' | 'incarnationOf' | 'addedIdOf'>, name: string): string {
  const added = info.addedIdOf(name)
  if (added !== undefined) return added
  const incarnation = info.incarnationOf(name)
  return incarnation === '' ? nameId(info.clusterName, name) : nameId(info.clusterName, name, incarnation)
}

export function clusterIdentity(info: ClusterInfo): { clusterId: string; memberId: string } {
  return { clusterId: nameId(info.clusterName), memberId: memberIdOf(info, info.memberName) }
}
