/**
 * Leader election, for liveness only: the stream's fence (every publish expects the last sequence) keeps
 * a deposed or duplicated leader from forking the log, so two members briefly both believing they lead is
 * safe (one of them gets fence rejections and steps down).
 *
 * The lease is the `leader` entry of the cluster's bucket, whose messages expire after leaderLease (ms). The
 * leader renews it every third of that with a compare-and-set on the entry's revision; another member
 * takes over with a create once the entry has expired. The epoch is the entry's revision at creation:
 * unique to one leadership and growing, but the bucket's revisions also count every renewal and member
 * record, so it jumps. The term (etcd's raftTerm) counts leaderships: a new leader takes one more than the
 * highest term it knows, from the lease entries it read and the members' records (each carries the
 * highest term its member knows, so a member that starts after the last leader's entry expired still
 * continues the count while any member that saw it is alive).
 *
 * A leader steps down on the time since its last *successful* renewal (counted from when that renewal was
 * sent, so before the entry can expire anywhere), checked when a renewal fails and on every tick while a
 * renewal is still waiting for its answer, and at once when the compare-and-set is refused (someone else
 * wrote the entry). A renewal never waits behind anything else: the member record has its own timer.
 *
 * Every member also keeps a `member.<name>` entry (its client URLs and applied sequence) alive in the same
 * bucket: MemberList reads them. The entries expire with the bucket's TTL, so each member remembers the
 * client URLs it last read for every member of the roster: a member that died is still listed with them
 * (etcd lists a dead member's URLs, and `etcdctl endpoint status --cluster` reports it unreachable).
 *
 * A leader whose process died need not be waited out: every member subscribes `<alive>.<its name>` for as
 * long as its NATS connection is up, and the servers drop that interest as soon as the connection closes
 * (a killed process's socket is closed by its kernel). A follower that finds the leader's subject without
 * a subscriber twice, 100 ms apart ("no responders"), deletes the lease entry at the revision it read and
 * takes over at once. A leader that is alive but unreachable (stopped, partitioned) still answers nothing
 * rather than "no responders" and is waited out by the lease. A false verdict (the leader's connection
 * moving between servers at that moment) costs one leader change, never safety: the deposed leader's
 * renewal and publishes fail on their compare-and-set and fence.
 *
 * In the protocol as a whole: docs/cluster-protocol.md, "Election".
 */
import type { KV, NatsConnection, Subscription } from 'nats'
import { failpointOff, failpointsOn } from '../failpoints.js'
import { apiErrorCode } from './connection.js'
import { decode, encode } from './messages.js'

export interface LeaderRecord {
  member: string
  epoch: number
  /** Leaderships so far, this one included (etcd's raftTerm). Absent in records of older members. */
  term?: number
  /**
   * The leader takes forwarded writes on its epoch's own subject (JetStreamLog). Absent in the records
   * of members from before that: those take them on the shared subject.
   */
  byEpoch?: boolean
}

export interface MemberRecord {
  name: string
  clientUrls: string[]
  /** Its advertisePeerUrls (absent in records of older members). */
  peerUrls?: string[]
  applied: number
  /** The highest term its member knows (Election). */
  term?: number
}

export interface ElectionEvents {
  /** This member won the lease (epoch = its revision); it is not writing yet (see JetStreamLog.lead). */
  elected(epoch: number): void
  /** This member lost (or may have lost) the lease, for the reason `why`. */
  deposed(why: string): void
  member(): MemberRecord
  /** The members on the roster, whose client URLs are remembered once read. */
  roster(): readonly string[]
  /** Whether this member may take the lease (a learner may not, as in etcd). Absent: it may. */
  mayLead?(): boolean
}

/** Between the two probes that must both find the leader's liveness subject unsubscribed. */
const CONFIRM_MS = 100
/** The least time between two checks triggered by suspect(). */
const SUSPECT_EVERY_MS = 100
const PROBE_TIMEOUT_MS = 250
/** After the entry's expiry as its timestamp gives it: the look-up that finds it gone (see watchExpiry). */
const EXPIRY_SLACK_MS = 50

