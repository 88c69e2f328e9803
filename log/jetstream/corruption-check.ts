/**
 * etcd's corruption check for the cluster engine. Every member answers requests on the digest subject
 * with its copy's hash (../state-hash.ts, etcd's HashKV) at the asked revision, once its copy has reached
 * it. Every clusterCorruptCheckInterval the leader asks at its own revision and collects the answers of the
 * roster: a member whose hash differs from the one a majority of the roster answers is reported (a log
 * line, the figures below, and the listeners: the etcd door raises a CORRUPT alarm for it). Without a
 * majority nothing is reported. Applying the same messages in the same order gives the same state, so a
 * difference means a copy was changed outside the log (a disk fault, an edit of the files).
 */
import { createInbox, type Msg, type NatsConnection, type Subscription } from 'nats'
import type { CorruptReport } from '../backend.js'
import type { Replica } from '../replica.js'
import { hashState } from '../state-hash.js'
import { decode, encode } from './messages.js'
import type { ClusterNames } from './options.js'

/** Sent by the leader: answer with the copy's hash at `revision`. */
interface DigestRequest {
  revision: number
}

interface DigestReply {
  name: string
  revision: number
  hash: number
}

/** The checks this member ran as leader, for /metrics. */
export interface CorruptionFigures {
  checks: number
  /** Checks that found a member whose hash differs from the majority's. */
  mismatches: number
  /** Checks whose answers had no majority (too few members answered, or no hash shared by a majority). */
  inconclusive: number
}

/** How often a member asked for a revision its copy has not reached looks again. */
const CATCH_UP_POLL_MS = 20

export interface CorruptionCheckContext {
  nc: NatsConnection
  names: ClusterNames
  clusterName: string
  memberName: string
  view: Pick<Replica, 'range' | 'revision'>
  /** clusterCorruptCheckInterval; 0 = the leader never asks (members still answer). */
  intervalMs: number
  /** How long members have to answer, and how long one waits for its copy to reach the revision. */
  timeoutMs: number
  isLeading(): boolean
  roster(): string[]
  say(line: string): void
}

export class CorruptionCheck {
  readonly figures: CorruptionFigures = { checks: 0, mismatches: 0, inconclusive: 0 }
  private readonly listeners = new Set<(report: CorruptReport) => void>()
  private sub: Subscription | undefined
  private timer: NodeJS.Timeout | undefined
  private running = false

  constructor(private readonly c: CorruptionCheckContext) {}

  start(): void {
    this.sub = this.c.nc.subscribe(this.c.names.digest, { callback: (err, msg) => void (err === null && this.answer(msg)) })
    if (this.c.intervalMs > 0) this.timer = setInterval(() => void this.tick(), this.c.intervalMs)
  }

  stop(): void {
    clearInterval(this.timer)
    this.sub?.unsubscribe()
  }

  onCorrupt(listener: (report: CorruptReport) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private async tick(): Promise<void> {
    if (this.running || !this.c.isLeading()) return
    this.running = true
    try {
      await this.check()
    } catch (err) {
      this.c.say(`kvlog: corruption check failed: ${(err as Error).message}`)
    } finally {
      this.running = false
    }
  }

  /** Asks every member for its hash at this copy's revision; the members that differ from the majority. */
  async check(): Promise<CorruptReport[]> {
    const revision = this.c.view.revision
    const roster = this.c.roster()
    const replies = await this.ask(revision, roster.length)
    this.figures.checks++
    const byName = new Map(replies.filter((r) => roster.includes(r.name)).map((r) => [r.name, r]))
    const counts = new Map<number, number>()
    for (const r of byName.values()) counts.set(r.hash, (counts.get(r.hash) ?? 0) + 1)
    const majority = [...counts].find(([, n]) => n > roster.length / 2)?.[0]
    if (majority === undefined) {
      this.figures.inconclusive++
      this.c.say(
        `kvlog: corruption check at revision ${revision}: no hash shared by a majority of the ${roster.length} members (${byName.size} answered)`,
      )
      return []
    }
    const reports = [...byName.values()]
      .filter((r) => r.hash !== majority)
      .map((r) => ({ clusterName: this.c.clusterName, member: r.name, revision, hash: r.hash, majorityHash: majority }))
    if (reports.length > 0) this.figures.mismatches++
    for (const r of reports) {
      this.c.say(
        `kvlog: CORRUPT: member ${r.member}'s copy hashes to ${r.hash} at revision ${revision}, the majority's to ${majority}; restore that member from a snapshot`,
      )
      for (const l of this.listeners) l(r)
    }
    return reports
  }

  /** The answers to one request, collected until `expected` came or the timeout. */
  private async ask(revision: number, expected: number): Promise<DigestReply[]> {
    const inbox = createInbox()
    const replies: DigestReply[] = []
    const sub = this.c.nc.subscribe(inbox, { max: expected })
    // Members that do not answer in time are not counted.
    const timer = setTimeout(() => sub.unsubscribe(), this.c.timeoutMs)
    this.c.nc.publish(this.c.names.digest, encode({ revision } satisfies DigestRequest), { reply: inbox })
    try {
      for await (const m of sub) replies.push(decode<DigestReply>(m.data))
    } finally {
      clearTimeout(timer)
    }
    return replies
  }

  /** Answers the leader once this copy has reached the revision (no answer if it does not in time). */
  private async answer(msg: Msg): Promise<void> {
    try {
      const { revision } = decode<DigestRequest>(msg.data)
      const deadline = Date.now() + this.c.timeoutMs
      while (this.c.view.revision < revision) {
        if (Date.now() > deadline) return
        await new Promise((r) => setTimeout(r, CATCH_UP_POLL_MS))
      }
      const { hash } = await hashState(this.c.view, revision)
      msg.respond(encode({ name: this.c.memberName, revision, hash } satisfies DigestReply))
    } catch {
      // compacted past the revision, or closing: no answer, the check counts fewer members
    }
  }
}
