/**
 * The checks of a membership change before it is sent to the log, as etcd's strict reconfiguration check
 * (`--strict-reconfig-check`, on by default) makes them. Learners count toward no majority. Two rules:
 * - started members (etcd's isReadyTo{Add,Remove,Promote}Member): after the change, the voting members
 *   that have started must be a majority of the voting members. Every roster member joined by starting;
 *   a member added by MemberAdd that has not started counts toward the majority with nothing, so each one
 *   raises the majority that the started members must make up (NOT_ENOUGH_STARTED_MEMBERS);
 * - live members: which of them are alive now (their record in the bucket renewed within the lease). A
 *   member that is down may be taken off (it is not part of the live quorum); a live member only while the
 *   live members left would still be a quorum of the roster as it is, as etcd's mayRemoveMember counts
 *   it (`active - 1 >= 1 + (members - 1) / 2`, rounded down) (MEMBERSHIP_UNHEALTHY).
 */
import { KvlogError } from '../errors.js'
import type { Membership } from './membership.js'

/** Taking `name` off the roster of voting members `roster`, with `unstarted` voting members added and not started. */
export function checkRemoval(roster: readonly string[], live: ReadonlySet<string>, name: string, self: string, unstarted = 0): void {
  const left = roster.filter((m) => m !== name).length
  checkStarted(`taking ${name} off`, left, left + unstarted)
  if (name !== self && !live.has(name)) return
  const active = roster.filter((m) => live.has(m)).length
  const needed = 1 + Math.floor((roster.length - 1) / 2)
  if (active - 1 < needed) {
    throw new KvlogError(
      'MEMBERSHIP_UNHEALTHY',
      `taking ${name} off would leave ${active - 1} live members of ${roster.length}, fewer than the ${needed} the cluster needs; bring the others back first`,
      { member: name, live: active, roster: roster.length },
    )
  }
}

/** Voting members added by MemberAdd that have not started. */
export function unstartedVoters(m: Membership): number {
  return m.pending.filter((p) => !p.learner).length
}

/**
 * etcd's started-members rule: after `change`, `started` voting members that have started of `members`
 * must be a majority.
 */
function checkStarted(change: string, started: number, members: number): void {
  const quorum = Math.floor(members / 2) + 1
  if (started < quorum) {
    throw new KvlogError(
      'NOT_ENOUGH_STARTED_MEMBERS',
      `after ${change}, ${started} started members of ${members} voting members would be fewer than the ${quorum} the cluster needs; start or remove the members added and not started first`,
      { started, members },
    )
  }
}

/** etcd's learners at most (its maxLearners). */
const MAX_LEARNERS = 1
/** A learner is promoted once it holds this share of what the member asked has applied (etcd's readyPercent). */
const LEARNER_READY = 0.9

/**
 * A MemberAdd's or MemberUpdate's peer URLs: at least one, each a URL, none another member's (an added
 * one's, the URLs MemberUpdate gave a started one, else those its record advertises). `self` is the
 * member a MemberUpdate changes: a started one by name, an added one (name '') by id.
 */
export function checkPeerUrls(
  peerUrls: readonly string[],
  m: Membership,
  records: ReadonlyArray<{ name?: string; peerUrls?: string[] }>,
  self: { name: string; id?: string } = { name: '' },
): void {
  if (peerUrls.length === 0) throw new KvlogError('INVALID_ARGUMENT', 'peerURLs: at least one peer URL is required', { field: 'peerURLs' })
  for (const u of peerUrls) {
    if (!URL.canParse(u)) throw new KvlogError('INVALID_ARGUMENT', `peerURLs: '${u}' is not a URL`, { field: 'peerURLs' })
  }
  const others = (name: string | undefined) => self.name === '' || name !== self.name
  const used = new Set([
    ...m.pending.filter((p) => self.id === undefined || p.id !== self.id).flatMap((p) => p.peerUrls),
    ...records.filter((r) => others(r.name)).flatMap((r) => m.peerUrls?.[r.name ?? ''] ?? r.peerUrls ?? []),
    ...Object.entries(m.peerUrls ?? {})
      .filter(([name]) => others(name))
      .flatMap(([, urls]) => urls),
  ])
  const taken = peerUrls.find((u) => used.has(u))
  if (taken !== undefined) throw new KvlogError('PEER_URL_EXISTS', `peer URL ${taken} is already a member's`, { peerUrl: taken })
}

/**
 * etcd's strict reconfiguration check for a MemberAdd: one learner at a time. A voting member only while
 * the voting members that have started would still be a majority of the voting members once it is added
 * (etcd's isReadyToAddVotingMember: a member added and not started counts toward the majority with
 * nothing; adding one to a cluster of one is allowed, to grow a cluster restored on one member), and
 * while every voting member on the roster is alive (the new one counts toward the majority before it has
 * anything).
 */
export function checkAddStrict(voters: readonly string[], live: ReadonlySet<string>, m: Membership, learner: boolean): void {
  if (learner) {
    if (m.learners.length + m.pending.filter((p) => p.learner).length >= MAX_LEARNERS) {
      throw new KvlogError('TOO_MANY_LEARNERS', `the cluster has ${MAX_LEARNERS} learner already; promote or remove it first`)
    }
    return
  }
  const after = voters.length + unstartedVoters(m) + 1
  // etcd's exception: a second member added to a cluster of one (growing a cluster restored on one member).
  if (voters.length !== 1 || after !== 2) checkStarted('adding a voting member', voters.length, after)
  const down = voters.filter((v) => !live.has(v))
  if (down.length > 0) {
    throw new KvlogError(
      'MEMBERSHIP_UNHEALTHY',
      `adding a voting member while ${down.join(', ')} is down could leave the cluster without a majority`,
      {
        down,
      },
    )
  }
}

/**
 * A MemberPromote: `name` must be a learner that holds nearly all of what this member applied. With the
 * strict check (`voters`: the voting members on the roster), the started voting members, the learner
 * counted, must stay a majority of the voting members (etcd's isReadyToPromoteMember).
 */
export function checkPromote(name: string, m: Membership, durable: number, applied: number, voters?: number): void {
  if (!m.learners.includes(name)) throw new KvlogError('MEMBER_NOT_LEARNER', `${name} is not a learner`)
  if (durable < applied * LEARNER_READY) {
    throw new KvlogError(
      'LEARNER_NOT_READY',
      `${name} holds ${durable} of ${applied} log messages durably; promote it once it has caught up`,
      {
        durable,
        applied,
      },
    )
  }
  if (voters !== undefined) checkStarted(`promoting ${name}`, voters + 1, voters + unstartedVoters(m) + 1)
}
