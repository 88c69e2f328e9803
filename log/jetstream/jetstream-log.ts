/**
 * JetStreamLog: the Log of one member of a kvlog cluster (the protocol: docs/cluster-protocol.md).
 *
 *   write ─▶ (forward to the leader) ─▶ Publisher: one message per group, fenced ─▶ stream (R3)
 *   every member ◀─ Applier: in stream order, into its copy, with the message's timestamp ◀─┘
 *
 * The stream is the source of truth; this member's copy (a Replica, ../replica.ts) is a materialized view of
 * it: reads, history, watches (subscribe) and snapshots are served from it. A write is submitted with a
 * cluster-unique id; the caller is answered when this member applies the message that holds it, with the
 * result of that application (so a read on this member sees the write).
 *
 * Reads are linearizable unless `serializable`: they wait until this member has applied the stream's last
 * sequence as a quorum of its servers confirms it, asked once for all the reads waiting at that moment
 * (ReadBarrier, confirmed-last.ts).
 */
import { randomBytes } from 'node:crypto'
import { headers, type JetStreamManager, type KV, type Msg, type NatsConnection, type NatsError, type Subscription } from 'nats'
import type { AlarmKind, CorruptReport, DeleteOptions, DeleteResponse, Log, PutOptions, PutResponse } from '../backend.js'
import { KvlogError } from '../errors.js'
import type { MetaCondition } from '../meta-condition.js'
import type { Replica, ReplicatedResult } from '../replica.js'
import type {
  BytesLike,
  CommitListener,
  CompactResult,
  HistoryOptions,
  HistoryResult,
  KeyValue,
  KvSink,
  LeaseGrant,
  LeaseTimeToLive,
  LogStatus,
  RangeOptions,
  RangeResult,
  RangeSummary,
  SnapshotStream,
  TxnRequest,
  TxnResult,
} from '../types.js'
import { canWrite, checkLeaseId, normalizeTxn } from '../validate.js'
import { deleteResponse, oneOpTxn, putResponse } from '../write-results.js'
import { Applier } from './applier.js'
import { DiskSpace } from './disk-space.js'
import { confirmedLast, confirmedLastWithin } from './confirmed-last.js'
import { checkAddStrict, checkPeerUrls, checkPromote, checkRemoval, unstartedVoters } from './reconfig-check.js'
import { addedBy, newMemberId, type AddedMember } from './membership.js'
import { apiErrorCode, connectNats, ensureStream, openBucket, watchConnection, whileUnavailable } from './connection.js'
import { Durability } from './durability.js'
import { Election, type MemberRecord } from './election.js'
import { ForwardBatcher, serveBatch, type ForwardReply } from './forward-batch.js'
import { decode, encode, messageHash, type Command, type Tagged } from './messages.js'
import { ClusterMetrics } from './metrics.js'
import { clusterNames, checkName, DEFAULT_JETSTREAM_OPTIONS, type ClusterNames, type JetStreamLogOptions } from './options.js'
import { Publisher, refused } from './publisher.js'
import { ReadBarrier } from './read-barrier.js'
import { copyIsEmpty, openLocalCopy } from './snapshot-restore.js'
import { ownIncarnation } from './incarnation.js'
import { CorruptionCheck } from './corruption-check.js'
import { SnapshotStore } from './snapshot-store.js'
import { Snapshotter } from './snapshotter.js'
import { refillTail } from './refill.js'
import { TailStore } from './tail.js'

export type { JetStreamLogOptions } from './options.js'

const MAX_LEASE_ID = (1n << 63n) - 1n
/** Between two asks of something that did not answer. */
const RETRY_MS = 50
/** On a forwarded write: the milliseconds it may still wait in the leader's queue. */
const WITHIN_HEADER = 'Kvlog-Within'

/**
 * A forwarded write's answer, or OUTCOME_UNKNOWN as soon as this member sees another leader: the one it
 * was sent to (stopped, cut off) may have it and may still publish it, or not; its caller need not wait
 * out the request's timeout to learn that, and its next write goes to the new leader.
 */
async function untilLeaderChange(request: Promise<Msg>, election: Election): Promise<Msg> {
  // Sent while no leader was known: nobody listens there, the request ends "no responders" at once.
  if (election.epoch === 0) return request
  const { changed, cancel } = election.nextChange()
  try {
    return await Promise.race([
      request,
      changed.then(() => {
        request.catch(() => undefined)
        throw new KvlogError(
          'OUTCOME_UNKNOWN',
          'the leader changed while this write was forwarded to it: it may or may not have been applied',
        )
      }),
    ])
  } finally {
    cancel()
  }
}

/** Where the leader of `epoch` takes forwarded writes. */
function forwardSubject(names: ClusterNames, epoch: number): string {
  return `${names.forward}.${epoch}`
}

