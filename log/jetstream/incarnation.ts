/**
 * A member's incarnation: who this copy is, beside the member's name. A member that comes back under the
 * same name with an empty copy (a replaced disk, a new machine) is not the member that left: its copy
 * starts over and holds nothing that member acknowledged, so etcd would give it a new member id. The
 * incarnation is made when the copy is made, kept in the copy (INCARNATION, never replicated: a copy
 * restored from another member's snapshot gets one of its own), and recorded for everyone by the
 * member's `join` (INCARNATIONS); a member whose recorded incarnation is not its own joins again.
 *
 * A copy made before incarnations existed has none (''): its member keeps the id its name gives.
 */
import { randomBytes } from 'node:crypto'
import type { Replica } from '../replica.js'
import { INCARNATION } from './records.js'

export async function ownIncarnation(view: Replica, fresh: boolean): Promise<string> {
  if (fresh) {
    const made = randomBytes(8).toString('hex')
    await view.writeMeta(INCARNATION, made)
    return made
  }
  const kept = await view.readMeta(INCARNATION)
  return typeof kept === 'string' ? kept : ''
}
