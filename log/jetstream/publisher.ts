/**
 * The leader's side of the write path: queued commands (its own members' and forwarded ones) are grouped
 * into one stream message each and published with `Nats-Expected-Last-Sequence` = the last sequence this
 * leader knows, so a publish lands only right after what the leader has applied (the fence).
 *
 * Each publish belongs to the leadership it began in (a term: activate() to deactivate()). When the term
 * ends, the publish stops at its next step and its commands fail; its bytes are never sent under another
 * term's fence. The bytes and the sequence they expect are one pair: a message is rebuilt (new `prev`,
 * new id) only together with a new expected sequence.
 *
 * - Fence rejection (10071, wrong last sequence): nothing was written. Someone else wrote meanwhile (a
 *   previous leader's last publish, or a second member that believed it led): catch up with the stream and
 *   publish the same group again, rebuilt after what the stream holds (the commands are evaluated only when
 *   applied, so this is safe); after a few rejections step down.
 * - Unknown outcome (timeout, connection lost): publish the same bytes with the same Nats-Msg-Id and the
 *   same expected sequence again. JetStream checks duplicates before the fence, so a copy it stored answers
 *   with the original acknowledgement. A fence rejection after an unknown outcome reads the one sequence
 *   the message could have landed on: the same bytes there are published; anything else means it can no
 *   longer land (the stream passed its fence).
 * - Every acknowledgement must name the sequence right after the one the message expected; any other one
 *   means this leader no longer knows where the stream ends: it steps down.
 * - A fence is never below a message this leader stored, this member applied or a member reported
 *   durable: every such message was in the stream, so a fence below it could only land if the stream lost
 *   it, and would put another message at a sequence members applied (their chains break there for good).
 *   A leader that knows of messages past its fence (another leader wrote) catches up before it sends; a
 *   catch-up that finds the stream ending before such a message fails the group and steps down, and the
 *   next leader republishes the lost messages from the members' kept copies before it writes (refill.ts).
 * - A group has one leader lease to be published (every call on the way is bounded by publishTimeoutMs and
 *   by what is left of it); past it the leader steps down, so writes fail over instead of waiting on it.
 *
 * A command that fails says whether it was refused before it could be applied (NOT_APPLIED: retry) or its
 * outcome is unknown (OUTCOME_UNKNOWN). Queued commands carry a deadline; one still queued past it is
 * refused.
 *
 * Flow: the next group is published only once this member has applied all but UNAPPLIED_AHEAD of the
 * messages it published. Each message costs every member one write of its copy whatever its size, so
 * while the copies lag, commands wait in the queue and leave together, in one bigger message, instead of
 * as many small ones that would queue up unapplied on every member.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Fence".
 */
import type { JetStreamClient } from 'nats'
import { KvlogError } from '../errors.js'
import { failpointAsync, failpointsOn } from '../failpoints.js'
import { within } from '../within.js'
import { apiErrorCode } from './connection.js'
import { encode, isSolo, messageHash, type LogMessage, type Tagged } from './messages.js'

interface Pending {
  tagged: Tagged
  bytes: number
  /** Date.now() past which it is refused rather than published. */
  deadline: number
  /** performance.now() when it was queued. */
  queued: number
  done(err: unknown, seq?: number): void
}