export class Election {
  private timer: NodeJS.Timeout | undefined
  private memberTimer: NodeJS.Timeout | undefined
  private ticking = false
  /** Grows with every tick, and when a tick waiting on a lost connection is given up (reconnected()). */
  private tickToken = 0
  private putting = false
  /** The highest term seen in a lease entry or a member record. */
  private knownTerm = 0
  /** The client URLs last read in each member's record. */
  private readonly lastUrls = new Map<string, string[]>()
  private revision = 0
  private renewedAt = 0
  /** The leader last seen (this member's record while it leads). */
  leader: LeaderRecord | undefined
  /** When a look-up of the lease last found another member's entry (ms). */
  private leaderSeenAt = 0
  /** Leader changes seen by this member. */
  changes = 0
  /** The member whose lease this member ended last because its connection was gone. */
  departed: string | undefined
  private aliveSub: Subscription | undefined
  private suspectedAt = 0
  private expiryTimer: NodeJS.Timeout | undefined
  private readonly changeListeners = new Set<() => void>()
  /** Renewals that failed or were refused (a metric). */
  renewalFailures = 0
  /** Times this member stepped down while leading (a metric). */
  stepDowns = 0

  constructor(
    private readonly kv: KV,
    private readonly nc: NatsConnection,
    /** `<alive>.<member>`: subscribed while this member's connection is up. */
    private readonly alive: string,
    private readonly memberName: string,
    private readonly leaseMs: number,
    private readonly events: ElectionEvents,
  ) {}

  get leading(): boolean {
    return this.revision !== 0
  }

  /**
   * Whether this member knows a leader now (etcd's "has leader", which WithRequireLeader watches need):
   * it leads, or a look-up within the last lease found another member's entry. A member cut off from
   * NATS, or in a cluster whose leader's lease ran out with nobody taking over, has none.
   */
  hasLeader(): boolean {
    return this.leading || (this.leader !== undefined && Date.now() - this.leaderSeenAt <= this.leaseMs)
  }

  get epoch(): number {
    return this.leader?.epoch ?? 0
  }

  /**
   * Milliseconds since the last renewal of this member's lease that succeeded, counted from when it was
   * sent (undefined: it holds no lease). A leader steps down before this reaches the lease.
   */
  renewedAgo(): number | undefined {
    return this.leading ? Date.now() - this.renewedAt : undefined
  }

  /** The term of the leader this member knows (0: none known). */
  get term(): number {
    return this.leader?.term ?? 0
  }

  /** The client URLs last read in `member`'s record ([] if never read). */
  clientUrls(member: string): string[] {
    return this.lastUrls.get(member) ?? []
  }

  /**
   * Subscribes the liveness subject, starts the timers and resolves once this member's record is put (or
   * its put failed): a member that reports itself ready is listed by MemberList.
   */
  async start(): Promise<void> {
    this.aliveSub = this.nc.subscribe(`${this.alive}.${this.memberName}`, {
      callback: (err, msg) => {
        if (err === null && msg.reply) msg.respond()
      },
    })
    const every = Math.max(50, Math.floor(this.leaseMs / 3))
    this.memberTimer = setInterval(() => void this.putMember(), every)
    this.timer = setInterval(() => void this.tick(), every)
    // The members' records before the first look at the lease: a member that takes over at once continues
    // their term count.
    await this.members().catch(() => undefined)
    if (this.timer === undefined) return
    void this.tick()
    await this.putMember()
  }

  async stop(): Promise<void> {
    clearTimeout(this.expiryTimer)
    clearInterval(this.timer)
    clearInterval(this.memberTimer)
    this.timer = undefined
    this.memberTimer = undefined
    this.aliveSub?.unsubscribe()
    this.aliveSub = undefined
    // Hands over at once instead of after the lease.
    if (this.leading) await this.stepDown('the member stops')
  }

  /**
   * A write found no leader listening (forwarded request without responders): check the lease now rather
   * than at the next tick. At most one check per SUSPECT_EVERY_MS.
   */
  suspect(): void {
    if (this.leading || this.timer === undefined || Date.now() - this.suspectedAt < SUSPECT_EVERY_MS) return
    this.suspectedAt = Date.now()
    void this.tick()
  }

