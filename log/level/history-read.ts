/**
 * History: the events for a key or range between two revisions, read straight from the log table (a
 * sequential scan of entries), grouped by revision. prevKv comes from the hist index through each op's
 * prevRevision pointer. This is what watch catch-up and "replay history for debugging" are built on.
 */
import { inBounds, type Bounds } from '../keys.js'
import { LOG_END, logKey, logKeyRevision } from './keyspace.js'
import { ITERATOR_STEP_BYTES, type Db, type Snapshot } from './latest-view.js'
import { decodeEntry } from './records.js'
import { OP_PUT, opKeyValue } from '../ops.js'
import type { Event, LogEntry } from '../types.js'
import { VersionReader } from './version-reader.js'

export interface HistoryScan {
  bounds: Bounds
  from: number
  to: number
  /** Stop at a revision boundary once at least this many events were collected (0 = no limit). */
  limit: number
  prevKv: boolean
}

export interface HistoryScanResult {
  entries: LogEntry[]
  more: boolean
  nextRevision: number
}

const STEP = 128

export async function readHistory(db: Db, snapshot: Snapshot, scan: HistoryScan): Promise<HistoryScanResult> {
  const entries: LogEntry[] = []
  if (scan.from > scan.to) return { entries, more: false, nextRevision: scan.from }
  const versions = scan.prevKv ? new VersionReader(db, snapshot) : undefined
  const it = db.iterator({
    gte: logKey(scan.from),
    lt: scan.to === Infinity ? LOG_END : logKey(scan.to + 1),
    snapshot,
    highWaterMarkBytes: ITERATOR_STEP_BYTES,
  })
  let events = 0
  let next: number
  try {
    while (true) {
      const step = await it.nextv(STEP)
      if (step.length === 0) return { entries, more: false, nextRevision: scan.to + 1 }
      for (const [k, v] of step) {
        const revision = logKeyRevision(k)
        next = revision + 1
        const entry = decodeEntry(v)
        const matching: Event[] = []
        for (const op of entry.ops) {
          if (!inBounds(scan.bounds, op.key)) continue
          const event: Event = { type: op.kind === OP_PUT ? 'PUT' : 'DELETE', kv: opKeyValue(op, revision) }
          if (versions !== undefined && op.prevRevision > 0) {
            const prev = versions.versionAt(op.key, op.prevRevision)
            if (prev !== undefined) event.prevKv = prev
          }
          matching.push(event)
        }
        if (matching.length === 0) continue
        entries.push(
          entry.author === undefined
            ? { revision, timestamp: entry.timestamp, events: matching }
            : { revision, timestamp: entry.timestamp, events: matching, author: entry.author },
        )
        events += matching.length
        if (scan.limit > 0 && events >= scan.limit) {
          return { entries, more: revision < scan.to, nextRevision: next }
        }
      }
    }
  } finally {
    await it.close()
  }
}
