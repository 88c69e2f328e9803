/**
 * Majority-durable acknowledgements. JetStream acknowledges a publish once a quorum of nats-servers
 * holds it, but nats-server 2.9 fsyncs on a timer: a correlated power loss can take an acknowledged tail.
 * etcd fsyncs every commit on a majority; so does kvlog, one level up: a write is acknowledged only once
 * a majority of the cluster's roster (the members that joined, recorded in the log itself) has applied it
 * to its local copy with an fsync.
 *
 * - Every member publishes its durable applied sequence on a core NATS subject, coalesced (one message
 *   per event-loop turn at most, plus a heartbeat), and records everyone's.
 * - waitQuorum(seq) resolves once a majority of the roster (this member counted too) reports >= seq.
 *   A position counts only with the chain hash it belongs to: a member's (seq, hash) counts once this
 *   member's own copy has the same hash at seq (each message's hash covers the one before, so the same
 *   hash is the same history up to it). A position from another history (a member that applied messages
 *   the stream lost and were not brought back, or a copy from before a restore) counts for nothing, and
 *   one ahead of this member counts once this member gets there. A member whose applier stopped does
 *   not announce.
 * - survey() asks every member for its durable position (request, many replies): a new leader uses it to
 *   find messages the stream lost (tail.ts); fetch() reads a member's kept messages.
 *
 * One member: its own fsync acknowledges. Two members: both must have it (a majority of two), so writes
 * wait while one is down, as with a two-member etcd cluster.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Durability reports".
 */
import { createInbox, type NatsConnection, type Subscription } from 'nats'
import { KvlogError } from '../errors.js'
import { decode, encode } from './messages.js'
import type { ClusterNames } from './options.js'
import type { KeptMessage } from './tail.js'

export interface DurablePosition {
  name: string
  seq: number
  /** messageHash() of message `seq` in this member's copy. */
  hash: string
}

interface FetchRequest {
  from: number
  to: number
}

export interface DurabilityHooks {
  /** The roster as recorded in this member's copy (may not list this member yet). */
  roster(): readonly string[]
  /** Members that apply the log but do not count toward the majority (learners, membership.ts). */
  learners(): readonly string[]
  position(): DurablePosition
  /** Whether this member's applier runs (a stopped one announces nothing). */
  applying(): boolean
  /** Kept messages from..to, as many as one reply may hold (clusterTailReplyBytes). */
  kept(from: number, to: number): Promise<KeptMessage[]>
  observeWait(ms: number): void
}

interface QuorumWaiter {
  seq: number
  resolve(): void
}

const HEARTBEAT_MS = 1000
/** How long a survey waits for the other members once a majority has answered (see survey()). */
const SURVEY_GRACE_MS = 200
/** How often a survey asks again while answers are missing. */
const SURVEY_ASK_AGAIN_MS = 250