  /**
   * Gives the lease up (a fence rejection, a renewal refused or not answered in time, a group of writes
   * not stored within a lease, a takeover that could not catch up, the member stopping) and deletes the
   * entry if it is still this member's (the delete names the revision this member holds), so the next
   * leader need not wait for it to expire. Resolves once the delete is answered or failed.
   */
  stepDown(why: string): Promise<void> {
    if (!this.leading || (failpointsOn && failpointOff('leaderStepDown'))) return Promise.resolve()
    const revision = this.revision
    this.revision = 0
    this.leader = undefined
    this.stepDowns++
    this.events.deposed(why)
    return this.kv.delete('leader', { previousSeq: revision }).then(
      () => undefined,
      () => undefined,
    )
  }

  /** Puts this member's record now, whether or not a renewal of it is under way. */
  async announce(): Promise<void> {
    await this.kv.put(`member.${this.memberName}`, encode({ ...this.events.member(), term: this.knownTerm })).catch(() => undefined)
  }

  private async putMember(): Promise<void> {
    if (this.putting) return
    this.putting = true
    await this.announce()
    // Learn the URLs of roster members not read yet (one get each), so a member that dies is listed with them.
    for (const name of this.events.roster()) {
      if (this.lastUrls.has(name)) continue
      const e = await this.kv.get(`member.${name}`).catch(() => null)
      if (e !== null && e.operation === 'PUT' && e.value.length > 0) this.remember(decode<MemberRecord>(e.value))
    }
    this.putting = false
  }

  private async tick(): Promise<void> {
    if (this.leading && Date.now() - this.renewedAt >= this.leaseMs) {
      // Woken after a pause of a lease or more (the first timer to run): the entry has expired in the
      // bucket, so no renewal can keep it; stepping down now, before any write is taken, leaves one publisher.
      this.checkLease()
      return
    }
    if (this.ticking) {
      // The last renewal is still waiting for its answer: one that hangs must not keep a leader whose
      // lease may be running out.
      this.checkLease()
      return
    }
    this.ticking = true
    const token = ++this.tickToken
    try {
      if (this.leading) await this.renew()
      else await this.tryTake()
    } finally {
      if (this.tickToken === token) this.ticking = false
    }
  }

  /**
   * The NATS connection came back (through another server after its server was lost or stopped). A
   * renewal sent before may wait out its whole timeout with nobody to answer it, and a leader whose
   * renewal waits steps down at half the lease: renew now instead, beside it. The one left waiting
   * changes nothing when it ends (the lease's revision moved on, or it fails and the time since the last
   * success decides); if it did land, this one is refused and the member steps down, which is safe.
   */
  reconnected(): void {
    if (!this.leading || !this.ticking || this.timer === undefined) return
    this.tickToken++
    this.ticking = false
    void this.tick()
  }

  /**
   * Steps down once half the lease has passed since the last renewal that succeeded and the renewal
   * since then failed or has not answered: renewed every third of the lease, that is two renewals in a
   * row, while the entry still has at least half its time left. The entry, if it is still this member's,
   * is deleted so that another member need not wait for it to expire. (A leader whose process was
   * paused for less than the lease tries a renewal first when it wakes: a compare-and-set that succeeds
   * shows nobody took over; paused for a lease or more, it steps down at once.)
   */
  private checkLease(): void {
    if (!this.leading || Date.now() - this.renewedAt < this.leaseMs / 2) return
    void this.stepDown(`no renewal of the lease succeeded for ${Date.now() - this.renewedAt} ms`)
  }

  private async renew(): Promise<void> {
    const record: LeaderRecord = { member: this.memberName, epoch: this.epoch, term: this.term, byEpoch: true }
    const revision = this.revision
    const sent = Date.now()
    try {
      const next = await this.kv.update('leader', encode(record), revision)
      if (this.revision === revision) {
        this.revision = next
        this.renewedAt = sent
      }
    } catch (err) {
      this.renewalFailures++
      // 10071: the entry is no longer at our revision, someone else wrote it. Otherwise (timeout, no
      // answer) the time since the last success decides.
      if (this.revision === revision && apiErrorCode(err) === 10071)
        void this.stepDown(`the lease entry was written by another member (${(err as Error).message})`)
      else this.checkLease()
    }
  }

