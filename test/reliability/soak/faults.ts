/**
 * The faults of the soak, and the compaction it runs all along:
 *
 *   sigkill             kill -9 under load, restart on the same data
 *   sigkill-compaction  kill -9 while a large compaction is running
 *   sigkill-snapshot    kill -9 while a client downloads a snapshot (gRPC Maintenance.Snapshot)
 *   sigterm             a graceful restart (drain, final progress notices)
 *   pause               SIGSTOP for a while, then SIGCONT (clients time out, watches stall)
 *   drop                every client connection cut at the proxy; some watch connections stay away
 *                       until the next compaction, so they resume below the floor (COMPACTED, relist)
 *   nospace             large puts until the tiny quota answers NO_SPACE, then delete them again
 *
 * Before every compaction the oracle is fetched up to the head, so compaction never hides history from it.
 */
import { sleep } from '../../support/watch-client.js'
import { startSnapshot } from '../drivers/grpc.js'
import { NativeDriver } from '../drivers/native.js'
import type { Driver } from '../drivers/types.js'
import type { Cluster } from './cluster.js'
import type { WatchPool } from './watches.js'
import { fillToQuota, type WorkloadContext } from './workload.js'
import { countUnstopped } from '../../support/stopped.js'

export const FAULT_KINDS = ['sigkill', 'sigkill-compaction', 'sigkill-snapshot', 'sigterm', 'pause', 'drop', 'nospace'] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

export class Faults {
  readonly injected: Record<string, number> = {}
  compactions = 0
  noSpaceAnswers = 0
  /** Snapshot chunks received before the kills that cut the downloads. */
  snapshotChunks = 0
  /** The fault injected last ('' before the first). */
  last = ''
  private compactionWaiters: Array<() => void> = []

  constructor(
    private readonly cluster: Cluster,
    private readonly watches: WatchPool,
    private readonly ctx: WorkloadContext,
    private readonly filler: Driver,
    private readonly rnd: () => number,
    private readonly log: (line: string) => void,
  ) {}

  /** Resolves after the next compaction (or at the end). */
  nextCompaction(): Promise<void> {
    return new Promise((resolve) => this.compactionWaiters.push(resolve))
  }

  releaseWaiters(): void {
    const waiters = this.compactionWaiters
    this.compactionWaiters = []
    for (const w of waiters) w()
  }

  /** One compaction to a recent revision, the oracle fetched first. `keep`: revisions left below the head. */
  async compact(keep: number): Promise<void> {
    await this.cluster.exclusive(async () => {
      if (!this.cluster.up || this.cluster.paused) return
      const target = (await this.cluster.fetchOracle().catch(() => 0)) - keep
      if (target <= this.cluster.floor) return
      const rec = await this.ctx.recorder.run('compactor', this.rootDriver(), {
        type: 'compact',
        revision: target,
      })
      if (rec.outcome === 'ok') {
        this.cluster.floor = target
        this.compactions++
        this.releaseWaiters()
      }
    })
  }

  async inject(kind: FaultKind): Promise<void> {
    this.injected[kind] = (this.injected[kind] ?? 0) + 1
    this.last = kind
    this.log(`fault ${kind}`)
    switch (kind) {
      case 'sigkill':
        await this.cluster.exclusive(() => this.restart('SIGKILL', kind))
        break
      case 'sigterm':
        await this.cluster.exclusive(() => this.restart('SIGTERM', kind))
        break
      case 'sigkill-compaction':
        await this.cluster.exclusive(async () => {
          const last = await this.cluster.fetchOracle()
          const target = Math.max(this.cluster.floor + 1, last - 5)
          const driver = this.rootDriver()
          const compaction = target <= last ? this.ctx.recorder.run('compactor', driver, { type: 'compact', revision: target }) : undefined
          await sleep(this.rnd() * 15)
          await this.restart('SIGKILL', kind)
          await compaction
        })
        break
      case 'sigkill-snapshot':
        await this.cluster.exclusive(async () => {
          const download = startSnapshot(this.cluster.directGrpc, this.cluster.rootToken)
          await Promise.race([download.started, sleep(10_000)])
          await sleep(this.rnd() * 10)
          await this.restart('SIGKILL', kind)
          download.cancel()
          await download.ended
          this.snapshotChunks += download.chunks
        })
        break
      case 'pause':
        if (!(await this.cluster.pause())) countUnstopped(this.injected)
        await sleep(200 + this.rnd() * 1300)
        this.cluster.resume()
        break
      case 'drop': {
        const hold = this.rnd() < 0.5 ? this.nextCompaction() : undefined
        for (let i = 0; i < this.watches.size; i++) if (hold !== undefined && this.rnd() < 0.5) this.watches.drop(i, hold)
        this.cluster.dropConnections()
        break
      }
      case 'nospace':
        this.noSpaceAnswers += await fillToQuota(this.filler, this.ctx)
        break
    }
  }

  /** A native driver straight to the server (not through the proxy), as root when auth is on. */
  private rootDriver(): NativeDriver {
    const token = this.cluster.rootToken
    return new NativeDriver(this.cluster.direct, 60_000, token !== undefined ? { token } : undefined)
  }

  private async restart(signal: NodeJS.Signals, fault: string): Promise<void> {
    const rc = await this.cluster.restart(signal, fault)
    this.cluster.floor = Math.max(this.cluster.floor, rc.compactRevision)
    this.log(`  back at revision ${rc.revision}, compact revision ${rc.compactRevision}`)
  }
}
