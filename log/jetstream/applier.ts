/**
 * Applies the cluster's stream to this member's copy, in stream order:
 *
 * - a batch of writes goes through Replica.applyReplicated (../replica.ts): one LevelDB batch with the message's
 *   timestamp that also records the message's sequence (APPLIED_MARKER) and keeps its bytes (tail.ts), so
 *   a restart resumes right after the last applied message, never replays it twice, and never replays
 *   the history from the start;
 * - a solo command (compaction, meta record, alarm, join: idempotent) is applied, then its sequence
 *   recorded.
 * Messages are handed to the copy's writer as they arrive (those delivered while the stream already holds
 * the next one are held back until it comes, up to clusterApplyHoldMax), without waiting for the ones before: those
 * handed over while a run is being written are written together as the next run, one synced LevelDB batch
 * (each message keeps its own revisions, timestamp and tail slot; the marker ends at the run's last). Each
 * message is durable when applied, which advances `durable`; durability.ts reports it to the others.
 *
 * The leader also hands over each message the stream acknowledged to it, as soon as the acknowledgement
 * comes, when it follows the last message submitted (published()): a quorum of the stream's servers
 * stored those bytes at that sequence, so its writes wait for that quorum and not for the one server that
 * holds its consumer (lost, stopped, or holding a history the quorum does not). The consumer's delivery of
 * the same sequence later must be the same bytes.
 *
 * A delivered message that does not fit this copy (another message at a sequence applied here, or one
 * that does not follow the last one) is looked up at the stream's leader: when the leader holds what this
 * copy holds there (or a message that follows it), the consumer's nats-server holds another history than
 * the stream's quorum (a replica that came back from a pause with a message the others never stored) and
 * the consumer is made again; otherwise this copy is off the stream's history and the applier stops.
 *
 * Members that submitted a command wait on its id (`rid`) and get the result of this member's own
 * application. A gap in the sequences (messages deleted or purged before this member applied them) is
 * filled from other members' kept tails, checked against the chain; if none keeps them the applier stops:
 * applying past it would fork the copy, so the member stays not ready until it is restored. A message at
 * a sequence already applied must be the bytes applied there.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Records in each copy".
 */
import {
  AckPolicy,
  DeliverPolicy,
  nanos,
  type ConsumerInfo,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
} from 'nats'
import { KvlogError } from '../errors.js'
import { apiErrorCode } from './connection.js'
import { within } from '../within.js'
import { failpoint, failpointsOn } from '../failpoints.js'
import type { Replica, ReplicatedResult, ReplicatedWrite } from '../replica.js'
import type { CompactResult } from '../types.js'
import { decodeMessage, isSolo, messageHash, type LogMessage, type SoloCommand } from './messages.js'
import type { ClusterMetrics } from './metrics.js'
import type { ClusterNames } from './options.js'
import { APPLIED_MARKER, INCARNATIONS, MEMBERSHIP, ROSTER, type AppliedMarker } from './records.js'
import { joined, left, NO_MEMBERSHIP, updated, type Membership } from './membership.js'
import { checkChain, type KeptMessage, type TailStore } from './tail.js'

/**
 * The consumer's pull requests expire after this long, and the nats client expects an idle heartbeat
 * every half of it.
 */
const CONSUMER_EXPIRES_MS = 5000
/** A log line every this many tries of a hole fill. */
const FILL_RETRY_SAY_EVERY = 10
const MSG_ID_HEADER = 'Nats-Msg-Id'
/** Messages read from the stream's leader at once while the consumer is made again. */
const READ_AHEAD = 16
/** Between two reads from the stream's leader that found nothing new, while the consumer is made again. */
const READ_AGAIN_MS = 50
/** Between two look-ups of a message at the stream's leader while it does not answer. */
const CONFIRM_RETRY_MS = 100
/** The hashes of the last this many messages submitted, to compare a later delivery of one without reading the tail. */
const RECENT_HASHES = 1024

/**
 * The applier's settings (config/schema.ts documents each):
 * - maxAhead: messages submitted to the copy and not yet applied, at most (the consumer's pulls wait beyond it);
 * - holdMax: delivered messages held back, at most, while the stream holds more: a message that arrives
 *   just after one was handed over would wait for that one's fsync and then its own, so messages the
 *   stream already holds are handed over together and share one;
 * - stallTimeoutMs: how long the consumer may deliver nothing while the stream holds more before it is made
 *   again from the next sequence (checked every third of it). nats-server places the consumer (one replica)
 *   on any of the stream's servers; when that server is lost the consumer is gone with it, and the nats
 *   client never makes an ordered consumer again on its own, so the applier does;
 * - inactiveMs: a consumer delivers nothing for this long without a client pulling from it, then the
 *   server drops it;
 * - fillRetryMs: how often a hole fill is tried again while a member that may keep the messages does not answer;
 * - confirmTimeoutMs: how long a message the consumer delivered that does not fit the copy is looked up at
 *   the stream's leader while the stream does not answer, before the applier stops.
 */