export interface PublisherHooks {
  epoch(): number
  /**
   * Waits until this member has applied everything in the stream; returns the stream's last sequence and
   * the hash of the message there (the next message's `prev`). Throws when the stream ends before what
   * this member had applied when it was called.
   */
  catchUp(): Promise<{ seq: number; hash: string }>
  /** Fenced out for good, or the outcome could not be settled: stop leading (`why`: for the log). */
  stepDown(why: string): void
  /** The commit timestamp of the last applied message (a new message's is never below it). */
  lastTimestamp(): number
  /** Resolves once this member has applied message `seq` (or after a while, whether or not it has). */
  applied(seq: number): Promise<void>
  /** messageHash() of the last applied message (the first message's `prev` after activate()). */
  lastHash(): string
  observe(event: 'publish' | 'fence' | 'queue', ms: number): void
  /**
   * The highest sequence known to have been in the stream: the last one this member applied, or one a
   * member reported durable.
   */
  knownLast(): number
  /** The stream's message at `seq`, or undefined when it holds none there (throws when it cannot tell). */
  messageAt(seq: number): Promise<Uint8Array | undefined>
  /**
   * The stream acknowledged `data`, published as `msgID`, at `seq` (a new message, not a duplicate): a
   * quorum of its servers stored it there. Called before the group's callers are answered.
   */
  stored(seq: number, data: Uint8Array, msgID: string): void
}

export interface PublisherOptions {
  subject: string
  memberName: string
  publishTimeoutMs: number
  /** A group not published within this long (ms; the leader lease) makes the leader step down. */
  groupDeadlineMs: number
  maxGroupCommands: number
  maxGroupBytes: number
  /** A line per publish attempt and per outcome (absent: none are built). */
  debug?: (line: string) => void
}

/** Published messages this member may not have applied yet when it publishes the next one. */
const UNAPPLIED_AHEAD = 1
const FENCE_RETRIES = 3

export class Publisher {
  private queue: Pending[] = []
  private running = false
  private active = false
  private lastSeq = 0
  private lastTs = 0
  private lastHash = ''
  private count = 0
  /** Grows with every activate() and deactivate(): a publish runs only while its term is current. */
  private term = 0
  /** Publishes whose outcome was unknown at first (a metric). */
  unknownOutcomes = 0

  constructor(
    private readonly js: JetStreamClient,
    private readonly o: PublisherOptions,
    private readonly hooks: PublisherHooks,
  ) {}

  /** Starts publishing after `lastSeq` (the stream's last sequence, applied by this member). */
  activate(lastSeq: number): void {
    this.lastSeq = lastSeq
    this.lastTs = this.hooks.lastTimestamp()
    this.lastHash = this.hooks.lastHash()
    this.active = true
    this.term++
    this.kick()
  }

  /** Stops; every queued command fails with NOT_APPLIED, a publish under way stops at its next step. */
  deactivate(): void {
    this.active = false
    this.term++
    for (const p of this.queue.splice(0)) p.done(notLeader())
  }

  get leading(): boolean {
    return this.active
  }

  /** Resolves with the sequence of the message that holds the command, once the stream has stored it. */
  enqueue(tagged: Tagged, bytes: number, deadline: number): Promise<number> {
    if (!this.active) return Promise.reject(notLeader())
    return new Promise((resolve, reject) => {
      this.queue.push({
        tagged,
        bytes,
        deadline,
        queued: performance.now(),
        done: (err, seq) => (err === undefined ? resolve(seq!) : reject(err)),
      })
      this.kick()
    })
  }

  private kick(): void {
    if (this.running || !this.active || this.queue.length === 0) return
    this.running = true
    setImmediate(() => void this.run())
  }

  private take(): Pending[] {
    const now = Date.now()
    const late = this.queue.filter((p) => p.deadline <= now)
    if (late.length > 0) {
      this.queue = this.queue.filter((p) => p.deadline > now)
      for (const p of late) p.done(refused("its deadline passed while it waited in the leader's queue"))
      if (this.queue.length === 0) return []
    }
    if (isSolo(this.queue[0].tagged.cmd)) return this.queue.splice(0, 1)
    let n = 0
    let bytes = 0
    while (n < this.queue.length && n < this.o.maxGroupCommands && !isSolo(this.queue[n].tagged.cmd)) {
      if (n > 0 && bytes + this.queue[n].bytes > this.o.maxGroupBytes) break
      bytes += this.queue[n].bytes
      n++
    }
    const group = this.queue.splice(0, n)
    const taken = performance.now()
    for (const p of group) this.hooks.observe('queue', taken - p.queued)
    return group
  }

