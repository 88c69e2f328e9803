/**
 * The cluster engine's figures, plain numbers the server's /metrics exports: leader changes, fence
 * rejections, publish, forward and durable-acknowledgement latencies (count and sum, and the largest since
 * the last read), messages refilled, the apply position (sequence and the commit time of the last applied
 * message, for the lag in seconds), the snapshots this member stored (snapshotter.ts), and the corruption
 * checks it ran as leader (corruption-check.ts); and where a write's time goes, phase by phase (PHASES),
 * handed to listeners as observed (the server exports them as one histogram).
 */
import type { CorruptionFigures } from './corruption-check.js'

/** The snapshots this member stored (snapshotter.ts). */
export class SnapshotFigures {
  /** Snapshots this member stored, and the time they took. */
  count = 0
  sumMs = 0
  failures = 0
  /** The last snapshot this member stored: its stream sequence, size and duration. */
  lastSeq = 0
  lastBytes = 0
  lastDurationMs = 0
  /** The stream sequence this member last purged the stream below (0: never). */
  purgedBelow = 0
}

export interface LatencyFigures {
  count: number
  sumMs: number
}

/** Kept by the election and the publisher; read through ClusterMetrics.leadership. */
export interface LeadershipFigures {
  /** Lease renewals that failed or were refused. */
  renewalFailures: number
  /** Times this member stopped leading (lease lost, fenced out, a group past its deadline). */
  stepDowns: number
  /** Leader changes this member saw. */
  leadersSeen: number
  /** Publishes that got no answer at first (settled by sending the same message again). */
  unknownPublishOutcomes: number
}

/** The applier's state and the members' durable positions; read through ClusterMetrics.copies. */
export interface CopyFigures {
  /** This member's applier stopped (a fork, a hole no member can fill): it applies nothing more. */
  applierStopped: boolean
  /** This member's copy's filesystem is below clusterDiskReserve: it applies nothing until there is room. */
  diskLow: boolean
  /** Each roster member's durable position behind this member's applied one, in messages. */
  durableLag: Array<{ name: string; lag: number }>
}

/**
 * The phases of a write, each timed where it happens:
 * - queue: a command waiting in the leader's queue until its group is taken for publishing;
 * - forward: a follower's request to the leader, until the leader answers that the stream stored it;
 * - publish: the leader's publish until the stream's acknowledgement (stored on a quorum of nats-servers);
 * - delivery: a message's commit timestamp (taken by the leader as it built the message) to its arrival
 *   at this member's applier;
 * - apply: arrival at this member's applier to applied and fsynced in its copy (waiting for the run
 *   before it, then its own run's synced batch);
 * - majority: applied here until a majority of the roster reported it fsynced;
 * - write: the whole write on the member that took it, from submit to its answer.
 */
export const PHASES = ['queue', 'forward', 'publish', 'delivery', 'apply', 'majority', 'write'] as const
export type Phase = (typeof PHASES)[number]

export class ClusterMetrics {
  private readonly phaseListeners = new Set<(phase: Phase, ms: number) => void>()
  /** Set once the election and the publisher exist (JetStreamLog.start). */
  leadership: () => LeadershipFigures = () => ({ renewalFailures: 0, stepDowns: 0, leadersSeen: 0, unknownPublishOutcomes: 0 })
  /** Set once the applier and the durability exist (JetStreamLog.start). */
  copies: () => CopyFigures = () => ({ applierStopped: false, diskLow: false, durableLag: [] })
  /** Set once the corruption check exists (JetStreamLog.start). */
  corruption: () => CorruptionFigures = () => ({ checks: 0, mismatches: 0, inconclusive: 0 })
  /** Times this member became leader. */
  leaderChanges = 0
  fenceRejections = 0
  readonly publish: LatencyFigures = { count: 0, sumMs: 0 }
  readonly forward: LatencyFigures = { count: 0, sumMs: 0 }
  /** Time acknowledged writes waited for a majority of members to have them fsynced. */
  readonly durableWait: LatencyFigures = { count: 0, sumMs: 0 }
  /** Messages this member republished, as leader, from members' copies after the stream lost them. */
  refilled = 0
  appliedSeq = 0
  appliedTimestamp = 0
  /** Log consumers this member made (the first at start, then one per stall), and the server of the last. */
  consumersMade = 0
  consumerServer = ''
  /** Consumers made again because their nats-server delivered a message the stream's leader does not hold. */
  consumerForks = 0
  /** Times this member's NATS connection was lost or taken for dead (its pings unanswered). */
  natsDisconnects = 0
  readonly snapshots = new SnapshotFigures()

  observe(event: 'publish' | 'forward' | 'fence' | 'durable' | 'queue', ms: number): void {
    if (event === 'fence') {
      this.fenceRejections++
      return
    }
    if (event === 'queue') return this.phase('queue', ms)
    const f = event === 'publish' ? this.publish : event === 'forward' ? this.forward : this.durableWait
    f.count++
    f.sumMs += ms
    this.phase(event === 'durable' ? 'majority' : event, ms)
  }

  /** One write's (or message's) time in `phase`, to the listeners. */
  phase(phase: Phase, ms: number): void {
    for (const l of this.phaseListeners) l(phase, ms)
  }

  /** Calls `listener` with every phase timing from now on; returns its removal. */
  onPhase(listener: (phase: Phase, ms: number) => void): () => void {
    this.phaseListeners.add(listener)
    return () => this.phaseListeners.delete(listener)
  }

  consumerMade(server: string): void {
    this.consumersMade++
    this.consumerServer = server
  }

  /** Messages read from the stream's leader while this member's consumer was made again. */
  readWhileRemakingConsumer = 0

  readWhileRemaking(messages: number): void {
    this.readWhileRemakingConsumer += messages
  }

  consumerForked(): void {
    this.consumerForks++
  }

  applied(seq: number, timestamp: number): void {
    this.appliedSeq = seq
    this.appliedTimestamp = timestamp
  }
}
