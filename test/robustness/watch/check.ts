/**
 * etcd's watch guarantees, checked on each recorded event stream (one Watch create request and every
 * response it got):
 *
 * - ordered: event revisions never go down;
 * - unique: no (revision, key) twice;
 * - atomic: all of a revision's events that the watch selects come in one response;
 * - bookmarkable: a progress notification at R comes only after every event at or below R, and no event at
 *   or below R comes after it;
 * - filters: no PUT with NOPUT, no DELETE with NODELETE; prev_kv only when asked for;
 * - is-create: a PUT is a creation (create == mod) exactly when it is the key's version 1;
 *
 * and, given the log of every write (the linearized history, check.ts eventLog):
 * - reliable and resumable: from the start revision up to the last revision the stream reached, it got
 *   exactly the log's events in its range, neither a gap nor an extra one, starting exactly where asked;
 * - every event, prev_kv included, is the log's.
 */
import { inRange } from '../linearizability/model.js'
import type { Kv, WatchEvent } from '../linearizability/types.js'

export interface WatchRequest {
  key: string
  end?: string
  startRevision: number
  prevKv?: boolean
  noPut?: boolean
  noDelete?: boolean
}

export interface WatchResponse {
  /** Header revision. */
  revision: number
  events: WatchEvent[]
  /** Set when the server canceled the watch because its start is compacted. */
  compactRevision?: number
}

export interface WatchStream {
  id: string
  request: WatchRequest
  responses: WatchResponse[]
}

export interface WatchViolation {
  stream: string
  kind: 'ordered' | 'unique' | 'atomic' | 'bookmarkable' | 'filter' | 'prev-kv' | 'is-create' | 'reliable'
  detail: string
}

/** Events of the log by revision (each revision's events in request order). */
export type EventLog = ReadonlyMap<number, readonly WatchEvent[]>

export function checkWatch(stream: WatchStream, log?: EventLog): WatchViolation[] {
  const out: WatchViolation[] = []
  const bad = (kind: WatchViolation['kind'], detail: string) => out.push({ stream: stream.id, kind, detail })
  const req = stream.request
  const seen = new Set<string>()
  const revisionsDone = new Set<number>()
  let last = 0
  let reached = req.startRevision - 1
  let progress = 0
  for (const r of stream.responses) {
    if (r.compactRevision !== undefined && r.compactRevision > 0) break
    if (r.events.length === 0) {
      // A progress notification: everything at or below r.revision was sent before it.
      reached = Math.max(reached, r.revision)
      progress = Math.max(progress, r.revision)
      continue
    }
    const inThis = new Set<number>()
    for (const e of r.events) {
      const rev = e.kv.mod
      if (rev < last) bad('ordered', `event at ${rev} after one at ${last}`)
      if (rev <= progress) bad('bookmarkable', `event at ${rev} after a progress notification at ${progress}`)
      if (revisionsDone.has(rev)) bad('atomic', `revision ${rev} split over responses`)
      inThis.add(rev)
      last = Math.max(last, rev)
      const id = `${rev}/${e.kv.key}`
      if (seen.has(id)) bad('unique', `event ${id} twice`)
      seen.add(id)
      if ((e.type === 'PUT' && req.noPut) || (e.type === 'DELETE' && req.noDelete)) bad('filter', `${e.type} ${id} passed its filter`)
      if (!inRange(e.kv.key, req.key, req.end) || rev < req.startRevision) bad('filter', `event ${id} outside the watch`)
      if (e.prevKv !== undefined && req.prevKv !== true) bad('prev-kv', `prev_kv on ${id} that was not asked for`)
      if (e.type === 'PUT' && (e.kv.version === 1) !== (e.kv.create === e.kv.mod))
        bad('is-create', `PUT ${id} version ${e.kv.version} create ${e.kv.create}`)
    }
    for (const rev of inThis) revisionsDone.add(rev)
    if (r.revision < last) bad('bookmarkable', `header revision ${r.revision} below its events (${last})`)
    reached = Math.max(reached, last)
  }
  if (log !== undefined) checkAgainstLog(stream, log, reached, bad)
  return out
}

function checkAgainstLog(
  stream: WatchStream,
  log: EventLog,
  reached: number,
  bad: (kind: WatchViolation['kind'], detail: string) => void,
): void {
  const req = stream.request
  const got = new Map<string, WatchEvent>()
  for (const r of stream.responses) for (const e of r.events) got.set(`${e.kv.mod}/${e.kv.key}`, e)
  const want = new Map<string, WatchEvent>()
  for (const [rev, events] of log) {
    if (rev < req.startRevision || rev > reached) continue
    for (const e of events) {
      if (!inRange(e.kv.key, req.key, req.end) || (e.type === 'PUT' && req.noPut) || (e.type === 'DELETE' && req.noDelete)) continue
      want.set(`${rev}/${e.kv.key}`, e)
    }
  }
  for (const [id, e] of want) {
    const g = got.get(id)
    if (g === undefined) bad('reliable', `missing ${e.type} ${id}`)
    else if (g.type !== e.type || !sameKv(g.kv, e.kv)) bad('reliable', `${id} is ${JSON.stringify(g)}, the log has ${JSON.stringify(e)}`)
    else if (req.prevKv === true && !sameKv(g.prevKv, e.prevKv))
      bad('prev-kv', `${id} prev_kv ${JSON.stringify(g.prevKv)}, the log has ${JSON.stringify(e.prevKv)}`)
  }
  for (const [id, e] of got) {
    const selected = inRange(e.kv.key, req.key, req.end) && !(e.type === 'PUT' && req.noPut) && !(e.type === 'DELETE' && req.noDelete)
    if (selected && !want.has(id) && e.kv.mod <= reached) bad('reliable', `event ${id} is not in the log`)
  }
}

function sameKv(a: Kv | undefined, b: Kv | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  return (
    a.key === b.key &&
    a.value === b.value &&
    a.create === b.create &&
    a.mod === b.mod &&
    a.version === b.version &&
    (a.lease ?? '0') === (b.lease ?? '0')
  )
}
