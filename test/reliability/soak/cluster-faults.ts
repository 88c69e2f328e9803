/**
 * The faults of the cluster soak, and the compaction it runs all along:
 *
 *   nats-kill        SIGKILL one nats-server, restart it on its store a few seconds later
 *   nats-pause       SIGSTOP one nats-server for a few seconds, then SIGCONT
 *   leader-kill      SIGKILL the kvlog leader, restart it on its data dir
 *   leader-pause     SIGSTOP the kvlog leader for up to twice its leader lease (it may be deposed and
 *                    wake up still believing it leads: the stream's fence must refuse its publishes)
 *   follower-kill    SIGKILL a kvlog follower, restart it
 *   follower-pause   SIGSTOP a follower for a few seconds
 *   nats-cut         one member's NATS connections cut at its proxies and refused for a few seconds
 *   watch-move       every watch connection dropped: each resumes on the next member from its last revision
 *
 * Compaction goes through a live member; before it the oracle is fetched up to that member's head, so
 * compaction never hides history from the checker.
 */
import { DEFAULT_CONFIG } from '../../../config/schema.js'
import { sleep } from '../../support/watch-client.js'
import { NativeDriver } from '../drivers/native.js'
import type { WorkloadContext } from './workload.js'
import type { SoakMembers } from './members.js'
import type { WatchPool } from './watches.js'
import { countUnstopped } from '../../support/stopped.js'

export const CLUSTER_FAULT_KINDS = [
  'nats-kill',
  'nats-pause',
  'leader-kill',
  'leader-pause',
  'follower-kill',
  'follower-pause',
  'nats-cut',
  'watch-move',
] as const
export type ClusterFaultKind = (typeof CLUSTER_FAULT_KINDS)[number]

/** The leader lease at the defaults (leaderLease), ms: a leader paused longer than this may be deposed. */
const LEADER_LEASE_MS = DEFAULT_CONFIG.leaderLease

export class ClusterFaults {
  readonly injected: Record<string, number> = {}
  compactions = 0
  /** Faults of the single-node soak that have no cluster counterpart here (same report shape). */
  readonly noSpaceAnswers = 0
  readonly snapshotChunks = 0
  private crashesSeen = 0

  constructor(
    private readonly set: SoakMembers,
    private readonly watches: WatchPool,
    private readonly ctx: WorkloadContext,
    private readonly rnd: () => number,
    private readonly log: (line: string) => void,
  ) {}

  /** One compaction to a recent revision, the oracle fetched first. `keep`: revisions left below the head. */
  async compact(keep: number): Promise<void> {
    await this.set.exclusive(async () => {
      const live = this.set.live().filter((i) => !this.set.members[i].natsCut)
      if (live.length === 0) return
      const target = (await this.set.fetchOracle().catch(() => 0)) - keep
      if (target <= this.set.floor) return
      const member = live[Math.floor(this.rnd() * live.length)]
      if (this.set.members[member].proc === undefined) return
      const rec = await this.ctx.recorder.run(
        'compactor',
        new NativeDriver(this.set.direct(member), 60_000, this.set.rootToken !== undefined ? { token: this.set.rootToken } : undefined),
        {
          type: 'compact',
          revision: target,
        },
      )
      if (rec.outcome === 'ok') {
        this.set.floor = target
        this.compactions++
      }
    })
  }

  async inject(kind: ClusterFaultKind): Promise<void> {
    if (this.set.crashes.length > this.crashesSeen) {
      this.crashesSeen = this.set.crashes.length
      this.log(`member crashed: ${this.set.crashes[this.crashesSeen - 1]}`)
      await this.set.exclusive(() => this.set.restartCrashed())
    }
    this.injected[kind] = (this.injected[kind] ?? 0) + 1
    const pick = (n: number) => Math.floor(this.rnd() * n)
    switch (kind) {
      case 'nats-kill': {
        const s = pick(this.set.nats.servers.length)
        this.log(`fault ${kind} n${s}`)
        await this.set.nats.kill(s, 'SIGKILL')
        await sleep(1000 + this.rnd() * 2000)
        await this.set.nats.restart(s)
        break
      }
      case 'nats-pause': {
        const s = pick(this.set.nats.servers.length)
        this.log(`fault ${kind} n${s}`)
        if (!(await this.set.nats.pause(s))) countUnstopped(this.injected)
        await sleep(1000 + this.rnd() * 3000)
        this.set.nats.resume(s)
        break
      }
      case 'leader-kill':
      case 'follower-kill': {
        await this.set.exclusive(async () => {
          const i = await this.target(kind === 'leader-kill')
          if (i === undefined) return
          this.log(`fault ${kind} ${this.set.members[i].name}`)
          const rc = await this.set.restart(i, 'SIGKILL', kind)
          this.set.floor = Math.max(this.set.floor, rc.compactRevision)
          this.log(`  ${this.set.members[i].name} back at revision ${rc.revision}, compact revision ${rc.compactRevision}`)
        })
        break
      }
      case 'leader-pause':
      case 'follower-pause': {
        const i = await this.target(kind === 'leader-pause')
        if (i === undefined) return
        const ms = kind === 'leader-pause' ? 500 + this.rnd() * 2 * LEADER_LEASE_MS : 1000 + this.rnd() * 3000
        this.log(`fault ${kind} ${this.set.members[i].name} for ${Math.round(ms)} ms`)
        if (!(await this.set.pause(i))) countUnstopped(this.injected)
        await sleep(ms)
        this.set.resume(i)
        break
      }
      case 'nats-cut': {
        const live = this.set.live()
        const i = live[pick(live.length)]
        if (i === undefined) return
        this.log(`fault ${kind} ${this.set.members[i].name}`)
        this.set.cutNats(i)
        await sleep(1500 + this.rnd() * 3500)
        this.set.healNats(i)
        break
      }
      case 'watch-move':
        this.log(`fault ${kind}`)
        for (let i = 0; i < this.watches.size; i++) this.watches.drop(i)
        break
    }
  }

  /** The leader (or a random follower) among the running members; undefined when no leader is known. */
  private async target(leader: boolean): Promise<number | undefined> {
    const at = await this.set.leader()
    if (at === undefined) return undefined
    if (leader) return at
    const followers = this.set.live().filter((i) => i !== at)
    return followers[Math.floor(this.rnd() * followers.length)]
  }
}