export async function openJetStreamLog(
  options: Partial<JetStreamLogOptions> & Pick<JetStreamLogOptions, 'natsUrls' | 'memberName' | 'copy'>,
): Promise<JetStreamLog> {
  const o: JetStreamLogOptions = { ...DEFAULT_JETSTREAM_OPTIONS, ...options }
  const names = clusterNames(o.clusterName)
  checkName('member name', o.memberName)
  let closed = false
  const nc = await connectNats(o, () => closed)
  try {
    const jsm = await whileUnavailable(
      'JetStream',
      o,
      () => closed,
      () => nc.jetstreamManager({ timeout: o.clusterRequestTimeout }),
    )
    const stream = await whileUnavailable(
      'the stream',
      o,
      () => closed,
      () => ensureStream(jsm, names, o.natsReplicas),
    )
    const kv = await whileUnavailable(
      'the bucket',
      o,
      () => closed,
      () => openBucket(nc, names, o.natsReplicas, o.leaderLease, o.natsCallTimeout),
    )
    const store = await whileUnavailable(
      'the snapshot store',
      o,
      () => closed,
      () => SnapshotStore.open(nc.jetstream(), names, o.clusterName, o.natsReplicas),
    )
    const say = (line: string) => o.log?.(line)
    const fresh = await copyIsEmpty(o.copy)
    const view = await openLocalCopy({ jsm, store, names, memberName: o.memberName, stream, copy: o.copy, say })
    try {
      const incarnation = await ownIncarnation(view, fresh)
      // The data path's look-ups (the stream's last sequence, one message) wait callTimeoutMs at most.
      const quick = await nc.jetstreamManager({ timeout: o.natsCallTimeout, checkAPI: false })
      const log = new JetStreamLog(o, names, nc, jsm, view, quick)
      log.incarnation = incarnation
      await whileUnavailable(
        'the consumer',
        o,
        () => closed,
        () => log.start(kv),
      )
      log.startSnapshots(store)
      return log
    } catch (err) {
      await view.close()
      throw err
    }
  } catch (err) {
    closed = true
    await nc.close().catch(() => undefined)
    throw err
  }
}

export class JetStreamLog implements Log {
  private closed = false
  private counter = 0
  private readonly boot = randomBytes(4).toString('hex')
  private readonly applier: Applier
  private readonly durability: Durability
  private readonly tail: TailStore
  private readonly publisher: Publisher
  private readonly barrier: ReadBarrier
  /** The free space this member's copy keeps (clusterDiskReserve). */
  readonly disk: DiskSpace
  private election!: Election
  private forwardSubs: Subscription[] = []
  /** A follower's forwarded writes, sent to the leader a turn of the event loop at a time. */
  private readonly forwarding = new ForwardBatcher({
    request: async (payload, timeout) =>
      (await untilLeaderChange(this.nc.request(`${this.leaderSubject()}.batch`, payload, { timeout }), this.election)).data,
    // Half the server's largest message: room for the request's framing and the deadlines.
    maxBytes: () => Math.floor((this.nc.info?.max_payload ?? 1024 * 1024) / 2),
    timeout: (left) => this.forwardTimeout(left),
    sendOne: (bytes, deadline) => this.forward(bytes, deadline),
    refused: () => this.election.suspect(),
    observe: (ms) => this.metrics.observe('forward', ms),
  })
  private expiryTimer: NodeJS.Timeout | undefined
  private leaderSince = 0
  private readonly expiring = new Set<bigint>()
  private snapshotter: Snapshotter | undefined
  /** Answers the leader's corruption checks, and runs them while this member leads. */
  readonly corruption: CorruptionCheck
  readonly metrics = new ClusterMetrics()
  /** What MemberList reports for this member (the server sets it once it listens, if not configured). */
  clientUrls: string[]
  /** This copy's incarnation (incarnation.ts; '' for a copy made before incarnations). */
  incarnation = ''
  /** A membership change asked through this member is in flight. */
  private changingMembers = false

