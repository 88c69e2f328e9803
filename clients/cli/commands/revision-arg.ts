/**
 * A point in the history given on the command line: a revision (digits) or an ISO 8601 time. A time is
 * resolved by the server (GET /v1/revision-at) to the last revision committed at or before it; a time
 * whose state was compacted away fails there with COMPACTED (exit code 3).
 */
import { UsageError } from '../args.js'
import type { Context } from '../context.js'

export function isRevision(value: string): boolean {
  return /^[0-9]+$/.test(value)
}

/** Checks the form only: a revision, or a time Date.parse understands. */
export function checkPoint(value: string, flag: string): void {
  if (isRevision(value) ? !Number.isSafeInteger(Number(value)) : !Number.isFinite(Date.parse(value))) {
    throw new UsageError(`${flag}: expected a revision or an ISO 8601 time, got ${JSON.stringify(value)}`)
  }
}

export async function revisionOf(c: Context, value: string, flag: string): Promise<number> {
  checkPoint(value, flag)
  return isRevision(value) ? Number(value) : c.client.revisionAt(value)
}

/** Exactly one of two flags naming a point (e.g. --rev and --at); its revision. */
export async function onePoint(c: Context, revFlag: string, timeFlag: string): Promise<number> {
  const rev = c.p.flags.get(revFlag)
  const time = c.p.flags.get(timeFlag)
  if ((rev === undefined) === (time === undefined)) throw new UsageError(`give --${revFlag} REV or --${timeFlag} TIME (one of them)`)
  if (rev !== undefined) return revisionOf(c, String(rev), `--${revFlag}`)
  return revisionOf(c, String(time), `--${timeFlag}`)
}

/** The key range of an optional --prefix P: that prefix, or every key. */
export function prefixRange(prefix: string | undefined): { key: string; range: { prefix?: boolean; fromKey?: boolean } } {
  if (prefix === undefined || prefix === '') return { key: '\0', range: { fromKey: true } }
  return { key: prefix, range: { prefix: true } }
}
