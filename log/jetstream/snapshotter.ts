/**
 * Snapshots and retention of the cluster's stream, run by the leader (every member runs the timer; only
 * the one that leads acts, so at most one member writes snapshots at a time):
 *
 * 1. once `clusterSnapshotInterval` messages were applied since the newest stored snapshot, the leader stores a
 *    snapshot of its copy. It is consistent: one LevelDB snapshot of the copy, labelled with the applied
 *    marker read from that same LevelDB snapshot (sequence and chain hash), so the sequence is exactly the
 *    one the data holds;
 * 2. only the newest `clusterSnapshotKeep` snapshots are kept (counting only objects whose description matches
 *    the stream's chain, so a foreign object cannot make the leader drop good snapshots or purge);
 * 3. the stream is purged below the oldest kept snapshot, but never past the applied sequence of a
 *    member that is running or was seen within `clusterPurgeGrace`: such a member catches up from the stream;
 *    one that is gone for longer restores a snapshot when it starts again (snapshot-restore.ts).
 *
 * A failed round (NATS unreachable, the leadership lost midway) is logged and retried at the next check;
 * nothing is purged unless the snapshots that cover it are stored.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Snapshots and retention".
 */
import type { JetStreamManager } from 'nats'
import type { Replica } from '../replica.js'
import type { SnapshotFigures } from './metrics.js'
import type { MemberRecord } from './election.js'
import type { ClusterNames, JetStreamLogOptions } from './options.js'
import { APPLIED_MARKER, type AppliedMarker } from './records.js'
import {
  chainMismatch,
  SNAPSHOT_FORMAT,
  snapshotName,
  type SnapshotRecord,
  type SnapshotStore,
  type StoredSnapshot,
} from './snapshot-store.js'

const CHUNK_BYTES = 128 * 1024

export type SnapshotterOptions = Pick<
  JetStreamLogOptions,
  'clusterName' | 'memberName' | 'clusterSnapshotInterval' | 'clusterSnapshotKeep' | 'clusterSnapshotCheckInterval' | 'clusterPurgeGrace'
>

export interface SnapshotterHooks {
  leading(): boolean
  applied(): number
  members(): Promise<MemberRecord[]>
  say(line: string): void
}

export class Snapshotter {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false
  /** Objects whose description was checked against the stream (or that this member stored). */
  private readonly verified = new Set<string>()
  private readonly distrusted = new Set<string>()
  /** Members seen alive, with their applied sequence then (ms since the epoch). */
  private readonly seen = new Map<string, { applied: number; at: number }>()

  constructor(
    private readonly o: SnapshotterOptions,
    private readonly names: ClusterNames,
    private readonly jsm: JetStreamManager,
    private readonly store: SnapshotStore,
    private readonly view: Replica,
    private readonly hooks: SnapshotterHooks,
    readonly figures: SnapshotFigures,
  ) {}

  start(): void {
    if (this.o.clusterSnapshotInterval <= 0) return
    this.timer = setInterval(() => this.tick(), this.o.clusterSnapshotCheckInterval)
  }

  private tick(): void {
    if (this.running !== undefined || this.stopped) return
    // Followers only keep track of the members, so that a new leader knows who was there a moment ago.
    const work = this.hooks.leading()
      ? this.round().catch((err: unknown) => {
          this.figures.failures++
          this.hooks.say(`kvlog: ${this.o.memberName} could not snapshot or purge the log (retrying later): ${String(err)}`)
        })
      : this.observe().then(
          () => undefined,
          () => undefined,
        )
    this.running = work.finally(() => {
      this.running = undefined
    })
  }

  /**
   * Records the live members' applied sequences; returns the sequences to keep in the stream for them: of
   * every member seen within the purge grace (a member paused or cut off for a moment catches up from the
   * stream when it is back, instead of finding the stream purged past its copy).
   */
  private async observe(): Promise<number[]> {
    const now = Date.now()
    for (const m of await this.hooks.members()) this.seen.set(m.name, { applied: m.applied, at: now })
    const held: number[] = []
    for (const [name, m] of this.seen) {
      if (now - m.at > this.o.clusterPurgeGrace) this.seen.delete(name)
      else held.push(m.applied)
    }
    return held
  }