  constructor(
    private readonly o: JetStreamLogOptions,
    private readonly names: ClusterNames,
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    /** The local copy. */
    readonly view: Replica,
    /** For the data path: calls that wait callTimeoutMs at most. */
    private readonly quick: JetStreamManager = jsm,
  ) {
    this.clientUrls = o.clientUrls
    void watchConnection(
      nc,
      (server) => {
        this.metrics.natsDisconnects++
        this.o.log?.(`kvlog: NATS connection to ${server} lost or not answering pings; reconnecting`, 'warn')
      },
      (server) => {
        this.say(`kvlog: NATS connection back, through ${server}`)
        // Absent until the member's election starts (a connection back before that renews nothing).
        this.election?.reconnected()
      },
    ).catch(() => undefined)
    this.disk = new DiskSpace(
      o.copy.dir,
      o.clusterDiskReserve,
      (line) => this.say(line),
      () => this.closed,
    )
    this.tail = new TailStore(view, o.clusterTailMessages)
    this.durability = new Durability(
      nc,
      names,
      o.memberName,
      {
        roster: () => this.applier.roster,
        learners: () => this.learners,
        position: () => ({ name: o.memberName, seq: this.applier.durable, hash: this.applier.durableHash }),
        applying: () => this.applier.failure === undefined,
        kept: (from, to) => this.tail.range(from, Math.min(to, this.applier.durable), o.clusterTailReplyBytes),
        observeWait: (ms) => this.metrics.observe('durable', ms),
      },
      o.clusterTailMessages,
    )
    this.applier = new Applier(
      nc.jetstream({ timeout: o.natsCallTimeout }),
      quick,
      names,
      view,
      this.metrics,
      (line) => this.say(line),
      this.tail,
      {
        durable: (seq) => this.durability.advanced(seq),
        hashed: (seq, hash) => this.durability.hashed(seq, hash),
        fill: (from, to) => this.durability.fetchFromPeers(from, to, o.natsPublishTimeout),
        streamLast: () => this.streamLast(),
        room: () => this.disk.room(),
      },
      {
        maxAhead: o.clusterApplyMaxAhead,
        holdMax: o.clusterApplyHoldMax,
        stallTimeoutMs: o.clusterConsumerStallTimeout,
        inactiveMs: o.clusterConsumerInactiveThreshold,
        fillRetryMs: o.clusterFillRetryInterval,
        confirmTimeoutMs: o.clusterRequestTimeout,
      },
    )
    this.corruption = new CorruptionCheck({
      nc,
      names,
      clusterName: o.clusterName,
      memberName: o.memberName,
      view,
      intervalMs: o.clusterCorruptCheckInterval,
      timeoutMs: o.clusterRequestTimeout,
      isLeading: () => this.isLeading,
      roster: () => this.applier.roster,
      say: (line) => this.say(line),
    })
    const probe = nc.jetstream({ timeout: o.natsCallTimeout })
    this.barrier = new ReadBarrier(
      () =>
        confirmedLastWithin(
          () => confirmedLast(probe, names.subject),
          o.clusterRequestTimeout,
          () => this.closed,
        ).then((last) => {
          this.applier.streamLast = Math.max(this.applier.streamLast, last)
          return last
        }),
      (seq) => this.applier.waitApplied(seq, o.clusterRequestTimeout),
      o.clusterRequestTimeout,
    )
    this.publisher = new Publisher(
      nc.jetstream(),
      {
        subject: names.subject,
        memberName: o.memberName,
        publishTimeoutMs: o.natsPublishTimeout,
        groupDeadlineMs: o.leaderLease,
        maxGroupCommands: o.clusterMaxGroupCommands,
        maxGroupBytes: o.clusterMaxGroupBytes,
        ...(o.debug === true ? { debug: (line: string) => o.log?.(line, 'debug') } : {}),
      },
      {
        epoch: () => this.election.epoch,
        catchUp: async () => {
          // Applied before the stream's end is read: in the stream then, whatever is applied meanwhile.
          const applied = this.applier.applied
          const last = await this.catchUp()
          // The stream is behind this member's copy (it lost its tail while this member led): step down;
          // the next leader republishes the lost messages before writing (refill.ts).
          if (applied > last) throw new Error(`the stream ends at ${last}, before this member's copy`)
          // The hash of message `last` itself: the copy may have applied more since.
          if (this.applier.applied === last) return { seq: last, hash: this.applier.lastHash }
          const kept = await this.tail.get(last)
          if (kept === undefined) throw new Error(`message ${last} is no longer kept in this member's copy`)
          return { seq: last, hash: messageHash(kept) }
        },
        stepDown: (why) => void this.election.stepDown(why),
        lastTimestamp: () => this.applier.lastTimestamp,
        lastHash: () => this.applier.lastHash,
        knownLast: () => Math.max(this.applier.applied, this.durability.highestReported()),
        // Bounded: a copy that stopped applying must not keep the queue from failing over to a leader that can.
        applied: (seq) => this.applier.waitApplied(seq, o.natsPublishTimeout).catch(() => undefined),
        observe: (event, ms) => this.metrics.observe(event, ms),
        // The leader's writes wait for the stream's quorum, not for the server that holds its consumer.
        stored: (seq, data, msgID) => void this.applier.published(seq, data, msgID).catch(() => undefined),
        messageAt: (seq) =>
          this.quick.streams.getMessage(names.stream, { seq }).then(
            (m) => m.data,
            (err: unknown) => {
              // 10037: no message at that sequence.
              if (apiErrorCode(err) === 10037) return undefined
              throw err
            },
          ),
      },
    )
  }

  async start(kv: KV): Promise<void> {
    await this.applier.start()
    // Where the copy starts: a member's position there counts as soon as it is announced.
    this.durability.hashed(this.applier.applied, this.applier.lastHash)
    this.durability.start()
    this.election = new Election(kv, this.nc, this.names.alive, this.o.memberName, this.o.leaderLease, {
      elected: (epoch) => void this.lead(epoch),
      deposed: (why) => this.follow(why),
      member: (): MemberRecord => ({
        name: this.o.memberName,
        clientUrls: this.clientUrls,
        ...(this.o.peerUrls.length > 0 ? { peerUrls: this.o.peerUrls } : {}),
        applied: this.applier.applied,
      }),
      roster: () => this.applier.roster,
      mayLead: () => !this.learners.includes(this.o.memberName),
    })
    this.metrics.leadership = () => ({
      renewalFailures: this.election.renewalFailures,
      stepDowns: this.election.stepDowns,
      leadersSeen: this.election.changes,
      unknownPublishOutcomes: this.publisher.unknownOutcomes,
    })
    this.metrics.copies = () => ({
      applierStopped: this.applier.failure !== undefined,
      diskLow: this.disk.full,
      durableLag: this.durability.lags(this.applier.applied),
    })
    this.metrics.corruption = () => this.corruption.figures
    this.corruption.start()
    await this.election.start()
    void this.join()
  }

