/**
 * Where automatic compaction may put the floor (the compact revision), from the configured policies:
 *
 *   revision   keep the last N revisions            candidate = current - N
 *   periodic   keep a duration of history           candidate = first revision committed within it
 *   quota      database over quotaBackendBytes       candidate = current - minRetain (the most aggressive)
 *
 * The most aggressive candidate wins, capped so that `minRetain` recent revisions always stay. Consumer
 * cursors then hold the floor back to the slowest one (it resumes at its revision + 1), except cursors
 * lagging more than `maxCursorLag` behind the head: they expire and hold nothing back. Pure: no I/O.
 */
import type { AutoCompactionMode } from '../config/index.js'

export interface RetentionPolicy {
  mode: AutoCompactionMode
  /** mode revision: revisions to keep. */
  revisions: number
  /** mode periodic: ms of history to keep. */
  durationMs: number
  /** 0 = no quota. */
  quotaBytes: number
  minRetain: number
  maxCursorLag: number
}

export interface CursorPosition {
  name: string
  /** The last revision the consumer has processed. */
  revision: number
  expired: boolean
}

export interface FloorInputs {
  current: number
  compactRevision: number
  dbSize: number
  /** For periodic: the first revision committed at or after now - durationMs (current + 1 if none). */
  firstRevisionInWindow?: number
  cursors: CursorPosition[]
}

export interface FloorPlan {
  /** The floor to compact to, or undefined when it would not rise. */
  target: number | undefined
  /** Cursors that lag beyond maxCursorLag and must be marked expired. */
  expire: string[]
  overQuota: boolean
  /** Which rules set the target, for logs and status. */
  reasons: string[]
}

const HOUR = 3_600_000

/** Parses --auto-compaction-retention for the mode; throws an Error naming the setting. */
export function parseRetention(mode: AutoCompactionMode, retention: string): { revisions: number; durationMs: number } {
  const fail = (why: string) => new Error(`invalid value for --auto-compaction-retention: "${retention}" ${why}`)
  const text = retention.trim()
  if (mode === 'off' || text === '0' || text === '') return { revisions: 0, durationMs: 0 }
  if (mode === 'revision') {
    if (!/^[0-9]+$/.test(text)) throw fail('is not a whole number of revisions (mode revision)')
    return { revisions: Number(text), durationMs: 0 }
  }
  // periodic: a bare number is hours (etcd); otherwise units h, m, s, ms, combinable (1h30m).
  if (/^[0-9]+(\.[0-9]+)?$/.test(text)) return { revisions: 0, durationMs: Math.round(Number(text) * HOUR) }
  const units: Record<string, number> = { h: HOUR, m: 60_000, s: 1000, ms: 1 }
  let total = 0
  let rest = text
  while (rest.length > 0) {
    const m = /^([0-9]+(?:\.[0-9]+)?)(ms|h|m|s)/.exec(rest)
    if (m === null) throw fail('is not a duration like 1h, 30m or 1h30m (mode periodic)')
    total += Number(m[1]) * units[m[2]]
    rest = rest.slice(m[0].length)
  }
  return { revisions: 0, durationMs: Math.round(total) }
}

export function planFloor(policy: RetentionPolicy, inputs: FloorInputs): FloorPlan {
  const { current, compactRevision } = inputs
  const ceiling = current - policy.minRetain
  const reasons: string[] = []
  let target = 0
  if (policy.mode === 'revision' && policy.revisions > 0 && current - policy.revisions > target) {
    target = current - policy.revisions
    reasons.push(`revision: keep ${policy.revisions}`)
  }
  if (policy.mode === 'periodic' && policy.durationMs > 0 && inputs.firstRevisionInWindow !== undefined) {
    const candidate = Math.min(inputs.firstRevisionInWindow, current)
    if (candidate > target) {
      target = candidate
      reasons.push(`periodic: keep ${policy.durationMs} ms`)
    }
  }
  const overQuota = policy.quotaBytes > 0 && inputs.dbSize > policy.quotaBytes
  if (overQuota && ceiling > target) {
    target = ceiling
    reasons.push(`quota: ${inputs.dbSize} > ${policy.quotaBytes} bytes`)
  }
  if (target > ceiling) {
    target = ceiling
    reasons.push(`min retain ${policy.minRetain}`)
  }
  const expire: string[] = []
  for (const c of inputs.cursors) {
    if (c.expired) continue
    if (current - c.revision > policy.maxCursorLag) {
      expire.push(c.name)
      continue
    }
    if (c.revision + 1 < target) {
      target = c.revision + 1
      reasons.push(`cursor ${c.name} at ${c.revision}`)
    }
  }
  return { target: target > compactRevision && target >= 1 ? target : undefined, expire, overQuota, reasons }
}