  private async run(): Promise<void> {
    try {
      while (this.active && this.queue.length > 0) {
        if (this.lastSeq > UNAPPLIED_AHEAD) await this.hooks.applied(this.lastSeq - UNAPPLIED_AHEAD)
        if (!this.active || this.queue.length === 0) continue
        const group = this.take()
        if (group.length > 0) await this.publish(group)
      }
    } finally {
      this.running = false
      this.kick()
    }
  }

  private async publish(group: Pending[]): Promise<void> {
    const term = this.term
    const current = () => this.active && this.term === term
    const deadline = Date.now() + this.o.groupDeadlineMs
    const ts = Math.max(Date.now(), this.lastTs, this.hooks.lastTimestamp())
    const id = `${this.o.memberName}.${this.hooks.epoch()}.${++this.count}`
    let message: LogMessage = { v: 1, ts, epoch: this.hooks.epoch(), prev: this.lastHash, cmds: group.map((p) => p.tagged) }
    // What is sent: the bytes, the sequence they expect, their id. Changed only all together.
    let attempt = { data: encode(message), expect: this.lastSeq, msgID: `${id}.0` }
    let fenced = 0
    // An earlier send of `attempt` may have been stored (no answer came).
    let maybeStored = false
    let lastError = ''
    for (;;) {
      if (!current() || Date.now() >= deadline) {
        const why = !current() ? 'this member stopped leading' : 'the log did not store it within one leader lease'
        this.fail(group, maybeStored ? unknownOutcome(`${why} (${lastError})`) : refused(why), current())
        return
      }
      const started = performance.now()
      if (failpointsOn) await failpointAsync('beforePublish')
      const debug = this.o.debug
      debug?.(
        `kvlog publish: ${this.o.memberName} epoch ${message.epoch} term ${term} sends ${attempt.msgID} expecting last sequence ${attempt.expect}` +
          ` (prev ${message.prev || "''"}, bytes ${messageHash(attempt.data)}, ${group.length} commands${maybeStored ? ', again after no answer' : ''})`,
      )
      try {
        // What a member applied was in the stream: a fence below it lands only if the stream lost it.
        const known = this.hooks.knownLast()
        if (known > attempt.expect) throw new KnownPastFence(known, attempt.expect)
        const ack = await this.js.publish(this.o.subject, attempt.data, {
          msgID: attempt.msgID,
          expect: { lastSequence: attempt.expect },
          timeout: this.bounded(deadline),
        })
        this.hooks.observe('publish', performance.now() - started)
        debug?.(`kvlog publish: ${attempt.msgID} acknowledged at sequence ${ack.seq}${ack.duplicate ? ' (duplicate)' : ''}`)
        if (ack.seq !== attempt.expect + 1) {
          this.fail(group, unknownOutcome(`the log acknowledged sequence ${ack.seq}, expected ${attempt.expect + 1}`), current())
          return
        }
        if (!current()) {
          // Stored, but this term is over: the callers learn of it when their copies apply it.
          for (const p of group) p.done(undefined, ack.seq)
          return
        }
        if (!ack.duplicate) this.hooks.stored(ack.seq, attempt.data, attempt.msgID)
        this.published(group, ack.seq, ts, attempt.data)
        return
      } catch (err) {
        lastError = (err as Error).message
        debug?.(`kvlog publish: ${attempt.msgID} failed: ${errorCodeOf(err)} ${lastError}`)
        if (apiErrorCode(err) === 10071 || err instanceof KnownPastFence) {
          if (!(err instanceof KnownPastFence)) this.hooks.observe('fence', performance.now() - started)
          if (maybeStored) {
            // Stored at the one sequence it expected, or never: it cannot land past the fence.
            const there = await within(this.hooks.messageAt(attempt.expect + 1), this.bounded(deadline), noAnswer).catch(() => null)
            debug?.(
              `kvlog publish: ${attempt.msgID} after no answer: sequence ${attempt.expect + 1} holds ${there === null ? '(no answer)' : there === undefined ? 'nothing' : messageHash(there)}`,
            )
            if (there === null) continue // cannot tell yet: the same attempt again settles it
            if (there !== undefined && Buffer.compare(Buffer.from(there), attempt.data) === 0) {
              if (current()) this.published(group, attempt.expect + 1, ts, attempt.data)
              else for (const p of group) p.done(undefined, attempt.expect + 1)
              return
            }
            maybeStored = false
          }
          if (++fenced > FENCE_RETRIES || !current()) {
            this.fail(group, refused('another leader wrote to the log'), current())
            return
          }
          try {
            // Known to have been in the stream before the catch-up reads its end (later ones may follow it).
            const known = Math.max(this.lastSeq, this.hooks.knownLast())
            const { seq: last, hash } = await within(this.hooks.catchUp(), this.bounded(deadline), noAnswer)
            if (!current()) continue
            debug?.(`kvlog publish: ${attempt.msgID} fenced out; caught up with the stream at sequence ${last}`)
            if (last < known) {
              // The stream lost a message this leader stored or a member applied: writing after `last`
              // would put other messages at sequences members applied. The next leader republishes them
              // from the members' kept copies (refill.ts).
              this.fail(group, refused(`the log ends at sequence ${last}, before message ${known} that it held`), current())
              return
            }
            this.lastSeq = last
            // The message now follows another one: same commands, new `prev`, new id.
            this.lastHash = hash
            message = { ...message, prev: this.lastHash }
            attempt = { data: encode(message), expect: last, msgID: `${id}.${fenced}` }
          } catch {
            this.fail(group, refused('this member could not catch up with the log'), current())
            return
          }
          continue
        }
        // No answer: maybe stored. The same attempt again is deduplicated if it was.
        if (!maybeStored) this.unknownOutcomes++
        maybeStored = true
        await new Promise((r) => setTimeout(r, 50))
      }
    }
  }

