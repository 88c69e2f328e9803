/**
 * The cluster engine's figures, plain numbers the server's /metrics exports: leader changes, fence
 * rejections, publish, forward and durable-acknowledgement latencies (count and sum, and the largest since
 * the last read), messages refilled, the apply position (sequence and the commit time of the last applied
 * message, for the lag in seconds), and the snapshots this member stored (snapshotter.ts).
 */
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

export class ClusterMetrics {
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

  applied(seq: number, timestamp: number): void {
    this.appliedSeq = seq
    this.appliedTimestamp = timestamp
  }
}
