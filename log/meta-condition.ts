/**
 * Conditional meta writes (Log.writeMeta's `condition`): a record that counts its own changes in a
 * numeric `revision` field (the auth record does) is replaced only if the stored one still has the
 * revision the writer read. Two members of a cluster changing the record at the same moment then cannot
 * overwrite each other: every copy applies the changes in log order and refuses the second with CONFLICT,
 * and its writer applies its change again to the record as it now is.
 */
import { KvlogError } from './errors.js'

export interface MetaCondition {
  /** The `revision` field the stored record must have (a missing record counts as 0). */
  ifRevision: number
}

/** Throws CONFLICT unless `stored` (the record named `name` as it is now) meets `condition`. */
export function checkMetaCondition(name: string, stored: unknown, condition: MetaCondition): void {
  const revision = (stored as { revision?: unknown } | undefined)?.revision
  const actual = typeof revision === 'number' ? revision : 0
  if (actual !== condition.ifRevision) {
    throw new KvlogError('CONFLICT', `the ${name} record is at revision ${actual}, not ${condition.ifRevision}: it was changed meanwhile`)
  }
}