  /**
   * Puts this member on the roster (through the log) unless the stream's roster has it as this
   * incarnation: first catches up (the copy may predate a removal), then joins, retried until it is there.
   */
  private async join(): Promise<void> {
    const me = this.o.memberName
    const joined = () => this.applier.roster.includes(me) && (this.incarnation === '' || this.applier.incarnations[me] === this.incarnation)
    for (let caughtUp = false; !this.closed && !(caughtUp && joined());) {
      try {
        if (!caughtUp) {
          await this.catchUp()
          caughtUp = true
        } else
          await this.submit({
            type: 'join',
            name: me,
            ...(this.incarnation === '' ? {} : { incarnation: this.incarnation }),
            ...(this.o.peerUrls.length > 0 ? { peerUrls: this.o.peerUrls } : {}),
          })
      } catch {
        await new Promise((r) => setTimeout(r, 1000))
      }
    }
  }

  /** The leader stores snapshots of its copy and purges the stream below them (snapshotter.ts). */
  startSnapshots(store: SnapshotStore): void {
    this.snapshotter = new Snapshotter(
      this.o,
      this.names,
      this.jsm,
      store,
      this.view,
      {
        leading: () => this.publisher.leading && !this.closed,
        applied: () => this.applier.applied,
        members: () => this.election.members(),
        say: (line) => this.say(line),
      },
      this.metrics.snapshots,
    )
    this.snapshotter.start()
  }

  private say(line: string): void {
    this.o.log?.(line)
  }

  // -------------------------------------------------------------------------------------------------------
  // Leadership

  /**
   * Won the lease: apply everything the stream holds, then accept writes (the publisher's fence starts at
   * the stream's last sequence), restart lease TTLs, serve forwarded writes.
   */
  private async lead(epoch: number): Promise<void> {
    this.metrics.leaderChanges++
    this.say(`kvlog: ${this.o.memberName} leads cluster ${this.o.clusterName} (epoch ${epoch}); catching up`)
    const leads = () => this.election.epoch === epoch && this.election.leading && !this.closed
    try {
      // Applied before the stream's end is read: in the stream then. What is applied after may come from
      // a previous leader's last publish landing meanwhile, past the end read (and is no loss).
      let { appliedBefore, last } = await this.catchUpToLead(leads)
      if (!leads()) return
      // What a majority of members hold durably and the stream lost goes back first, the same bytes.
      const refilled = await refillTail(
        {
          js: this.nc.jetstream(),
          jsm: this.quick,
          names: this.names,
          durability: this.durability,
          tail: this.tail,
          timeoutMs: this.o.clusterRequestTimeout,
          publishTimeoutMs: this.o.natsPublishTimeout,
          absent: new Set(this.election.departed === undefined ? [] : [this.election.departed]),
          say: (line) => this.say(line),
          leading: leads,
        },
        last,
      )
      if (refilled > last) {
        this.metrics.refilled += refilled - last
        ;({ appliedBefore, last } = await this.catchUpToLead(leads))
      }
      if (!leads()) return
      if (appliedBefore > last) {
        // The stream lost messages this member applied: writing after `last` would fork the history.
        throw new Error(
          `the stream ends at sequence ${last} but this member applied up to ${appliedBefore}: refusing to write until the stream is restored`,
        )
      }
      this.leaderSince = Date.now()
      // After everything applied here (at least `last`): the fence and the first message's `prev` agree.
      this.publisher.activate(this.applier.applied)
      // This epoch's own subject: a member that still forwards to an older epoch reaches nobody (no
      // responders) and looks the leader up again, so a deposed leader receives no writes. The shared
      // subject serves members of the previous version during a rolling upgrade (they know no epochs).
      const serve = (err: NatsError | null, msg: Msg) => {
        if (err !== null) return
        const within = Number(msg.headers?.get(WITHIN_HEADER) ?? '')
        const deadline = Date.now() + (Number.isFinite(within) && within > 0 ? within : this.o.clusterRequestTimeout)
        void this.serveForward(msg.data, deadline).then((reply) => msg.respond(encode(reply)))
      }
      const serveMany = (err: NatsError | null, msg: Msg) => {
        if (err !== null) return
        void serveBatch(msg.data, (cmd, deadline) => this.serveForward(cmd, deadline)).then(
          (reply) => msg.respond(reply),
          () => undefined,
        )
      }
      this.forwardSubs = [
        this.nc.subscribe(forwardSubject(this.names, epoch), { callback: serve }),
        this.nc.subscribe(`${forwardSubject(this.names, epoch)}.batch`, { callback: serveMany }),
        this.nc.subscribe(this.names.forward, { queue: 'leader', callback: serve }),
      ]
      this.expiryTimer = setInterval(() => this.expireLeases(), this.o.leaseCheckInterval)
      this.say(`kvlog: ${this.o.memberName} accepts writes at stream sequence ${last}`)
    } catch (err) {
      this.o.log?.(`kvlog: ${this.o.memberName} could not take over: ${String(err)}`, 'warn')
      void this.election.stepDown('it could not take over')
    }
  }