export interface ApplierSettings {
  maxAhead: number
  holdMax: number
  stallTimeoutMs: number
  inactiveMs: number
  fillRetryMs: number
  confirmTimeoutMs: number
}

/** A consumer this applier made and the client's pulls from it. */
interface Consuming {
  info: ConsumerInfo
  messages: ConsumerMessages
}

type Outcome = PromiseSettledResult<ReplicatedResult | CompactResult | undefined> & { seq?: number }

export interface ApplierHooks {
  /** This member's copy holds everything up to `seq` on disk (fsynced). */
  durable(seq: number): void
  /** This member applied message `seq` (fsynced or not), whose messageHash() is `hash`. */
  hashed(seq: number, hash: string): void
  /**
   * Messages from..to kept by other members (for holes in the stream), in order, maybe fewer; and the
   * members that did not answer.
   */
  fill(from: number, to: number): Promise<{ kept: KeptMessage[]; unanswered: string[] }>
  /** The stream's last sequence, asked now. */
  streamLast(): Promise<number>
  /** Resolves once the copy's disk has room for the next message (disk-space.ts). */
  room(): Promise<void>
}

interface SeqWaiter {
  seq: number
  resolve(): void
}

export class Applier {
  applied = 0
  /** The stream's last sequence as last seen (by a look-up or a delivered message). */
  streamLast = 0
  lastTimestamp = 0
  /** messageHash() of the last applied message ('' before the first). */
  lastHash = ''
  /** Why the applier stopped, if it did. */
  failure: Error | undefined
  /** The last message handed to the copy (applied, or being applied), and its hash. */
  private submitted = 0
  private submittedHash = ''
  /** Who published the last message handed to the copy: its epoch and Nats-Msg-Id ('' when unknown). */
  private submittedBy = { epoch: 0, msgID: '' }
  /** The last sequence fsynced in the copy, and its message's hash. */
  durable = 0
  durableHash = ''
  /** The members that joined (ROSTER). */
  roster: string[] = []
  /** Their incarnations (INCARNATIONS). */
  incarnations: Record<string, string> = {}
  /** Members added and not started, learners, and added members' ids (MEMBERSHIP). */
  membership: Membership = NO_MEMBERSHIP
  /** The sequence of the last join or leave that changed the roster here since the start. */
  rosterChangedAt = 0
  private readonly waiters = new Map<string, (outcome: Outcome) => void>()
  private seqWaiters: SeqWaiter[] = []
  private current: Consuming | undefined
  private stopping = false
  /** Raised each time the consumer is replaced: a loop of an older generation applies nothing more. */
  private generation = 0
  /** The last message submitted, once applied (settles without throwing): a replacement waits for it. */
  private applying: Promise<void> = Promise.resolve()
  private watchdog: NodeJS.Timeout | undefined
  /** When the applier last applied a message, or made its consumer (ms). */
  private progressAt = Date.now()
  private checking = false
  /** A consumer is being made (consume() waits for it). */
  private making = false
  /** messageHash() of the last RECENT_HASHES messages submitted, by sequence. */
  private readonly recentHashes = new Map<number, string>()

  constructor(
    /** JetStream calls with the data path's timeout (natsCallTimeout), so a lost server stalls none for long. */
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: ClusterNames,
    private readonly view: Replica,
    private readonly metrics: ClusterMetrics,
    private readonly say: (line: string) => void,
    private readonly tail: TailStore,
    private readonly hooks: ApplierHooks,
    private readonly settings: ApplierSettings,
  ) {}

  async start(): Promise<void> {
    const marker = (await this.view.readMeta(APPLIED_MARKER)) as AppliedMarker | undefined
    this.applied = marker?.seq ?? 0
    this.lastTimestamp = marker?.ts ?? 0
    this.lastHash = marker?.hash ?? genesisHash(this.view)
    this.streamLast = this.applied
    this.durable = this.applied
    this.durableHash = this.lastHash
    this.submitted = this.applied
    this.submittedHash = this.lastHash
    this.roster = ((await this.view.readMeta(ROSTER)) as string[] | undefined) ?? []
    this.incarnations = ((await this.view.readMeta(INCARNATIONS)) as Record<string, string> | undefined) ?? {}
    this.membership = ((await this.view.readMeta(MEMBERSHIP)) as Membership | undefined) ?? NO_MEMBERSHIP
    await this.consume()
    this.watchdog = setInterval(() => void this.checkStalled(), Math.max(1, Math.floor(this.settings.stallTimeoutMs / 3)))
  }

