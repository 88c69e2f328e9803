/**
 * A point in the history, as the CLI accepts it wherever it takes a revision: a revision (`42`), an
 * RFC 3339 / ISO 8601 time (`2026-11-22T21:00:00Z`), or a time relative to now (`10m`, `2h`, `1h30m`,
 * `45s`, `7d`: that long ago). One parser for every command (get, watch, history, diff, dump, revert,
 * compact, cursor commit):
 *
 * - the state at a time T (reads, diffs, dump, revert, compaction, cursors) is the last revision committed
 *   at or before T, as the server maps it (GET /v1/revision-at): what a read at T saw. A time whose state
 *   was compacted away fails there with COMPACTED (exit code 3); a time in the future has no state yet
 *   (FUTURE_REVISION);
 * - "from T" (history, watch) starts at the first revision committed at or after T (GET /v1/history).
 */
import type { KvlogClient } from '../client.js'
import { KvlogClientError } from '../errors.js'
import { UsageError } from './args.js'
import { str, type Context } from './context.js'

export type Point = { rev: number } | { time: number; text: string }

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `10m`, `2h`, `1h30m`, `45s`, `7d` in ms; undefined when `text` is not such a span. */
export function spanMs(text: string): number | undefined {
  if (!/^([0-9]+[smhd])+$/.test(text)) return undefined
  let ms = 0
  for (const [, n, unit] of text.matchAll(/([0-9]+)([smhd])/g)) ms += Number(n) * UNITS[unit]
  return ms
}

/** Parses a revision, an ISO 8601 time or a relative time; `what` names the flag in messages. */
export function parsePoint(text: string, what: string, now = Date.now()): Point {
  if (/^[0-9]+$/.test(text)) {
    const rev = Number(text)
    if (!Number.isSafeInteger(rev)) throw new UsageError(`${what}: revision out of range: ${text}`)
    return { rev }
  }
  const ago = spanMs(text)
  if (ago !== undefined) return { time: now - ago, text }
  // Date.parse also takes bare numbers and loose forms: insist on a date (YYYY-MM-DD...).
  const ms = /^[0-9]{4}-[0-9]{2}-[0-9]{2}/.test(text) ? Date.parse(text) : NaN
  if (!Number.isFinite(ms)) {
    throw new UsageError(
      `${what}: expected a revision, an ISO 8601 time (2026-11-22T21:00:00Z) or a relative time (10m, 2h, 1d), got ${JSON.stringify(text)}`,
    )
  }
  return { time: ms, text }
}

/** The first revision committed at or after `time` (the current revision + 1 if none). */
async function firstAtOrAfter(client: KvlogClient, time: number): Promise<number> {
  const r = await client.history('\0', { fromKey: true, fromTime: new Date(time).toISOString(), limit: 1 })
  return r.events[0]?.revision ?? r.revision + 1
}

/** The revision of the state at `p` (for reads, diffs, dumps, reverts, compaction, cursors). */
export async function stateRevision(client: KvlogClient, p: Point): Promise<number> {
  if ('rev' in p) return p.rev
  if (p.time > Date.now())
    throw new KvlogClientError('FUTURE_REVISION', `${p.text} is in the future: there is no state at that time yet`, 400)
  return client.revisionAt(new Date(p.time).toISOString())
}

/**
 * Exactly one of two flags naming a point: `revFlag` takes a revision or a time, `timeFlag` a time only
 * (e.g. dump --rev | --at, revert --to-revision | --to-time); the revision of the state there.
 */
export async function onePoint(c: Context, revFlag: string, timeFlag: string): Promise<number> {
  const rev = str(c, revFlag)
  const time = str(c, timeFlag)
  if ((rev === undefined) === (time === undefined)) throw new UsageError(`give --${revFlag} REV or --${timeFlag} TIME (one of them)`)
  if (rev !== undefined) return stateRevision(c.client, parsePoint(rev, `--${revFlag}`))
  const p = parsePoint(time!, `--${timeFlag}`)
  if ('rev' in p)
    throw new UsageError(
      `--${timeFlag}: expected a time (2026-11-22T21:00:00Z, or ago: 10m, 2h), got ${time}; --${revFlag} takes a revision`,
    )
  return stateRevision(c.client, p)
}

/** The first revision to deliver when starting from `p` (watch). */
export async function startRevision(client: KvlogClient, p: Point): Promise<number> {
  if ('rev' in p) return p.rev
  if (p.time > Date.now()) throw new UsageError(`${p.text} is in the future; leave --rev out to watch from now`)
  return firstAtOrAfter(client, p.time)
}

/** The ISO 8601 form of a time point (history's fromTime / toTime). */
export function isoTime(p: Point): string | undefined {
  return 'time' in p ? new Date(p.time).toISOString() : undefined
}