  private async tryTake(): Promise<void> {
    try {
      const entry = await this.kv.get('leader')
      this.departed = undefined
      if (entry !== null && entry.operation === 'PUT' && entry.value.length > 0) {
        const seen = decode<LeaderRecord>(entry.value)
        this.leaderSeenAt = Date.now()
        this.knownTerm = Math.max(this.knownTerm, seen.term ?? 0)
        if (seen.epoch !== this.leader?.epoch) {
          // A first sighting (no leader known before) changes no leader anything was sent to.
          const change = this.leader !== undefined
          this.leader = seen
          if (change) {
            this.changes++
            this.changed()
          }
        }
        this.watchExpiry(entry.created.getTime())
        if (seen.member === this.memberName || !(await this.gone(seen.member))) return
        // The holder's connection is gone: end its lease now (only the revision read, so never a newer one).
        await this.kv.delete('leader', { previousSeq: entry.revision })
        this.departed = seen.member
      }
      if (this.events.mayLead?.() === false) return
      const started = Date.now()
      // The epoch is the revision the entry gets; it is written in the record by the first renewal.
      const term = this.knownTerm + 1
      const revision = await this.kv.create('leader', encode({ member: this.memberName, epoch: 0, term, byEpoch: true }))
      const record: LeaderRecord = { member: this.memberName, epoch: revision, term, byEpoch: true }
      this.knownTerm = term
      this.revision = await this.kv.update('leader', encode(record), revision)
      this.renewedAt = started
      this.leader = record
      this.changes++
      this.changed()
      this.events.elected(revision)
    } catch {
      // Someone else created it first, or NATS is unreachable: try again on the next tick.
    }
  }

  /**
   * Looks the lease up again right after the entry last seen expires (its timestamp + the lease), instead
   * of up to a tick later: a leader that stopped renewing is replaced as soon as the bucket lets anyone
   * take over. With clocks apart the look-up comes early (it finds the entry and changes nothing) or late
   * (the next tick finds it gone anyway).
   */
  private watchExpiry(renewedAt: number): void {
    clearTimeout(this.expiryTimer)
    const due = renewedAt + this.leaseMs + EXPIRY_SLACK_MS - Date.now()
    if (due <= 0 || due >= this.leaseMs) return
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = undefined
      if (this.timer !== undefined && !this.leading) void this.tick()
    }, due)
  }

  /**
   * Resolves at the next leader change this member sees (another epoch's entry, or its own election);
   * `cancel` drops the listener when the caller no longer waits.
   */
  nextChange(): { changed: Promise<void>; cancel: () => void } {
    let listener: () => void = () => undefined
    const changed = new Promise<void>((resolve) => (listener = resolve))
    this.changeListeners.add(listener)
    return { changed, cancel: () => this.changeListeners.delete(listener) }
  }

  private changed(): void {
    const listeners = [...this.changeListeners]
    this.changeListeners.clear()
    for (const l of listeners) l()
  }

  /** Whether `member`'s liveness subject has no subscriber, twice in a row. */
  private async gone(member: string): Promise<boolean> {
    for (let probe = 0; probe < 2; probe++) {
      if (probe > 0) await new Promise((r) => setTimeout(r, CONFIRM_MS))
      const unsubscribed = await this.nc.request(`${this.alive}.${member}`, undefined, { timeout: PROBE_TIMEOUT_MS }).then(
        () => false,
        (err: unknown) => (err as { code?: string }).code === '503',
      )
      if (!unsubscribed) return false
    }
    return true
  }

  /** The members' records (those renewed within the lease). */
  async members(): Promise<MemberRecord[]> {
    const out: MemberRecord[] = []
    // Keys first, then values: awaiting inside the keys iteration stalls its consumer.
    const keys = new Set<string>()
    for await (const key of await this.kv.keys('member.*')) keys.add(key)
    for (const key of keys) {
      const e = await this.kv.get(key)
      if (e !== null && e.operation === 'PUT' && e.value.length > 0) out.push(this.remember(decode<MemberRecord>(e.value)))
    }
    return out.sort((a, b) => a.name.localeCompare(b.name))
  }

  private remember(record: MemberRecord): MemberRecord {
    if (record.clientUrls.length > 0) this.lastUrls.set(record.name, record.clientUrls)
    this.knownTerm = Math.max(this.knownTerm, record.term ?? 0)
    return record
  }
}
