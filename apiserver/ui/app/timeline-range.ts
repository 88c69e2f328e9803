/**
 * The timeline's `from` and `to` URL parameters: a plain integer is a revision, an RFC 3339 time a time
 * (e.g. `#/timeline?from=9030&to=9046`, `#/timeline?from=2026-11-25T14:00:00Z`). Anything else is an
 * error with a code, never a guess (`Date` would read `9030` as a year). Revisions become the commit times
 * of those revisions, as the buckets are counted by time.
 */
import { api, ApiError } from './api.js'

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

export type Bound = { revision: number } | { time: string }

/** A `from`/`to` parameter: a revision, a time, or an INVALID_ARGUMENT error naming it. */
export function parseBound(name: string, text: string): Bound {
  if (/^[0-9]+$/.test(text) && Number(text) > 0) return { revision: Number(text) }
  if (RFC3339.test(text) && Number.isFinite(Date.parse(text))) return { time: new Date(text).toISOString() }
  throw new ApiError(
    'INVALID_ARGUMENT',
    `${name}=${text} is neither a revision (a positive integer) nor an RFC 3339 time (e.g. 2026-11-25T14:02:00Z)`,
    {
      field: name,
    },
  )
}

/** The commit time of a revision (COMPACTED below the floor, FUTURE_REVISION past the head). */
async function commitTime(revision: number): Promise<number> {
  const page = await api.history('', { all: true, from: revision, to: revision, limit: 1 })
  const e = page.events[0]
  if (e === undefined)
    throw new ApiError('FUTURE_REVISION', `revision ${revision} has not been written yet`, { currentRevision: page.header.revision })
  return Date.parse(e.time)
}

export interface TimeRange {
  fromTime?: string
  toTime?: string
  /** The revisions the URL gave, to show. */
  fromRevision?: number
  toRevision?: number
}

/** The time range of the timeline for its URL parameters (absent: the whole retained history). */
export async function resolveRange(from: string | undefined, to: string | undefined): Promise<TimeRange> {
  const a = from === undefined ? undefined : parseBound('from', from)
  const z = to === undefined ? undefined : parseBound('to', to)
  const out: TimeRange = {}
  if (a && 'time' in a) out.fromTime = a.time
  if (a && 'revision' in a) {
    out.fromRevision = a.revision
    out.fromTime = new Date(await commitTime(a.revision)).toISOString()
  }
  if (z && 'time' in z) out.toTime = z.time
  if (z && 'revision' in z) {
    out.toRevision = z.revision
    // Just after the commit, so the bucket holding `to` is counted.
    out.toTime = new Date((await commitTime(z.revision)) + 1).toISOString()
  }
  if (out.fromTime !== undefined && out.toTime !== undefined && out.toTime < out.fromTime)
    throw new ApiError('INVALID_ARGUMENT', `from=${from} is after to=${to}`, { field: 'to' })
  return out
}