  /**
   * Makes the consumer from the next sequence and starts applying from it. Two are made at once and the
   * first ready is kept (the other is closed and deleted): a request to a server that is gone, or to a
   * stream whose leader is being elected, waits its whole timeout, while the other may land elsewhere.
   */
  private async consume(generation = this.generation): Promise<void> {
    const from = this.submitted + 1
    const attempts = [this.makeConsumer(from), this.makeConsumer(from)]
    this.making = true
    const first = await Promise.any(attempts)
      .catch((err: AggregateError) => {
        throw new Error(`making the log consumer failed: ${String(err.errors[0])}`)
      })
      .finally(() => (this.making = false))
    for (const a of attempts)
      void a.then(
        (c) => c !== first && this.discard(c),
        () => undefined,
      )
    if (generation !== this.generation || this.stopping) {
      // Made after the watchdog gave up on it and made a newer one (or the applier stops): not used.
      this.discard(first)
      return
    }
    this.current = first
    this.progressAt = Date.now()
    this.metrics.consumerMade(first.info.cluster?.leader ?? '')
    this.say(`kvlog: the log's consumer from sequence ${from} is on nats-server ${first.info.cluster?.leader ?? '(not reported)'}`)
    void this.run(first.messages, generation)
  }

  /** One ephemeral consumer of the stream from `from`, delivering without acknowledgements, and its pulls. */
  private async makeConsumer(from: number): Promise<Consuming> {
    const info = await this.jsm.consumers.add(this.names.stream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: from,
      ack_policy: AckPolicy.None,
      max_deliver: 1,
      mem_storage: true,
      num_replicas: 1,
      inactive_threshold: nanos(this.settings.inactiveMs),
    })
    try {
      const consumer = await this.js.consumers.get(this.names.stream, info.name)
      return { info, messages: await consumer.consume({ max_messages: this.settings.maxAhead, expires: CONSUMER_EXPIRES_MS }) }
    } catch (err) {
      void this.jsm.consumers.delete(this.names.stream, info.name).catch(() => undefined)
      throw err
    }
  }

  /** Stops a consumer's pulls (the client's loop for it ends) and deletes it; neither is waited for. */
  private discard(c: Consuming | undefined): void {
    if (c === undefined) return
    void c.messages.close().catch(() => undefined)
    void this.jsm.consumers.delete(this.names.stream, c.info.name).catch(() => undefined)
  }

  /**
   * Replaces the consumer with one from the next sequence. The old one is not waited for: a consumer
   * whose nats-server is gone may never close. Its loop applies nothing more once the message it is
   * applying (if any) is done, which is awaited, so two loops never apply at once.
   */
  private async replaceConsumer(): Promise<void> {
    const generation = ++this.generation
    const old = this.current
    this.current = undefined
    this.making = true
    await this.applying
    this.discard(old)
    void this.readWhileRemaking(generation)
    await this.consume(generation)
  }

  /**
   * While the consumer is being made again (which waits for JetStream's meta leader, itself elected anew
   * when its server was lost), the next messages are read one by one from the stream's leader, up to
   * READ_AHEAD at a time, and applied as a consumer's would be: a member whose consumer's server is gone
   * goes on applying as long as the stream has a leader. Reads on (every READ_AGAIN_MS once caught up or
   * when a read fails, then one message at a time until one is there) until a consumer is made or a newer
   * replacement begins.
   */
  private async readWhileRemaking(generation: number): Promise<void> {
    const remaking = () => !this.stopping && this.failure === undefined && this.generation === generation && this.current === undefined
    // One message at a time while the stream holds nothing new (and at first), READ_AHEAD while it does.
    let ahead = 1
    while (remaking()) {
      const from = this.submitted + 1
      let stepped = 0
      try {
        const read = await Promise.all(
          Array.from({ length: ahead }, (_, i) =>
            this.jsm.streams.getMessage(this.names.stream, { seq: from + i }).then(
              (m) => m,
              (err: unknown) => {
                // 10037: no message there (the stream ends before it).
                if (apiErrorCode(err) === 10037) return undefined
                throw err
              },
            ),
          ),
        )
        for (const m of read) {
          if (m === undefined || !remaking()) break
          await this.step(m.seq, m.data, m.header?.get(MSG_ID_HEADER) ?? '')
          stepped++
        }
      } catch (err) {
        // A message that does not fit the copy: the consumer's delivery settles it (the look-up at the
        // stream's leader, or the stop). No answer (the stream's leader being elected): read again.
        if (err instanceof ConsumerMismatch) return
      }
      if (stepped > 0) this.metrics.readWhileRemaking(stepped)
      // Caught up, or nothing read: look again shortly.
      if (stepped < ahead) await new Promise((r) => setTimeout(r, READ_AGAIN_MS))
      ahead = stepped > 0 ? READ_AHEAD : 1
    }
  }

  /** Nothing applied for the stall timeout while the stream holds more: make the consumer again. */
  private async checkStalled(): Promise<void> {
    if (this.checking || this.stopping || this.failure !== undefined) return
    if (this.current === undefined && !this.making) {
      // A replacement that failed (no consumer made in time): try again, whatever the reads meanwhile applied.
      this.checking = true
      await this.replaceConsumer()
        .catch(() => undefined)
        .finally(() => (this.checking = false))
      return
    }
    if (Date.now() - this.progressAt < this.settings.stallTimeoutMs) return
    this.checking = true
    const before = this.applied
    try {
      const last = await this.hooks.streamLast()
      // Caught up: the next look-up comes one stall timeout from now, so an idle member asks that often at most.
      if (last <= this.applied) this.progressAt = Date.now()
      if (last <= this.applied || this.applied !== before || this.stopping) return
      this.say(
        `kvlog: the log's consumer delivered nothing for ${Date.now() - this.progressAt} ms while the stream holds up to ${last} (applied ${this.applied}); making it again`,
      )
      if (!this.stopping && this.failure === undefined) await this.replaceConsumer()
    } catch {
      // NATS unreachable, or no consumer made in time: the next check tries again
    } finally {
      this.checking = false
    }
  }

  private async run(messages: ConsumerMessages, generation: number): Promise<void> {
    const current = () => !this.stopping && generation === this.generation
    let delivered = 0
    // Delivered while the stream already held the next: handed over together with what follows. Dropped
    // with the loop (a replacement consumer starts after the last message submitted and delivers them again).
    const held: Array<{ seq: number; data: Uint8Array; msgID: string }> = []
    try {
      for await (const m of messages) {
        if (!current()) break
        if (this.failure !== undefined) throw this.failure
        if (m.info.deliverySequence !== delivered + 1) {
          // A message lost on its way (the consumer does not resend): not a hole in the stream.
          this.say(`kvlog: the log's consumer skipped a delivery after sequence ${this.submitted}; making it again`)
          void this.replaceConsumer().catch(() => undefined)
          break
        }
        delivered = m.info.deliverySequence
        this.streamLast = Math.max(this.streamLast, m.seq + m.info.pending)
        held.push({ seq: m.seq, data: m.data, msgID: m.headers?.get(MSG_ID_HEADER) ?? '' })
        if (m.info.pending > 0 && held.length < this.settings.holdMax) continue
        for (const h of held.splice(0)) await this.step(h.seq, h.data, h.msgID)
      }
    } catch (err) {
      if (!current()) return
      if (err instanceof ConsumerMismatch && (await this.quorumHoldsCopy(err, current))) {
        if (!current()) return
        this.metrics.consumerForked()
        this.say(
          `kvlog: the log's consumer on nats-server ${this.current?.info.cluster?.leader ?? '(not reported)'} delivered a message ${err.seq} ` +
            `the stream's leader does not hold, which holds this member's history there; making the consumer again`,
        )
        void this.replaceConsumer().catch(() => undefined)
        return
      }
      this.stopApplying(err as Error)
    }
  }

  /**
   * Whether the stream's leader holds, at the sequence a consumer delivered a mismatching message, one that
   * fits this copy: then the consumer's server is the one off the stream's history. Asked again while the
   * stream does not answer (its leader being elected: when a replica goes off the history), for up to
   * confirmTimeoutMs; no answer by then counts as not fitting.
   */
  private async quorumHoldsCopy(mismatch: ConsumerMismatch, current: () => boolean): Promise<boolean> {
    const deadline = Date.now() + this.settings.confirmTimeoutMs
    for (;;) {
      try {
        const stored = await this.jsm.streams.getMessage(this.names.stream, { seq: mismatch.seq })
        return mismatch.fits(stored.data)
      } catch {
        if (!current() || Date.now() + CONFIRM_RETRY_MS >= deadline) return false
        await new Promise((r) => setTimeout(r, CONFIRM_RETRY_MS))
      }
    }
  }

  private stopApplying(err: Error): void {
    if (this.stopping || this.failure !== undefined) return
    this.failure = err
    this.say(`kvlog: member stopped applying the log at sequence ${this.applied}: ${String(err)}`)
  }

  /**
   * One delivered message: checked if applied already, else submitted (after filling a hole before it).
   * Returns once it is submitted; it is applied in order with the messages submitted before it.
   */
  private async step(seq: number, data: Uint8Array, msgID: string): Promise<void> {
    if (seq <= this.submitted) {
      await this.applying
      return this.checkKept(seq, data)
    }
    if (seq !== this.submitted + 1) {
      await this.applying
      await this.fillHole(seq)
    }
    await this.hooks.room()
    if (await this.applyBytes(seq, data, msgID)) return
    // Handed over meanwhile from its acknowledgement (published()), or by a replaced loop: the same bytes?
    await this.applying
    await this.checkKept(seq, data)
  }

  /**
   * A message this member published as leader, acknowledged by the stream at `seq` (not as a duplicate):
   * handed to the copy now if it follows the last message submitted, else left to the consumer.
   */
  async published(seq: number, data: Uint8Array, msgID: string): Promise<void> {
    this.streamLast = Math.max(this.streamLast, seq)
    if (this.stopping || this.failure !== undefined) return
    if (seq > this.submitted + 1) return
    if (seq === this.submitted + 1) {
      const message = decodeMessage(data)
      if (message.prev !== this.submittedHash) return
      await this.hooks.room()
      if (await this.applyBytes(seq, data, msgID, message)) return
    }
    // The consumer delivered it first: a copy holding another message there took one the quorum did not store.
    const hash = this.recentHashes.get(seq)
    if (hash !== undefined && hash !== messageHash(data)) {
      this.stopApplying(
        new Error(
          `this member applied, at stream sequence ${seq}, a message its consumer delivered that the stream's quorum did not store there (the stream acknowledged another): this copy is off the stream's history; restore it`,
        ),
      )
    }
  }

  /**
   * A message this member applied already (republished after the stream lost it, or delivered again):
   * it must be the same bytes, or the stream's history is not the one this copy holds.
   */
  private async checkKept(seq: number, data: Uint8Array): Promise<void> {
    const recent = this.recentHashes.get(seq)
    if (recent !== undefined && recent === messageHash(data)) return
    const kept = await this.tail.get(seq)
    if (kept !== undefined && Buffer.compare(Buffer.from(kept), Buffer.from(data)) === 0) return
    if (kept === undefined)
      throw new Error(
        `the stream holds message ${seq} again, which this member applied long ago (no longer kept to compare): the stream lost messages this member applied; restore the stream`,
      )
    throw new ConsumerMismatch(
      `stream message ${seq} differs from the one this member applied: the stream's history differs from this member's copy; restore the stream`,
      seq,
      (stored) => Buffer.compare(Buffer.from(stored), Buffer.from(kept)) === 0,
    )
  }

  /**
   * Messages applied+1..seq-1 are missing from the stream: apply them from other members' kept tails.
   * While a member that did not answer may keep them (unreachable, restarting), the fill is tried again
   * every fillRetryMs; only once every member answered without them does the applier stop.
   */
  private async fillHole(seq: number): Promise<void> {
    const from = this.applied + 1
    let kept: KeptMessage[]
    for (let tries = 0; ; tries++) {
      const got = await this.hooks.fill(from, seq - 1).catch(() => ({ kept: [] as KeptMessage[], unanswered: ['(NATS)'] }))
      kept = got.kept
      if (kept.length === seq - from || got.unanswered.length === 0 || this.stopping) break
      if (tries % FILL_RETRY_SAY_EVERY === 0) {
        this.say(
          `kvlog: stream sequences ${from}..${seq - 1} are missing and ${got.unanswered.join(', ')} did not answer; trying again every ${this.settings.fillRetryMs} ms`,
        )
      }
      await new Promise((r) => setTimeout(r, this.settings.fillRetryMs))
    }
    if (kept.length !== seq - from) {
      throw new Error(
        `stream sequences ${from}..${seq - 1} are missing (deleted or purged) before this member applied them, and no member keeps them`,
      )
    }
    checkChain(this.applied, this.lastHash, kept, (data) => decodeMessage(data).prev)
    this.say(`kvlog: stream sequences ${from}..${seq - 1} are missing; applied from other members' copies`)
    for (const k of kept) await this.applyBytes(k.seq, k.data)
    await this.applying
  }

  /**
   * Checks that the message follows the last one submitted and submits it. Batch messages go to the copy's
   * writer at once, so those that arrive while a run is being written form the next run (one synced
   * LevelDB batch, log/level/writer.ts). A solo command or a lease grant is applied alone, after
   * everything before it: both read the copy's state when submitted (alarms, lease ids), which must be
   * that of the message before them on every member.
   */
  private async applyBytes(seq: number, data: Uint8Array, msgID = '', message = decodeMessage(data)): Promise<boolean> {
    const alone = message.cmds.some((c) => isSolo(c.cmd) || c.cmd.type === 'leaseGrant')
    if (alone) await this.applying
    if (this.failure !== undefined) throw this.failure
    // Submitted meanwhile: by a replaced loop (the loops hand over while this one waited), or from its
    // acknowledgement (published()).
    if (seq <= this.submitted) return false
    if (message.prev !== this.submittedHash) {
      const copyEnd = this.submittedHash
      this.say(
        `kvlog: stream message ${seq} (epoch ${message.epoch}, id ${msgID || 'unknown'}) follows ${message.prev || 'nothing'}; ` +
          `this member's message ${this.submitted} (epoch ${this.submittedBy.epoch}, id ${this.submittedBy.msgID || 'unknown'}) is ${this.submittedHash || 'nothing'}`,
      )
      void this.describeBreak(seq, data)
      throw new ConsumerMismatch(
        `stream message ${seq} does not follow this member's copy (it follows ${message.prev || 'nothing'}, the copy ends with ${this.submittedHash || 'nothing'}): the stream's history differs from the one this member applied` +
          (seq === 1
            ? ' (a cluster seeded from an imported store is joined from a copy of that store, or from a snapshot once one exists)'
            : ''),
        seq,
        (stored) => Buffer.compare(Buffer.from(stored), Buffer.from(data)) !== 0 && decodeMessage(stored).prev === copyEnd,
      )
    }
    const hash = messageHash(data)
    this.submitted = seq
    this.submittedHash = hash
    this.recentHashes.set(seq, hash)
    if (this.recentHashes.size > RECENT_HASHES) this.recentHashes.delete(this.recentHashes.keys().next().value!)
    this.submittedBy = { epoch: message.epoch, msgID }
    const received = performance.now()
    this.metrics.phase('delivery', Date.now() - message.ts)
    const outcomes = this.write(seq, message, data, hash)
    outcomes.catch(() => undefined) // settled in its turn below
    this.applying = this.applying
      .then(() => outcomes)
      .then((o) => {
        // Nothing after a message that failed is applied (the writer fails them all too).
        if (this.failure !== undefined) return
        this.metrics.phase('apply', performance.now() - received)
        this.applied1(seq, message, hash, o)
      })
      .catch((err: unknown) => this.stopApplying(err as Error))
    if (alone || seq - this.applied >= this.settings.maxAhead) await this.applying
    return true
  }

  /**
   * Says what the stream holds at `seq` - 1 beside what this member applied there, and at `seq` beside what
   * the consumer delivered: the same message before and another one at `seq` mean the consumer's server
   * holds another history than the one the stream's leader answers with; the same bytes at both mean the
   * message at `seq` was published on another `prev`; another message before means this copy holds a
   * message the stream does not.
   */
  private async describeBreak(seq: number, delivered: Uint8Array): Promise<void> {
    const [before, at, kept] = await Promise.all([
      this.storedAt(seq - 1),
      this.storedAt(seq),
      seq > 1 ? this.tail.get(seq - 1).catch(() => undefined) : undefined,
    ])
    const here = kept === undefined ? 'not kept here' : describe(kept, '')
    const server = this.current?.info.cluster?.leader ?? '(not reported)'
    this.say(
      `kvlog: the stream answers message ${seq - 1} with ${before}, applied here as ${here}; ` +
        `and message ${seq} with ${at}, delivered by the consumer on nats-server ${server} as ${describe(delivered, '')}`,
    )
  }

  /** The stream's message at `seq` as its leader answers, described for a log line. */
  private async storedAt(seq: number): Promise<string> {
    if (seq < 1) return 'nothing (before the first)'
    return this.jsm.streams.getMessage(this.names.stream, { seq }).then(
      (m) => describe(m.data, m.header?.get(MSG_ID_HEADER) ?? ''),
      (err: unknown) => `an error (${String(err)})`,
    )
  }

  /** Hands one message to the copy (synced); its outcomes per command. */
  private async write(seq: number, message: LogMessage, data: Uint8Array, hash: string): Promise<Outcome[]> {
    const marker = [{ name: APPLIED_MARKER, value: { seq, ts: message.ts, hash } satisfies AppliedMarker }, this.tail.record(seq, data)]
    const first = message.cmds[0]?.cmd
    if (message.cmds.length === 1 && isSolo(first)) {
      const one = await this.applySolo(first).then(
        (value): Outcome => ({ status: 'fulfilled', value }),
        (reason): Outcome => ({ status: 'rejected', reason }),
      )
      await this.view.applyReplicated(message.ts, [], marker)
      return [one]
    }
    // A transaction is applied without this member's request limits: its submitter checked them before
    // it was sent, and members configured with other limits must reach the same verdict.
    const writes = message.cmds.map((c): ReplicatedWrite => {
      if (isSolo(c.cmd)) throw new Error('a solo command in a batch message')
      return c.cmd.type === 'txn' ? { ...c.cmd, unlimited: true } : c.cmd
    })
    return this.view.applyReplicated(message.ts, writes, marker)
  }

  /** Message `seq` is applied and fsynced: the state moves on and its submitters are answered. */
  private applied1(seq: number, message: LogMessage, hash: string, outcomes: Outcome[]): void {
    if (failpointsOn) failpoint('applierAfterApply')
    this.applied = seq
    this.progressAt = Date.now()
    this.lastTimestamp = message.ts
    this.lastHash = hash
    this.hooks.hashed(seq, hash)
    this.metrics.applied(seq, message.ts)
    this.durable = seq
    this.durableHash = hash
    this.hooks.durable(seq)
    message.cmds.forEach((c, i) => {
      const waiter = this.waiters.get(c.rid)
      if (waiter === undefined) return
      this.waiters.delete(c.rid)
      waiter({ ...outcomes[i], seq })
    })
    if (this.seqWaiters.length > 0 && this.seqWaiters.some((w) => w.seq <= seq)) {
      const ready = this.seqWaiters.filter((w) => w.seq <= seq)
      this.seqWaiters = this.seqWaiters.filter((w) => w.seq > seq)
      for (const w of ready) w.resolve()
    }
  }

  private async applySolo(cmd: SoloCommand): Promise<CompactResult | undefined> {
    switch (cmd.type) {
      case 'compact':
        // The floor is durable when this resolves; the removal goes on in the background on every member.
        return this.view.compact(cmd.revision, { physical: false })
      case 'meta':
        await this.view.writeMeta(cmd.name, cmd.value, cmd.ifRevision === undefined ? undefined : { ifRevision: cmd.ifRevision })
        return undefined
      case 'alarm':
        await this.view.setAlarm(cmd.kind, cmd.active)
        return undefined
      case 'join': {
        const renewed = cmd.incarnation !== undefined && this.incarnations[cmd.name] !== cmd.incarnation
        if (!this.roster.includes(cmd.name)) await this.setRoster([...this.roster, cmd.name])
        else if (renewed) this.rosterChangedAt = this.applied + 1
        if (renewed) await this.setIncarnations({ ...this.incarnations, [cmd.name]: cmd.incarnation! })
        if (cmd.peerUrls !== undefined) await this.setMembership(joined(this.membership, cmd.name, cmd.peerUrls))
        return undefined
      }
      case 'leave':
        if (this.roster.includes(cmd.name)) await this.setRoster(this.roster.filter((n) => n !== cmd.name))
        if (cmd.name in this.incarnations)
          await this.setIncarnations(Object.fromEntries(Object.entries(this.incarnations).filter(([n]) => n !== cmd.name)))
        await this.setMembership(left(this.membership, cmd.name, cmd.id))
        return undefined
      case 'add':
        if (!this.membership.pending.some((p) => p.id === cmd.id))
          await this.setMembership({
            ...this.membership,
            pending: [...this.membership.pending, { id: cmd.id, peerUrls: cmd.peerUrls, learner: cmd.learner }],
          })
        return undefined
      case 'promote':
        await this.setMembership({ ...this.membership, learners: this.membership.learners.filter((l) => l !== cmd.name) })
        return undefined
      case 'update':
        await this.setMembership(updated(this.membership, cmd.name, cmd.id, cmd.peerUrls))
        return undefined
    }
  }

  private async setRoster(roster: string[]): Promise<void> {
    await this.view.writeMeta(ROSTER, roster)
    this.roster = roster
    // Applied as the message after the last applied one.
    this.rosterChangedAt = this.applied + 1
  }

  /** Records a membership change (a change only if it differs): one more change to settle. */
  private async setMembership(membership: Membership): Promise<void> {
    if (JSON.stringify(membership) === JSON.stringify(this.membership)) return
    await this.view.writeMeta(MEMBERSHIP, membership)
    this.membership = membership
    this.rosterChangedAt = this.applied + 1
  }

  private async setIncarnations(incarnations: Record<string, string>): Promise<void> {
    await this.view.writeMeta(INCARNATIONS, incarnations)
    this.incarnations = incarnations
  }

  /** Registers interest in a command's outcome before it is sent (it may be applied before send returns). */
  expect(rid: string): Promise<Outcome> {
    return new Promise((resolve) => this.waiters.set(rid, resolve))
  }

  forget(rid: string): void {
    this.waiters.delete(rid)
  }

  /**
   * The command's result once applied here, with the sequence of its message; OUTCOME_UNKNOWN if that
   * takes too long.
   */
  async result<T>(rid: string, outcome: Promise<Outcome>, timeoutMs: number): Promise<{ value: T; seq: number }> {
    const o = await within(outcome, timeoutMs, () => {
      this.forget(rid)
      return new KvlogError('OUTCOME_UNKNOWN', `the write was sent but not seen in the log within ${timeoutMs} ms; its outcome is unknown`)
    })
    if (o.status === 'rejected') throw o.reason
    return { value: o.value as T, seq: o.seq ?? this.applied }
  }

  /** Resolves once this member has applied `seq`; UNAVAILABLE after `timeoutMs`. */
  waitApplied(seq: number, timeoutMs: number): Promise<void> {
    if (this.applied >= seq) return Promise.resolve()
    if (this.failure !== undefined) return Promise.reject(this.unavailable())
    return new Promise((resolve, reject) => {
      const w: SeqWaiter = {
        seq,
        resolve: () => {
          clearTimeout(timer)
          resolve()
        },
      }
      const timer = setTimeout(() => {
        this.seqWaiters = this.seqWaiters.filter((x) => x !== w)
        reject(
          this.failure !== undefined
            ? this.unavailable()
            : new KvlogError('UNAVAILABLE', `this member has not caught up with the log (applied ${this.applied}, need ${seq}); retry`),
        )
      }, timeoutMs)
      this.seqWaiters.push(w)
    })
  }

  private unavailable(): KvlogError {
    return new KvlogError('UNAVAILABLE', `this member stopped applying the log: ${this.failure?.message ?? ''}`)
  }

  /** Waits (up to `timeoutMs`) until no submitted command is waiting for its application. */
  async drainWaiting(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.waiters.size > 0 && Date.now() < deadline && this.failure === undefined) {
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  async stop(): Promise<void> {
    this.stopping = true
    clearInterval(this.watchdog)
    // The loop ends after the message it is applying; the consumer is not waited for (its server may be gone).
    await this.applying
    this.discard(this.current)
    for (const [rid, waiter] of this.waiters) {
      this.waiters.delete(rid)
      waiter({ status: 'rejected', reason: new KvlogError('CLOSED', 'the store is closed') })
    }
  }
}

/**
 * A delivered message that does not fit this copy; `fits` says whether a message stored at `seq` would
 * (the one this copy holds there, or one that follows the copy's last).
 */
class ConsumerMismatch extends Error {
  constructor(
    message: string,
    readonly seq: number,
    readonly fits: (stored: Uint8Array) => boolean,
  ) {
    super(message)
  }
}

/** A message for a log line: its hash, epoch, `prev` and id. */
function describe(data: Uint8Array, msgID: string): string {
  const m = decodeMessage(data)
  return `${messageHash(data)} (epoch ${m.epoch}, prev ${m.prev || "''"}${msgID === '' ? '' : `, id ${msgID}`})`
}

/**
 * What the stream's first message must name as `prev` for this copy: '' for an empty store, and the
 * store's revisions for one that starts with data (a copy of an imported store seeding a cluster). So a
 * member with an empty data dir never applies a stream that continues an imported history: it would
 * number the same writes from revision 2 instead of etcd's head + 1. It stops at the first message.
 */
export function genesisHash(view: Pick<Replica, 'revision' | 'compactRevision'>): string {
  return view.revision <= 1 && view.compactRevision === 0 ? '' : `seed.${view.revision}.${view.compactRevision}`
}
