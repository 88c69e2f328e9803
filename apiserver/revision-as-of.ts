/**
 * "The state at a time" as a revision, one rule for every place that takes a time (GET /v1/revision-at, the
 * offline `snapshot restore --to-time`): the last revision committed at or before the time, i.e. what a
 * read at that moment saw. An empty store's revision 1 is "before everything".
 */
import type { Log } from '../log/backend.js'

export async function revisionAsOf(log: Log, ms: number): Promise<number> {
  // revisionAt answers the first revision committed at or after a time; commit times have ms precision.
  return Math.min(log.revision, (await log.revisionAt(ms + 1)) - 1)
}
