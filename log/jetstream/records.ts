/**
 * The records the cluster engine keeps in each member's copy, beside the copy's data (their names are
 * declared with the replication contract, ../replica.ts, so that whoever reads a copy knows them):
 *
 *   APPLIED_MARKER   the last applied stream message (sequence, commit time, chain hash), written in the
 *                    same batch as the message's effects (applier.ts); a snapshot is labelled with it
 *   ROSTER           the members that joined, in the order they did (durability.ts counts a majority of it)
 *   INCARNATIONS     each roster member's incarnation, by name, as its join recorded it (a member that
 *                    came back with an empty copy is a new incarnation: etcd gives it a new member id)
 *   INCARNATION      this copy's own incarnation: made when the copy is made (a restored snapshot's is
 *                    replaced), never replicated (incarnation.ts)
 *   MEMBERSHIP       members added by MemberAdd that have not started yet, the learners, and the ids
 *                    MemberAdd gave the members that joined by one of its peer URLs (membership.ts)
 *   TAIL_SLOT        + slot number: the kept tail's ring of applied messages, byte for byte (tail.ts)
 *
 * docs/cluster-protocol.md describes how each is used.
 */
import { CLUSTER_RECORDS } from '../replica.js'

export const APPLIED_MARKER = CLUSTER_RECORDS.applied
export const ROSTER = CLUSTER_RECORDS.roster
export const TAIL_SLOT = CLUSTER_RECORDS.tailSlot
export const INCARNATIONS = CLUSTER_RECORDS.incarnations
export const INCARNATION = CLUSTER_RECORDS.incarnation
export const MEMBERSHIP = CLUSTER_RECORDS.membership

export interface AppliedMarker {
  seq: number
  ts: number
  /** messageHash() of the applied message. */
  hash: string
}
