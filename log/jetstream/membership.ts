/**
 * What the log records of members added through etcd's MemberAdd and of learners (the MEMBERSHIP record,
 * applied by applier.ts): a member is added by its peer URLs before it starts; the member that then joins
 * with one of those URLs (its advertisePeerUrls) takes the id MemberAdd answered with, and, if it was
 * added as a learner, applies the log like any member but does not count toward the durable majority
 * (durability.ts) until MemberPromote. MemberUpdate changes the peer URLs of an added member (the one
 * that starts with one of the new URLs takes its place) or of a started one (listed instead of those it
 * advertises). Every change here is a membership change: one at a time.
 */
import { randomBytes } from 'node:crypto'

export interface AddedMember {
  id: string
  peerUrls: string[]
  learner: boolean
}

export interface Membership {
  /** Added, not started yet. */
  pending: AddedMember[]
  /** Members on the roster that do not count toward the majority. */
  learners: string[]
  /** The id MemberAdd gave each member that joined as an added one. */
  ids: Record<string, string>
  /**
   * The peer URLs MemberUpdate gave started members, by name: listed instead of those the member
   * advertises (absent in copies from before MemberUpdate was served).
   */
  peerUrls?: Record<string, string[]>
}

export const NO_MEMBERSHIP: Membership = Object.freeze({ pending: [], learners: [], ids: {} })

/** A new member id: a nonzero uint64 as a decimal string, made by the member that asks (so every copy records the same). */
export function newMemberId(): string {
  return (randomBytes(8).readBigUInt64BE() | 1n).toString()
}

/** The added member that one of `peerUrls` names, if any. */
export function addedBy(m: Membership, peerUrls: readonly string[]): AddedMember | undefined {
  return m.pending.find((p) => p.peerUrls.some((u) => peerUrls.includes(u)))
}

/** The membership after `name` joined with `peerUrls` (unchanged when no added member has them). */
export function joined(m: Membership, name: string, peerUrls: readonly string[]): Membership {
  const added = addedBy(m, peerUrls)
  if (added === undefined) return m
  return {
    ...m,
    pending: m.pending.filter((p) => p !== added),
    learners: added.learner && !m.learners.includes(name) ? [...m.learners, name] : m.learners,
    ids: { ...m.ids, [name]: added.id },
  }
}

/** The membership after `name` (or the added member `id`) left. */
export function left(m: Membership, name: string, id?: string): Membership {
  return {
    pending: m.pending.filter((p) => p.id !== id),
    learners: m.learners.filter((l) => l !== name),
    ids: Object.fromEntries(Object.entries(m.ids).filter(([n]) => n !== name)),
    ...(m.peerUrls === undefined ? {} : { peerUrls: Object.fromEntries(Object.entries(m.peerUrls).filter(([n]) => n !== name)) }),
  }
}

/** The membership after MemberUpdate gave `name` (or the added member `id`) these peer URLs. */
export function updated(m: Membership, name: string, id: string | undefined, peerUrls: readonly string[]): Membership {
  if (id !== undefined) return { ...m, pending: m.pending.map((p) => (p.id === id ? { ...p, peerUrls: [...peerUrls] } : p)) }
  return { ...m, peerUrls: { ...m.peerUrls, [name]: [...peerUrls] } }
}
