/**
 * Prometheus metrics (prom-client), shared by the front doors. The log knows nothing of Prometheus: write
 * latency is measured around its calls (instrumentLog), batch sizes through its commit hook, and the rest
 * is read from status() when scraped.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { Compaction } from '../compaction/index.js'
import type { Log } from '../log/backend.js'
import type { ClusterFigures } from './cluster-info.js'

export interface WatchStats {
  watchers: number
  slowWatchers: number
}

export class Metrics {
  readonly registry = new Registry()
  readonly writeDuration: Histogram
  readonly batchTxns: Histogram
  readonly committedRevisions: Counter
  private watchStats: () => WatchStats = () => ({ watchers: 0, slowWatchers: 0 })

  constructor(private readonly log: Log) {
    // Node's process metrics as kvlog_process_cpu_seconds_total, kvlog_nodejs_heap_size_used_bytes, ...
    collectDefaultMetrics({ register: this.registry, prefix: 'kvlog_' })
    // The earlier names (kvlog_process_process_cpu_seconds_total, kvlog_process_nodejs_...), kept as
    // aliases for one release so dashboards can move (docs/api.md).
    collectDefaultMetrics({ register: this.registry, prefix: 'kvlog_process_' })
    const registers = [this.registry]
    this.writeDuration = new Histogram({
      name: 'kvlog_write_duration_seconds',
      help: 'Time from a write request to its durable acknowledgement.',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    })
    this.batchTxns = new Histogram({
      name: 'kvlog_batch_revisions',
      help: 'Revisions committed per LevelDB batch (group commit).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048],
      registers,
    })
    this.committedRevisions = new Counter({ name: 'kvlog_committed_revisions_total', help: 'Revisions committed.', registers })
    new Gauge({
      name: 'kvlog_revision',
      help: 'Current revision.',
      registers,
      collect() {
        this.set(log.revision)
      },
    })
    new Gauge({
      name: 'kvlog_compact_revision',
      help: 'Compact revision (oldest readable).',
      registers,
      collect() {
        this.set(log.compactRevision)
      },
    })
    new Gauge({
      name: 'kvlog_db_size_bytes',
      help: 'Size of the database files on disk.',
      registers,
      async collect() {
        this.set((await log.status()).dbSize)
      },
    })
    new Gauge({
      name: 'kvlog_segments',
      help: 'Segments in the log.',
      registers,
      async collect() {
        this.set((await log.status()).segments.length)
      },
    })
    const stats = () => this.watchStats()
    new Gauge({
      name: 'kvlog_watchers',
      help: 'Open watchers.',
      registers,
      collect() {
        this.set(stats().watchers)
      },
    })
    new Gauge({
      name: 'kvlog_slow_watchers',
      help: 'Watchers paused because their connection backed up (catching up from the log).',
      registers,
      collect() {
        this.set(stats().slowWatchers)
      },
    })
    log.subscribe((entries) => {
      this.batchTxns.observe(entries.length)
      this.committedRevisions.inc(entries.length)
    })
  }

  /** Cluster mode: leadership, fencing, publish and forward latencies, apply lag. */
  setCluster(figures: ClusterFigures): void {
    const registers = [this.registry]
    const log = this.log
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read())
        },
      })
    const phases = new Histogram({
      name: 'kvlog_cluster_phase_seconds',
      help: "Where a write's time goes, by phase: queue, forward, publish, delivery, apply, majority, write (docs/api.md).",
      labelNames: ['phase'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
      registers,
    })
    figures.onPhase((phase, ms) => phases.observe({ phase }, ms / 1000))
    gauge('kvlog_cluster_leader_changes', 'Times this member became leader since it started.', () => figures.leaderChanges)
    gauge(
      'kvlog_cluster_fence_rejections',
      'Publishes refused by the stream fence (another writer got there first).',
      () => figures.fenceRejections,
    )
    gauge('kvlog_cluster_publish_seconds_sum', 'Time the leader waited for stream acknowledgements.', () => figures.publish.sumMs / 1000)
    gauge('kvlog_cluster_publish_count', 'Stream messages the leader published.', () => figures.publish.count)
    gauge(
      'kvlog_cluster_forward_seconds_sum',
      'Time this member waited for the leader to take forwarded writes.',
      () => figures.forward.sumMs / 1000,
    )
    gauge('kvlog_cluster_forward_count', 'Writes this member forwarded to the leader.', () => figures.forward.count)
    const snap = figures.snapshots
    gauge('kvlog_cluster_snapshots_total', 'Snapshots this member stored in the object store (the leader does).', () => snap.count)
    gauge('kvlog_cluster_snapshot_seconds_sum', 'Time this member spent taking and storing snapshots.', () => snap.sumMs / 1000)
    gauge('kvlog_cluster_snapshot_failures_total', 'Snapshot or purge rounds that failed (retried at the next check).', () => snap.failures)
    gauge('kvlog_cluster_last_snapshot_sequence', 'Stream sequence of the last snapshot this member stored.', () => snap.lastSeq)
    gauge('kvlog_cluster_last_snapshot_bytes', 'Size of the last snapshot this member stored.', () => snap.lastBytes)
    gauge('kvlog_cluster_last_snapshot_seconds', 'How long the last snapshot this member stored took.', () => snap.lastDurationMs / 1000)
    gauge(
      'kvlog_cluster_stream_purged_below',
      'The stream sequence this member last purged the stream below (0: never).',
      () => snap.purgedBelow,
    )
    gauge(
      'kvlog_cluster_durable_wait_seconds_sum',
      'Time writes waited, once applied here, for a majority of members to have them fsynced.',
      () => figures.durableWait.sumMs / 1000,
    )
    gauge(
      'kvlog_cluster_durable_wait_count',
      'Writes acknowledged once a majority of members had them fsynced (waiting or not).',
      () => figures.durableWait.count,
    )
    gauge(
      'kvlog_cluster_lease_renewal_failures',
      'Leader lease renewals that failed or were refused (two in a row make the leader step down).',
      () => figures.leadership().renewalFailures,
    )
    gauge(
      'kvlog_cluster_step_downs',
      'Times this member stopped leading: lease not renewed in time, fenced out, or a group not stored within one lease.',
      () => figures.leadership().stepDowns,
    )
    gauge('kvlog_cluster_leaders_seen', 'Leader changes this member saw (its own included).', () => figures.leadership().leadersSeen)
    gauge(
      'kvlog_cluster_publish_unknown_outcomes',
      'Publishes that got no answer in time and were settled by sending the same message again.',
      () => figures.leadership().unknownPublishOutcomes,
    )
    gauge(
      'kvlog_cluster_refilled_messages',
      "Stream messages this member republished from members' copies after the stream lost them.",
      () => figures.refilled,
    )
    gauge(
      'kvlog_cluster_applier_stopped',
      '1 once this member stopped applying the log (a message that does not follow its copy, a hole no member can fill).',
      () => (figures.copies().applierStopped ? 1 : 0),
    )
    gauge(
      'kvlog_cluster_disk_low',
      "1 while this member's copy's filesystem has less than clusterDiskReserve free: it applies nothing and is not ready until there is room.",
      () => (figures.copies().diskLow ? 1 : 0),
    )
    gauge(
      'kvlog_cluster_nats_disconnects',
      "Times this member's NATS connection was lost or taken for dead (natsMaxPingsOut pings unanswered); more than the nats-servers lost means pings too short for the machine's load.",
      () => figures.natsDisconnects,
    )
    gauge(
      'kvlog_cluster_consumers_made',
      'Log consumers this member made: one at start, then one each time its consumer delivered nothing while the stream held more (its nats-server lost).',
      () => figures.consumersMade,
    )
    gauge(
      'kvlog_cluster_read_while_remaking_consumer',
      "Messages this member read one by one from the stream's leader and applied while its log consumer was being made again (making one waits for JetStream's meta leader).",
      () => figures.readWhileRemakingConsumer,
    )
    gauge(
      'kvlog_cluster_consumer_forks',
      "Log consumers this member made again because their nats-server delivered a message the stream's leader does not hold there (a replica off the stream's history).",
      () => figures.consumerForks,
    )
    new Gauge({
      name: 'kvlog_cluster_consumer_server',
      help: "1 for the nats-server that serves this member's log consumer.",
      labelNames: ['server'],
      registers,
      collect() {
        this.reset()
        if (figures.consumerServer !== '') this.set({ server: figures.consumerServer }, 1)
      },
    })
    gauge(
      'kvlog_cluster_corruption_checks',
      "Corruption checks this member ran as leader (every member's hash of its copy at the leader's revision).",
      () => figures.corruption().checks,
    )
    gauge(
      'kvlog_cluster_corruption_mismatches',
      "Corruption checks that found a member whose copy's hash differs from the majority's (each raises a CORRUPT alarm for it).",
      () => figures.corruption().mismatches,
    )
    new Gauge({
      name: 'kvlog_cluster_durable_lag',
      help: "Messages each roster member's durable position is behind this member's applied one (a member on another history counts as all behind).",
      labelNames: ['member'],
      registers,
      collect() {
        this.reset()
        for (const { name, lag } of figures.copies().durableLag) this.set({ member: name }, lag)
      },
    })
    new Gauge({
      name: 'kvlog_cluster_apply_lag',
      help: 'Stream messages not yet applied here (lag), and seconds behind (lag_seconds).',
      labelNames: ['unit'],
      registers,
      async collect() {
        const c = (await log.status()).cluster
        this.set({ unit: 'messages' }, c?.lag ?? 0)
        this.set({ unit: 'seconds' }, c?.lagSeconds ?? 0)
      },
    })
  }

  setWatchStats(source: () => WatchStats): void {
    this.watchStats = source
  }

  /** Compaction results, the NOSPACE alarm and cursor lags, read when scraped. */
  setCompaction(compaction: Compaction): void {
    const registers = [this.registry]
    const stats = () => compaction.compactor.stats()
    new Gauge({
      name: 'kvlog_compaction_runs_total',
      help: 'Compactions run (automatic and manual).',
      registers,
      collect() {
        this.set(stats().runs)
      },
    })
    new Gauge({
      name: 'kvlog_compaction_removed_revisions_total',
      help: 'Revisions compacted: log entries below the floor whose history was removed.',
      registers,
      collect() {
        this.set(stats().removedRevisionsTotal)
      },
    })
    new Gauge({
      name: 'kvlog_compaction_bytes_freed_total',
      help: 'Database bytes given back by compaction.',
      registers,
      collect() {
        this.set(stats().bytesFreedTotal)
      },
    })
    new Gauge({
      name: 'kvlog_compaction_last_duration_seconds',
      help: 'Duration of the last compaction.',
      registers,
      collect() {
        this.set((stats().last?.durationMs ?? 0) / 1000)
      },
    })
    const log = this.log
    new Gauge({
      name: 'kvlog_alarm_nospace',
      help: '1 while the NOSPACE alarm is active.',
      registers,
      collect() {
        this.set(log.alarms().includes('NOSPACE') ? 1 : 0)
      },
    })
    new Gauge({
      name: 'kvlog_cursor_lag_revisions',
      help: 'Revisions a consumer cursor is behind the head.',
      labelNames: ['cursor'],
      registers,
      collect() {
        this.reset()
        for (const c of compaction.cursors.list()) this.set({ cursor: c.name }, c.lag)
      },
    })
  }
}

/** The same Log, with write latency recorded. */
export function instrumentLog(log: Log, metrics: Metrics): Log {
  const timed =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const end = metrics.writeDuration.startTimer()
      try {
        return await fn(...args)
      } finally {
        end()
      }
    }
  const wrapped: Record<PropertyKey, unknown> = {
    txn: timed(log.txn.bind(log)),
    put: timed(log.put.bind(log)),
    delete: timed(log.delete.bind(log)),
  }
  // Everything else is the log's own, called on the log itself. The wrapper holds no state: a method
  // that updates the log's fields (the cluster engine numbers its commands with a counter) updates them
  // on the log, never on a shadow copy that the timed methods would not see.
  return new Proxy(log, {
    get(target, prop) {
      if (Object.hasOwn(wrapped, prop)) return wrapped[prop]
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
}