  /** One check: a snapshot if one is due, then old snapshots removed and the stream purged. */
  async round(): Promise<void> {
    const info = await this.jsm.streams.info(this.names.stream)
    const stored = await this.store.list()
    const first = info.state.first_seq
    // Below first - 1 a snapshot cannot be continued from the stream any more: it is of no use.
    const obsolete = stored.filter((s) => s.seq < first - 1)
    const trusted: Array<{ seq: number; name: string }> = []
    for (const s of stored) if (s.seq >= first - 1 && (await this.trust(s, info.state.last_seq))) trusted.push(s)
    if (this.hooks.applied() - (trusted.at(-1)?.seq ?? 0) >= this.o.clusterSnapshotInterval) {
      const taken = await this.take()
      if (taken !== undefined) trusted.push({ seq: taken.seq, name: snapshotName(taken.seq) })
    }
    if (!this.hooks.leading() || this.stopped) return
    await this.retain(obsolete, trusted, first)
  }

  /**
   * Whether an object's description matches the stream: the message after its sequence names its hash as
   * `prev` (or, at the stream's end, the last message has that hash). An object that does not is neither
   * counted nor removed (it is reported once); its content is checked only by a member that restores it.
   */
  private async trust(s: StoredSnapshot, last: number): Promise<boolean> {
    if (this.verified.has(s.name)) return true
    const ok = (await chainMismatch(this.jsm, this.names.stream, s, last)) === undefined
    if (ok) this.verified.add(s.name)
    else if (!this.distrusted.has(s.name)) {
      this.distrusted.add(s.name)
      this.hooks.say(
        `kvlog: ${this.o.memberName} ignores object ${s.name} in ${this.store.bucket}: its description does not match the stream`,
      )
    }
    return ok
  }

  /** Stores a snapshot of this member's copy; undefined if the copy has applied nothing yet. */
  async take(): Promise<SnapshotRecord | undefined> {
    const started = performance.now()
    const { stream, meta } = await this.view.snapshotWithMeta(APPLIED_MARKER, CHUNK_BYTES)
    const marker = meta as AppliedMarker | undefined
    if (marker === undefined || marker.seq < 1) {
      await stream.chunks[Symbol.asyncIterator]().return?.()
      return undefined
    }
    const record: SnapshotRecord = {
      kvlog: 'snapshot',
      format: SNAPSHOT_FORMAT,
      cluster: this.o.clusterName,
      seq: marker.seq,
      hash: marker.hash,
      revision: stream.revision,
      ts: marker.ts,
      member: this.o.memberName,
      takenAt: Date.now(),
    }
    const info = await this.store.put(record, stream.chunks)
    this.verified.add(info.name)
    const ms = performance.now() - started
    const f = this.figures
    f.count++
    f.sumMs += ms
    f.lastSeq = record.seq
    f.lastBytes = info.size
    f.lastDurationMs = ms
    this.hooks.say(
      `kvlog: ${this.o.memberName} stored snapshot ${info.name} of cluster ${this.o.clusterName} ` +
        `(stream sequence ${record.seq}, revision ${record.revision}, ${info.size} bytes, ${Math.round(ms)} ms)`,
    )
    return record
  }

  /** Removes obsolete snapshots and all but the newest `clusterSnapshotKeep`, then purges the stream below the oldest kept. */
  private async retain(obsolete: Array<{ name: string }>, trusted: Array<{ seq: number; name: string }>, first: number): Promise<void> {
    const keep = Math.max(1, this.o.clusterSnapshotKeep)
    const excess = trusted.slice(0, Math.max(0, trusted.length - keep))
    const kept = trusted.slice(excess.length)
    for (const s of [...obsolete, ...excess]) {
      await this.store.delete(s.name)
      this.verified.delete(s.name)
    }
    // Members behind the oldest snapshot (running, or seen within the grace) still read those messages.
    const held = await this.observe()
    if (kept.length === 0) return
    const below = Math.min(kept[0].seq, ...held) + 1
    if (below <= first || !this.hooks.leading()) return
    await this.jsm.streams.purge(this.names.stream, { seq: below })
    this.figures.purgedBelow = below
    this.hooks.say(
      `kvlog: ${this.o.memberName} purged stream ${this.names.stream} below sequence ${below} ` +
        `(it started at ${first}; snapshots kept at sequences ${kept.map((s) => s.seq).join(', ')})`,
    )
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    this.timer = undefined
    await this.running
  }
}