export class Durability {
  /** Each member's last announced position. */
  private readonly seen = new Map<string, DurablePosition>()
  /** messageHash() of the messages this member applied, the last `keepHashes` of them, by sequence. */
  private readonly hashes = new Map<number, string>()
  private waiters: QuorumWaiter[] = []
  private subs: Subscription[] = []
  private timer: NodeJS.Timeout | undefined
  private scheduled = false

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: ClusterNames,
    private readonly memberName: string,
    private readonly hooks: DurabilityHooks,
    private readonly keepHashes = 10_000,
  ) {}

  start(): void {
    this.subs.push(
      this.nc.subscribe(this.names.durable, {
        callback: (err, msg) => {
          if (err !== null) return
          try {
            const p = decode<DurablePosition>(msg.data)
            if (typeof p.name === 'string' && typeof p.seq === 'number' && typeof p.hash === 'string') this.record(p)
          } catch {
            // not a position: ignored
          }
        },
      }),
      this.nc.subscribe(this.names.tail, {
        callback: (err, msg) => {
          if (err === null && msg.reply) msg.respond(encode(this.hooks.position()))
        },
      }),
      this.nc.subscribe(`${this.names.tail}.${this.memberName}`, {
        callback: (err, msg) => {
          if (err !== null || !msg.reply) return
          const r = decode<FetchRequest>(msg.data)
          void this.hooks.kept(r.from, r.to).then(
            (kept) => msg.respond(encode({ kept })),
            (e: unknown) => msg.respond(encode({ error: String(e) })),
          )
        },
      }),
    )
    this.timer = setInterval(() => this.announce(), HEARTBEAT_MS)
    this.announce()
  }

  stop(): void {
    clearInterval(this.timer)
    for (const s of this.subs) s.unsubscribe()
    this.subs = []
    for (const w of this.waiters.splice(0)) w.resolve()
  }

  /** This member applied message `seq` (not yet durable), whose messageHash() is `hash`. */
  hashed(seq: number, hash: string): void {
    this.hashes.set(seq, hash)
    this.hashes.delete(seq - this.keepHashes)
  }

  /** This member made `seq` durable: tell the others (coalesced) and count it here. */
  advanced(seq: number): void {
    this.record({ ...this.hooks.position(), seq })
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.announce()
    })
  }

  private announce(): void {
    if (this.nc.isClosed() || !this.hooks.applying()) return
    const p = this.hooks.position()
    this.record(p)
    this.nc.publish(this.names.durable, encode(p))
  }

  /**
   * A member's own reports arrive in order; one restarted with a new copy may report less than before.
   * Waiters are checked on every report: this member's own progress can make a peer's position count.
   */
  private record(p: DurablePosition): void {
    this.seen.set(p.name, p)
    if (this.waiters.length === 0) return
    const durable = this.majorityDurable()
    const ready: QuorumWaiter[] = []
    const waiting: QuorumWaiter[] = []
    for (const w of this.waiters) (w.seq <= durable ? ready : waiting).push(w)
    if (ready.length === 0) return
    this.waiters = waiting
    for (const w of ready) w.resolve()
  }

  /** The members whose majority acknowledges: the roster, this member included, learners not. */
  voters(): string[] {
    const roster = new Set(this.hooks.roster())
    roster.add(this.memberName)
    for (const l of this.hooks.learners()) roster.delete(l)
    return [...roster]
  }

  /**
   * The highest sequence a member of the roster reported durable, whatever its history: that message was
   * in the stream (0: none reported).
   */
  highestReported(): number {
    return Math.max(0, ...this.voters().map((name) => this.seen.get(name)?.seq ?? 0))
  }

  /** What member `name` holds durably of this member's history (0: nothing known). */
  durableOf(name: string): number {
    return this.counted(name)
  }

  quorum(): number {
    return Math.floor(this.voters().length / 2) + 1
  }

  /**
   * What member `name` holds durably of this member's history: its position, if this member's copy has
   * the same hash there; otherwise nothing (0).
   */
  private counted(name: string): number {
    const p = this.seen.get(name)
    if (p === undefined) return 0
    if (name === this.memberName) return p.seq
    return this.hashes.get(p.seq) === p.hash ? p.seq : 0
  }

  /**
   * How far each member of the roster is behind `applied` durably, as this member counts it (a member
   * on another history, or not heard from, is behind by all of it).
   */
  lags(applied: number): Array<{ name: string; lag: number }> {
    return this.voters()
      .sort()
      .map((name) => ({ name, lag: Math.max(0, applied - this.counted(name)) }))
  }

  /** The highest sequence a majority of the roster holds durably, on this member's history. */
  private majorityDurable(): number {
    const voters = this.voters()
    const seqs = voters.map((name) => this.counted(name)).sort((a, b) => b - a)
    return seqs[Math.floor(voters.length / 2)]
  }

  /** Whether a majority of the roster holds message `seq` durably. */
  reached(seq: number): boolean {
    return this.majorityDurable() >= seq
  }

  /**
   * Resolves once a majority of the roster has message `seq` durably; OUTCOME_UNKNOWN after `timeoutMs`
   * (the write is in the log; whether it stays there after a loss of the stream's tail is not known).
   */
  waitQuorum(seq: number, timeoutMs: number): Promise<void> {
    if (this.reached(seq)) {
      this.hooks.observeWait(0)
      return Promise.resolve()
    }
    const started = performance.now()
    return new Promise((resolve, reject) => {
      const w: QuorumWaiter = {
        seq,
        resolve: () => {
          clearTimeout(timer)
          this.hooks.observeWait(performance.now() - started)
          resolve()
        },
      }
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w)
        const have = this.voters().filter((name) => this.counted(name) >= seq)
        reject(
          new KvlogError(
            'OUTCOME_UNKNOWN',
            `the write is in the log but only ${have.length} of ${this.voters().length} members (${have.join(', ') || 'none'}) ` +
              `reported it durable within ${timeoutMs} ms (a majority is needed); its outcome is unknown`,
          ),
        )
      }, timeoutMs)
      this.waiters.push(w)
    })
  }

  /**
   * Every reachable member's durable position: waits until a majority of the roster answered, then a
   * little longer for the others (except those in `absent`: known to have no NATS connection), at most
   * `timeoutMs`. Throws when fewer than a majority answer.
   *
   * Once an answer is past `streamLast` the stream lost its tail, and which member is furthest ahead
   * decides what comes back (refill.ts): then it waits for every expected member until `timeoutMs`, not a
   * moment. After a cold start of the whole cluster the members come up seconds apart, and one left out
   * could be the only one holding the last messages.
   */
  async survey(timeoutMs: number, absent: ReadonlySet<string> = new Set(), streamLast = Infinity): Promise<DurablePosition[]> {
    const voters = new Set(this.voters())
    const expected = [...voters].filter((n) => !absent.has(n))
    const need = this.quorum()
    const answers = new Map<string, DurablePosition>()
    const own = this.hooks.position()
    answers.set(own.name, own)
    const inbox = createInbox()
    let done: () => void = () => undefined
    const finished = new Promise<void>((r) => (done = r))
    let grace: NodeJS.Timeout | undefined
    const counted = () => [...answers.keys()].filter((n) => voters.has(n)).length
    const lostTail = () => [...answers.values()].some((p) => p.seq > streamLast)
    const sub = this.nc.subscribe(inbox, {
      callback: (err, msg) => {
        if (err !== null) return
        const p = decode<DurablePosition>(msg.data)
        answers.set(p.name, p)
        if (counted() >= need && expected.every((n) => answers.has(n))) done()
        else if (lostTail()) clearTimeout(grace)
        else if (counted() >= need && grace === undefined) grace = setTimeout(done, SURVEY_GRACE_MS)
      },
    })
    const deadline = setTimeout(done, timeoutMs)
    const ask = () => this.nc.publish(this.names.tail, new Uint8Array(0), { reply: inbox })
    // Asked again while waiting: a member that subscribes after a request never sees it. (A connection
    // closed meanwhile throws here, in a timer: the deadline ends the survey instead.)
    const again = setInterval(() => {
      try {
        ask()
      } catch {
        // closed: see above
      }
    }, SURVEY_ASK_AGAIN_MS)
    try {
      ask()
      if (counted() >= need && expected.every((n) => answers.has(n))) done()
      await finished
    } finally {
      clearTimeout(deadline)
      clearTimeout(grace)
      clearInterval(again)
      sub.unsubscribe()
    }
    if (counted() < need) {
      throw new Error(
        `only ${counted()} of ${voters.size} members answered (${[...answers.keys()].join(', ')}); a majority is needed to know what the log holds`,
      )
    }
    return [...answers.values()]
  }

  /**
   * Messages from..to from the other members' kept tails (in order, as many as they have): `kept` is
   * empty when none has message `from`, and `unanswered` names the members that did not answer (their
   * tails may hold what the others lack).
   */
  async fetchFromPeers(from: number, to: number, timeoutMs: number): Promise<{ kept: KeptMessage[]; unanswered: string[] }> {
    const out: KeptMessage[] = []
    const unanswered: string[] = []
    const peers = [...new Set([...this.voters(), ...this.seen.keys()])].filter((n) => n !== this.memberName)
    for (const name of peers) {
      for (;;) {
        const next = out.length === 0 ? from : out[out.length - 1].seq + 1
        if (next > to) return { kept: out, unanswered: [] }
        const kept = await this.fetch(name, next, to, timeoutMs).catch(() => {
          unanswered.push(name)
          return [] as KeptMessage[]
        })
        if (kept.length === 0 || kept[0].seq !== next) break
        out.push(...kept)
      }
    }
    return { kept: out, unanswered }
  }

  /** Member `name`'s kept messages from..to (a prefix of them: call again for the rest). */
  async fetch(name: string, from: number, to: number, timeoutMs: number): Promise<KeptMessage[]> {
    const reply = decode<{ kept?: KeptMessage[]; error?: string }>(
      (await this.nc.request(`${this.names.tail}.${name}`, encode({ from, to } satisfies FetchRequest), { timeout: timeoutMs })).data,
    )
    if (reply.error !== undefined) throw new Error(`member ${name}: ${reply.error}`)
    return reply.kept ?? []
  }
}