  /**
   * catchUp() for a member that just won the lease, tried again every RETRY_MS while the stream
   * does not answer (its leader being elected after its server was lost) and the member still leads, for
   * up to clusterRequestTimeout: it takes writes as soon as the stream has a leader again, instead of
   * giving the lease up and leaving the next takeover to wait for it to expire. `appliedBefore`: what this
   * member had applied before the stream's end was read (in the stream then).
   */
  private async catchUpToLead(leads: () => boolean): Promise<{ appliedBefore: number; last: number }> {
    const deadline = Date.now() + this.o.clusterRequestTimeout
    for (let said = false; ; said = true) {
      const appliedBefore = this.applier.applied
      try {
        return { appliedBefore, last: await this.catchUp() }
      } catch (err) {
        if (!leads() || Date.now() + RETRY_MS >= deadline) throw err
        if (!said) this.say(`kvlog: ${this.o.memberName} leads but cannot catch up with the log yet (${String(err)}); trying again`)
        await new Promise((r) => setTimeout(r, RETRY_MS))
      }
    }
  }

  private follow(why: string): void {
    this.say(`kvlog: ${this.o.memberName} no longer leads cluster ${this.o.clusterName}: ${why}`)
    this.publisher.deactivate()
    for (const sub of this.forwardSubs.splice(0)) sub.unsubscribe()
    clearInterval(this.expiryTimer)
    this.expiryTimer = undefined
  }

  private async catchUp(): Promise<number> {
    const last = await this.streamLast()
    await this.applier.waitApplied(last, this.o.clusterRequestTimeout)
    return last
  }

  private async streamLast(): Promise<number> {
    const info = await this.quick.streams.info(this.names.stream)
    this.applier.streamLast = Math.max(this.applier.streamLast, info.state.last_seq)
    return info.state.last_seq
  }