  /** A call's timeout: publishTimeoutMs, or what is left until `deadline` if less. */
  private bounded(deadline: number): number {
    return Math.max(50, Math.min(this.o.publishTimeoutMs, deadline - Date.now()))
  }

  private published(group: Pending[], seq: number, ts: number, data: Buffer): void {
    this.lastSeq = seq
    this.lastTs = ts
    this.lastHash = messageHash(data)
    for (const p of group) p.done(undefined, seq)
  }

  /** Fails the group; steps down only for the term the publish began in (`stepDown`: it is current). */
  private fail(group: Pending[], err: KvlogError, stepDown: boolean): void {
    for (const p of group) p.done(err)
    if (stepDown) this.hooks.stepDown(`a group of writes failed: ${err.message}`)
  }
}

const noAnswer = () => new Error('no answer in time')

/** A publish not sent: a member applied messages past its fence, so the stream moved on meanwhile. */
class KnownPastFence extends Error {
  constructor(known: number, expect: number) {
    super(`sequence ${known} was applied, past the fence at ${expect}`)
  }
}

/** A failed publish's code for the debug line: JetStream's error code, else the client's. */
function errorCodeOf(err: unknown): string {
  if (err instanceof KnownPastFence) return 'not sent:'
  const api = apiErrorCode(err)
  if (api !== undefined) return `JetStream error ${api}`
  const code = (err as { code?: unknown }).code
  return code === undefined ? 'no code' : `code ${String(code)}`
}

/** Nothing was written: the write can be sent again as it is. */
export function refused(why: string): KvlogError {
  return new KvlogError('NOT_APPLIED', `the write was not applied: ${why}; retry`)
}

/** The write may have been applied or not. */
export function unknownOutcome(why: string): KvlogError {
  return new KvlogError('OUTCOME_UNKNOWN', `the write's outcome is unknown: ${why}; read before retrying`)
}

export function notLeader(): KvlogError {
  return refused('this member does not lead (any more)')
}
