/**
 * The leader's side of the write path: queued commands (its own members' and forwarded ones) are grouped
 * into one stream message each and published with `Nats-Expected-Last-Sequence` = the last sequence this
 * leader knows, so a publish lands only right after what the leader has applied (the fence).
 *
 * - Fence rejection (10071, wrong last sequence): nothing was written. Someone else wrote meanwhile (a
 *   previous leader's last publish, or a second member that believed it led): catch up with the stream and
 *   publish the same group again (the commands are evaluated only when applied, so this is safe); after a
 *   few rejections step down.
 * - Unknown outcome (timeout, connection lost): read the stream at the one sequence the fenced publish can
 *   land on (the last one + 1). The same bytes there: published. Another message there: not published
 *   (the retry meets the fence). Nothing there: not published yet; publish the same bytes with the same
 *   Nats-Msg-Id again (a copy the server stores meanwhile is deduplicated, never stored twice). Only when
 *   the stream cannot be read either does the group fail with UNAVAILABLE (outcome unknown) and the
 *   leader step down.
 *
 * Flow: the next group is published only once this member has applied all but UNAPPLIED_AHEAD of the
 * messages it published. Each message costs every member one write of its copy whatever its size, so
 * while the copies lag, commands wait in the queue and leave together, in one bigger message, instead of
 * as many small ones that would queue up unapplied on every member.
 */
import type { JetStreamClient } from 'nats'
import { KvlogError } from '../errors.js'
import { failpointAsync, failpointsOn } from '../failpoints.js'
import { apiErrorCode } from './connection.js'
import { encode, isSolo, messageHash, type LogMessage, type Tagged } from './messages.js'

interface Pending {
  tagged: Tagged
  bytes: number
  done(err: unknown, seq?: number): void
}

export interface PublisherHooks {
  epoch(): number
  /** Waits until this member has applied everything in the stream; returns the stream's last sequence. */
  catchUp(): Promise<number>
  /** Fenced out for good, or the outcome could not be settled: stop leading. */
  stepDown(): void
  /** The commit timestamp of the last applied message (a new message's is never below it). */
  lastTimestamp(): number
  /** Resolves once this member has applied message `seq` (or after a while, whether or not it has). */
  applied(seq: number): Promise<void>
  /** messageHash() of the last applied message (the next message's `prev` after a catch-up). */
  lastHash(): string
  observe(event: 'publish' | 'fence', ms: number): void
  /** The stream's message at `seq`, or undefined when it holds none there (throws when it cannot tell). */
  messageAt(seq: number): Promise<Uint8Array | undefined>
}

export interface PublisherOptions {
  subject: string
  memberName: string
  publishTimeoutMs: number
  maxGroupCommands: number
  maxGroupBytes: number
}

/** Published messages this member may not have applied yet when it publishes the next one. */
const UNAPPLIED_AHEAD = 1
const FENCE_RETRIES = 3
const UNKNOWN_RETRIES = 5

export class Publisher {
  private queue: Pending[] = []
  private running = false
  private active = false
  private lastSeq = 0
  private lastTs = 0
  private lastHash = ''
  private count = 0

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
    this.kick()
  }

  /** Stops; every queued command fails with UNAVAILABLE (none of them was published). */
  deactivate(): void {
    this.active = false
    for (const p of this.queue.splice(0)) p.done(notLeader())
  }

  get leading(): boolean {
    return this.active
  }

  /** Resolves with the sequence of the message that holds the command, once the stream has stored it. */
  enqueue(tagged: Tagged, bytes: number): Promise<number> {
    if (!this.active) return Promise.reject(notLeader())
    return new Promise((resolve, reject) => {
      this.queue.push({ tagged, bytes, done: (err, seq) => (err === undefined ? resolve(seq!) : reject(err)) })
      this.kick()
    })
  }

  private kick(): void {
    if (this.running || !this.active || this.queue.length === 0) return
    this.running = true
    setImmediate(() => void this.run())
  }

  private take(): Pending[] {
    if (isSolo(this.queue[0].tagged.cmd)) return this.queue.splice(0, 1)
    let n = 0
    let bytes = 0
    while (n < this.queue.length && n < this.o.maxGroupCommands && !isSolo(this.queue[n].tagged.cmd)) {
      if (n > 0 && bytes + this.queue[n].bytes > this.o.maxGroupBytes) break
      bytes += this.queue[n].bytes
      n++
    }
    return this.queue.splice(0, n)
  }

  private async run(): Promise<void> {
    try {
      while (this.active && this.queue.length > 0) {
        if (this.lastSeq > UNAPPLIED_AHEAD) await this.hooks.applied(this.lastSeq - UNAPPLIED_AHEAD)
        if (this.active && this.queue.length > 0) await this.publish(this.take())
      }
    } finally {
      this.running = false
      this.kick()
    }
  }

  private async publish(group: Pending[]): Promise<void> {
    const ts = Math.max(Date.now(), this.lastTs, this.hooks.lastTimestamp())
    let message: LogMessage = { v: 1, ts, epoch: this.hooks.epoch(), prev: this.lastHash, cmds: group.map((p) => p.tagged) }
    let data = encode(message)
    const msgID = `${this.o.memberName}.${message.epoch}.${++this.count}`
    let fenced = 0
    let unknown = 0
    for (;;) {
      const started = performance.now()
      if (failpointsOn) await failpointAsync('beforePublish')
      try {
        const ack = await this.js.publish(this.o.subject, data, {
          msgID,
          expect: { lastSequence: this.lastSeq },
          timeout: this.o.publishTimeoutMs,
        })
        this.hooks.observe('publish', performance.now() - started)
        this.published(group, ack.seq, ts, data)
        return
      } catch (err) {
        if (apiErrorCode(err) === 10071) {
          this.hooks.observe('fence', performance.now() - started)
          if (++fenced <= FENCE_RETRIES && this.active) {
            try {
              this.lastSeq = await this.hooks.catchUp()
              // The message now follows another one: same commands and id, new `prev`.
              this.lastHash = this.hooks.lastHash()
              message = { ...message, prev: this.lastHash }
              data = encode(message)
              continue
            } catch {
              // could not catch up: give up below
            }
          }
          this.fail(group, notLeader())
          return
        }
        if (this.active) {
          const there = await this.hooks.messageAt(this.lastSeq + 1).then(
            (bytes) => ({ bytes }),
            () => undefined,
          )
          if (there?.bytes !== undefined && Buffer.compare(Buffer.from(there.bytes), data) === 0) {
            this.published(group, this.lastSeq + 1, ts, data)
            return
          }
          // Another message there: the retry meets the fence. Nothing there: not published yet, though a
          // publish still in flight may land; the retry is deduplicated.
        }
        if (++unknown <= UNKNOWN_RETRIES && this.active) {
          await new Promise((r) => setTimeout(r, 100 * unknown))
          continue
        }
        this.fail(
          group,
          new KvlogError(
            'UNAVAILABLE',
            `the write's outcome is unknown (the log did not answer: ${(err as Error).message}); check before retrying`,
          ),
        )
        return
      }
    }
  }

  private published(group: Pending[], seq: number, ts: number, data: Buffer): void {
    this.lastSeq = Math.max(this.lastSeq, seq)
    this.lastTs = ts
    this.lastHash = messageHash(data)
    for (const p of group) p.done(undefined, seq)
  }

  private fail(group: Pending[], err: KvlogError): void {
    for (const p of group) p.done(err)
    this.hooks.stepDown()
  }
}

export function notLeader(): KvlogError {
  return new KvlogError('UNAVAILABLE', 'this member stopped leading before the write was published; retry')
}
