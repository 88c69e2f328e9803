/**
 * The cluster engine's figures, plain numbers the server's /metrics exports: leader changes, fence
 * rejections, publish, forward and durable-acknowledgement latencies (count and sum, and the largest since
 * the last read), messages refilled, the apply position (sequence and the commit time of the last applied
 * message, for the lag in seconds), the snapshots this member stored (snapshotter.ts), and the corruption
 * checks it ran as leader (corruption-check.ts).
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
  /** Each roster member's durable position behind this member's applied one, in messages. */
  durableLag: Array<{ name: string; lag: number }>
}

export class ClusterMetrics {
  /** Set once the election and the publisher exist (JetStreamLog.start). */
  leadership: () => LeadershipFigures = () => ({ renewalFailures: 0, stepDowns: 0, leadersSeen: 0, unknownPublishOutcomes: 0 })
  /** Set once the applier and the durability exist (JetStreamLog.start). */
  copies: () => CopyFigures = () => ({ applierStopped: false, durableLag: [] })
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
  readonly snapshots = new SnapshotFigures()

  observe(event: 'publish' | 'forward' | 'fence' | 'durable', ms: number): void {
    if (event === 'fence') {
      this.fenceRejections++
      return
    }
    const f = event === 'publish' ? this.publish : event === 'forward' ? this.forward : this.durableWait
    f.count++
    f.sumMs += ms
  }

  consumerMade(server: string): void {
    this.consumersMade++
    this.consumerServer = server
  }

  applied(seq: number, timestamp: number): void {
    this.appliedSeq = seq
    this.appliedTimestamp = timestamp
  }
}
