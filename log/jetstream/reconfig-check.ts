/**
 * etcd's strict reconfiguration check (`--strict-reconfig-check`, on by default) for taking a member off
 * the roster. Every roster member joined by starting, so all have started in etcd's sense; what decides
 * is which of them are alive now (their record in the bucket renewed within the lease):
 * - a member that is down may be taken off (it is not part of the live quorum);
 * - a live member only while the live members left would still be a quorum of the roster as it is, as
 *   etcd's mayRemoveMember counts it (`active - 1 >= 1 + (members - 1) / 2`, rounded down).
 */
import { KvlogError } from '../errors.js'

export function checkRemoval(roster: readonly string[], live: ReadonlySet<string>, name: string, self: string): void {
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