  private async serveForward(data: Uint8Array, deadline: number): Promise<ForwardReply> {
    try {
      const tagged = decode<Tagged>(data)
      return { seq: await this.publisher.enqueue(tagged, data.length, deadline) }
    } catch (err) {
      const e = err instanceof KvlogError ? err : new KvlogError('INTERNAL', String(err))
      return { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } }
    }
  }

  /** Leases past their deadline, and past their TTL since this member took over, are revoked through the log. */
  private expireLeases(): void {
    const now = Date.now()
    for (const id of this.view.expiredLeases(now)) {
      const ttl = this.view.leaseTimeToLive(id)
      if (ttl === undefined || this.expiring.has(id) || now < this.leaderSince + ttl.grantedTtl * 1000) continue
      this.expiring.add(id)
      this.submit({ type: 'leaseRevoke', id })
        .catch(() => undefined)
        .finally(() => this.expiring.delete(id))
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // The write path

  /** Replicates a command; resolves with its result once this member has applied it. */
  private async submit(cmd: Command): Promise<ReplicatedResult | CompactResult | undefined> {
    this.checkOpen()
    const started = performance.now()
    const tagged: Tagged = { rid: `${this.o.memberName}.${this.boot}.${++this.counter}`, cmd }
    const applied = this.applier.expect(tagged.rid)
    const bytes = encode(tagged)
    // Past this the command is refused rather than published (it no longer waits in any queue).
    const deadline = Date.now() + this.o.clusterRequestTimeout
    const sent = this.publisher.leading ? this.publisher.enqueue(tagged, bytes.length, deadline) : this.forwarding.forward(bytes, deadline)
    // Done once applied here, whether or not the leader's answer comes (it may die after publishing).
    const first = await Promise.race([applied.then(() => 'applied' as const), sent.then(() => 'sent' as const)]).catch((err: unknown) => {
      this.applier.forget(tagged.rid)
      throw err
    })
    if (first === 'applied') sent.catch(() => undefined)
    // Sent but not yet seen: a live leader publishes within a publish timeout or two; one that died after
    // receiving it may have published it or not. Past this bound the outcome is reported unknown.
    const unknownAfter = Math.min(this.o.clusterRequestTimeout, this.o.leaderLease + 2 * this.o.natsPublishTimeout)
    const { value, seq } = await this.applier.result<ReplicatedResult | CompactResult | undefined>(tagged.rid, applied, unknownAfter)
    // Acknowledged only once a majority of the members has it fsynced in their copies (durability.ts).
    await this.durability.waitQuorum(seq, this.o.clusterRequestTimeout)
    this.metrics.phase('write', performance.now() - started)
    return value
  }

  /** Where the leader this member knows takes forwarded writes. */
  private leaderSubject(): string {
    const leader = this.election.leader
    // A leader of the previous version (rolling upgrade) listens on the shared subject only.
    return leader !== undefined && leader.byEpoch !== true && leader.epoch > 0
      ? this.names.forward
      : forwardSubject(this.names, this.election.epoch)
  }

  /**
   * Sends a command to the current epoch's leader; retries while no leader listens or the leader refused
   * it before publishing (nothing was written), until `deadline`, which travels with it.
   */
  private async forward(bytes: Buffer, deadline: number): Promise<void> {
    for (;;) {
      this.checkOpen()
      if (this.publisher.leading) {
        await this.publisher.enqueue(decode<Tagged>(bytes), bytes.length, deadline)
        return
      }
      const started = performance.now()
      const left = deadline - Date.now()
      try {
        const h = headers()
        h.set(WITHIN_HEADER, String(Math.max(1, left)))
        const request = this.nc.request(this.leaderSubject(), bytes, { timeout: this.forwardTimeout(left), headers: h })
        const reply = decode<ForwardReply>((await untilLeaderChange(request, this.election)).data)
        this.metrics.observe('forward', performance.now() - started)
        if (reply.error !== undefined) {
          // NOT_APPLIED: refused before publishing (leadership ended, queue deadline): safe to send again.
          if (reply.error.code !== 'NOT_APPLIED' || Date.now() >= deadline) {
            throw new KvlogError(reply.error.code as never, reply.error.message, reply.error.details)
          }
          this.election.suspect()
        } else return
      } catch (err) {
        if (err instanceof KvlogError) throw err
        // 503 no responders: no leader listens on this epoch's subject, the request went nowhere. Anything
        // else (timeout) may have been delivered: the caller waits for the command to show up in the log.
        if ((err as { code?: string }).code !== '503') return
        this.election.suspect()
        if (Date.now() >= deadline) throw refused('no leader: the cluster has not elected one (yet)')
      }
      await new Promise((r) => setTimeout(r, RETRY_MS))
    }
  }

  /** A forward request's timeout, for commands that may wait `left` ms more. */
  private forwardTimeout(left: number): number {
    return Math.max(100, Math.min(left, this.o.leaderLease + this.o.natsPublishTimeout))
  }

  private checkOpen(): void {
    if (this.closed) throw new KvlogError('CLOSED', 'the store is closed')
  }

  get revision(): number {
    return this.view.revision
  }

  get compactRevision(): number {
    return this.view.compactRevision
  }

  async txn(request: TxnRequest): Promise<TxnResult> {
    this.checkOpen()
    const txn = normalizeTxn(request, this.view.limits)
    if (!canWrite(txn.success) && !canWrite(txn.failure)) {
      await this.barrier.wait()
      return this.view.txn(request)
    }
    return (await this.submit({ type: 'txn', request })) as TxnResult
  }

  async put(key: BytesLike, value: BytesLike, options: PutOptions = {}): Promise<PutResponse> {
    // The author rides on the transaction, as the single-node engine records it.
    const r = await this.txn(oneOpTxn(options, (op) => ({ ...op, type: 'put', key, value })))
    return putResponse(r)
  }

  async delete(key: BytesLike, options: DeleteOptions = {}): Promise<DeleteResponse> {
    return deleteResponse(await this.txn(oneOpTxn(options, (op) => ({ type: 'delete', key, ...op }))))
  }

  async get(key: BytesLike, options: { revision?: number; serializable?: boolean } = {}): Promise<KeyValue | undefined> {
    return (await this.range(key, options)).kvs[0]
  }

  async range(key: BytesLike, options: RangeOptions = {}): Promise<RangeResult> {
    this.checkOpen()
    if (options.serializable !== true) await this.barrier.wait()
    return this.view.range(key, options)
  }

  async rangeInto(key: BytesLike, options: RangeOptions = {}, sink: KvSink): Promise<RangeSummary> {
    this.checkOpen()
    if (options.serializable !== true) await this.barrier.wait()
    return this.view.rangeInto(key, options, sink)
  }

  async history(key: BytesLike, options: HistoryOptions = {}): Promise<HistoryResult> {
    this.checkOpen()
    await this.barrier.wait()
    return this.view.history(key, options)
  }

  async compact(revision: number, options: { physical?: boolean } = {}): Promise<CompactResult> {
    const r = (await this.submit({ type: 'compact', revision })) as CompactResult
    // Every member removes what is below the floor in the background; this one waits if asked to.
    if (options.physical !== false) await this.view.compactionIdle()
    return r
  }

  async status(): Promise<LogStatus> {
    this.checkOpen()
    const s = await this.view.status()
    const applied = this.applier.applied
    const streamLast = Math.max(this.applier.streamLast, applied)
    return {
      ...s,
      cluster: {
        clusterName: this.o.clusterName,
        member: this.o.memberName,
        role: this.publisher.leading ? 'leader' : 'follower',
        leader: this.election.leader?.member ?? '',
        epoch: this.election.epoch,
        term: this.election.term,
        leaseRenewedAgo: this.election.renewedAgo() ?? null,
        applied,
        streamLast,
        lag: streamLast - applied,
        lagSeconds: streamLast > applied ? Math.max(0, (Date.now() - this.applier.lastTimestamp) / 1000) : 0,
        leaderChanges: this.election.changes,
        roster: [...this.applier.roster],
      },
    }
  }

  /** Whether this member knows a leader now (Election.hasLeader). */
  hasLeader(): boolean {
    return this.election.hasLeader()
  }

  get clusterName(): string {
    return this.o.clusterName
  }

  get memberName(): string {
    return this.o.memberName
  }

  /** Whether this member leads and accepts writes. */
  get isLeading(): boolean {
    return this.publisher.leading
  }

  /** The members whose majority acknowledges writes (durability.ts), as this member's copy has them. */
  get roster(): readonly string[] {
    return this.applier.roster
  }

  /**
   * Takes a member off the roster: its copy no longer counts for acknowledgements. A removed member that
   * runs on is still served but not counted; started again, it joins again.
   */
  async removeMember(name: string, addedId?: string): Promise<void> {
    await this.changeMembers(async (live) => {
      // A member added that never started, or a learner, is part of no majority.
      if (this.o.clusterStrictReconfigCheck && name !== '' && !this.learners.includes(name))
        checkRemoval(this.voters(), live, name, this.o.memberName, unstartedVoters(this.applier.membership))
      return { type: 'leave', name, ...(addedId === undefined ? {} : { id: addedId }) }
    })
  }

  /**
   * Registers a member by its peer URLs before it starts (etcd's MemberAdd); resolves with the id it
   * will have. As etcd's strict reconfiguration check: a voting member only while every voting member is
   * alive and the started ones stay a majority with it, and one learner at a time.
   */
  async addMember(peerUrls: string[], learner: boolean): Promise<string> {
    const id = newMemberId()
    await this.changeMembers((live, records) => {
      checkPeerUrls(peerUrls, this.applier.membership, records)
      if (this.o.clusterStrictReconfigCheck) checkAddStrict(this.voters(), live, this.applier.membership, learner)
      return Promise.resolve({ type: 'add', id, peerUrls, learner })
    })
    return id
  }

  /**
   * Gives a member new peer URLs (etcd's MemberUpdate): `name`, or with `addedId` (name '') a member
   * added that has not started (the member that starts with one of the new URLs takes its place).
   */
  async updateMember(name: string, addedId: string | undefined, peerUrls: string[]): Promise<void> {
    await this.changeMembers((_live, records) => {
      checkPeerUrls(peerUrls, this.applier.membership, records, { name, ...(addedId === undefined ? {} : { id: addedId }) })
      return Promise.resolve({ type: 'update', name, ...(addedId === undefined ? {} : { id: addedId }), peerUrls })
    })
  }

  /** The peer URLs MemberUpdate gave the started member `name`, if any. */
  updatedPeerUrls(name: string): readonly string[] | undefined {
    return this.applier.membership.peerUrls?.[name]
  }

  /** Makes a learner count toward the majority once it holds nearly all the log (etcd's MemberPromote). */
  async promoteMember(name: string): Promise<void> {
    await this.changeMembers(() => {
      const voters = this.o.clusterStrictReconfigCheck ? this.voters().length : undefined
      checkPromote(name, this.applier.membership, this.durability.durableOf(name), this.applier.applied, voters)
      return Promise.resolve({ type: 'promote', name })
    })
  }

  /**
   * One membership change at a time, as etcd's raft takes one configuration change at a time: the
   * previous one (asked here, or applied here from elsewhere) must be durable on a majority first. `make`
   * checks the change against the live members' records and returns the command that makes it.
   */
  private async changeMembers(make: (live: ReadonlySet<string>, records: MemberRecord[]) => Promise<Command>): Promise<void> {
    if (this.changingMembers || !this.durability.reached(this.applier.rosterChangedAt)) {
      throw new KvlogError('MEMBERSHIP_UNSETTLED', 'the previous membership change is not yet durable on a majority of the members; retry')
    }
    this.changingMembers = true
    try {
      const records = await this.election.members()
      await this.submit(await make(new Set(records.map((m) => m.name)), records))
    } finally {
      this.changingMembers = false
    }
  }

  /** The roster members that count toward the majority. */
  private voters(): string[] {
    return this.applier.roster.filter((name) => !this.learners.includes(name))
  }

  /**
   * The members that apply the log without counting toward the majority: the learners, and this member
   * while it has not joined yet and its peer URLs name a learner added for it.
   */
  get learners(): readonly string[] {
    const m = this.applier.membership
    const me = this.o.memberName
    const pendingLearner = !this.applier.roster.includes(me) && addedBy(m, this.o.peerUrls)?.learner === true
    return pendingLearner ? [...m.learners, me] : m.learners
  }

  /** Members added by MemberAdd that have not started yet. */
  get pendingMembers(): readonly AddedMember[] {
    return this.applier.membership.pending
  }

  /** The id MemberAdd gave `name`, if it joined as an added member. */
  addedIdOf(name: string): string | undefined {
    return this.applier.membership.ids[name]
  }

  /** A member's incarnation as this member knows it ('' if none is recorded). */
  incarnationOf(name: string): string {
    return name === this.o.memberName ? this.incarnation : (this.applier.incarnations[name] ?? '')
  }

  /** The members whose records are alive in the cluster's bucket. */
  members(): Promise<MemberRecord[]> {
    return this.election.members()
  }

  /** Sets what MemberList reports for this member and puts its record now (not at the next renewal). */
  async announce(clientUrls: string[]): Promise<void> {
    this.clientUrls = clientUrls
    await this.election.announce()
  }

  /** The client URLs last read in `member`'s record, alive or not ([] if never read). */
  lastClientUrls(member: string): string[] {
    return this.election.clientUrls(member)
  }

  /**
   * Waits until this member has applied what the stream held when asked (a restarted member catching
   * up), with a progress line every few seconds; NATS being unreachable only makes it wait longer.
   */
  async waitCaughtUp(): Promise<void> {
    for (;;) {
      this.checkOpen()
      try {
        const last = await this.streamLast()
        if (this.applier.applied >= last) return
        await this.applier.waitApplied(last, 5000)
        return
      } catch (err) {
        if (this.applier.failure !== undefined) throw err
        this.say(`kvlog: ${this.o.memberName} catching up with the log: applied ${this.applier.applied} of ${this.applier.streamLast}`)
      }
    }
  }

  /**
   * Whether this member has applied what the stream held when last asked (refreshes the figure); never
   * while its copy's disk is below the reserve.
   */
  async caughtUp(): Promise<boolean> {
    if (this.closed || this.disk.full) return false
    try {
      const last = await this.streamLast()
      return this.applier.applied >= last
    } catch {
      return false
    }
  }

  async revisionAt(timestamp: number): Promise<number> {
    await this.barrier.wait()
    return this.view.revisionAt(timestamp)
  }

  async snapshot(chunkBytes?: number): Promise<SnapshotStream> {
    this.checkOpen()
    return this.view.snapshot(chunkBytes)
  }

  reclaimSpace(): Promise<void> {
    return this.view.reclaimSpace()
  }

  readMeta(name: string): Promise<unknown> {
    return this.view.readMeta(name)
  }

  /** A condition is checked by each member as it applies the command (Replica.writeMeta), in log order. */
  async writeMeta(name: string, value: unknown, condition?: MetaCondition): Promise<void> {
    await this.submit({ type: 'meta', name, value, ...(condition === undefined ? {} : { ifRevision: condition.ifRevision }) })
  }

  /** Every member's copy applies each meta command (applier.ts), so changes made elsewhere arrive here too. */
  onMeta(listener: (name: string, value: unknown) => void): () => void {
    return this.view.onMeta(listener)
  }

  /** The leader's corruption checks find `report.member`'s copy different from the majority's. */
  onCorrupt(listener: (report: CorruptReport) => void): () => void {
    return this.corruption.onCorrupt(listener)
  }

  alarms(): AlarmKind[] {
    return this.view.alarms()
  }

  async setAlarm(kind: AlarmKind, active: boolean, options: { automatic?: boolean } = {}): Promise<void> {
    // The space check's verdict counts only from the leader (a check begun while leading may end after).
    if (options.automatic === true && !this.publisher.leading) return
    // As on one node (meta.ts): no message when nothing changes. The automatic compaction sets the alarm
    // after every check, which would otherwise be a stream message every compactionCheckInterval. Read
    // linearizably: this member's copy may not have applied a change made through another one yet.
    await this.barrier.wait()
    if (this.view.alarms().includes(kind) === active) return
    await this.submit({ type: 'alarm', kind, active })
  }

  async leaseGrant(ttl: number, id: bigint = 0n): Promise<LeaseGrant> {
    this.checkOpen()
    let lease = checkLeaseId(id, 'id')
    // The id is picked here, not where the grant is applied, so every member applies the same one.
    while (lease === 0n) lease = randomBytes(8).readBigUInt64BE() & MAX_LEASE_ID
    return (await this.submit({ type: 'leaseGrant', id: lease, ttl })) as LeaseGrant
  }

  async leaseRevoke(id: bigint): Promise<{ revision: number }> {
    const r = (await this.submit({ type: 'leaseRevoke', id: checkLeaseId(id, 'id') })) as TxnResult
    return { revision: r.revision }
  }

  async leaseKeepAlive(id: bigint): Promise<LeaseGrant> {
    return (await this.submit({ type: 'leaseKeepAlive', id: checkLeaseId(id, 'id') })) as LeaseGrant
  }

  leaseTimeToLive(id: bigint, options?: { keys?: boolean }): LeaseTimeToLive | undefined {
    this.checkOpen()
    return this.view.leaseTimeToLive(id, options)
  }

  leases(): bigint[] {
    this.checkOpen()
    return this.view.leases()
  }

  subscribe(listener: CommitListener): () => void {
    return this.view.subscribe(listener)
  }

  async close(): Promise<void> {
    if (this.closed) return
    await this.applier.drainWaiting(this.o.clusterRequestTimeout)
    this.closed = true
    await this.snapshotter?.stop()
    await this.election.stop()
    this.follow('the member stops')
    this.durability.stop()
    this.corruption.stop()
    await this.applier.stop()
    await this.nc.close().catch(() => undefined)
    await this.view.close()
  }
}
