/**
 * Checks recorded watch streams against an oracle history (docs/api.md, "Watch"; docs/architecture.md, "How a watch flows").
 *
 * The oracle is GET /v1/history over every key with prevKv, fetched incrementally (Oracle.fetch) before
 * anything that could hide history from it (a compaction, a restart) and at the end.
 *
 * A logical watch is one spec (key selection, filters, prevKv, start revision) followed across
 * connections: each segment is one watch id on one connection, and every segment after the first starts
 * where the previous one left off (its last event's revision + 1, or its last progress revision + 1). A
 * COMPACTED cancel ends the logical watch; a client relists and starts a new logical watch.
 *
 * Every violation is a string that starts with its guarantee in brackets, e.g. "[reliable] ...", so tests
 * assert `expect(checkWatches(...)).to.deep.equal([])` and the checker's own tests look for the tag.
 */
import type { Received, WatchMessage, WireEvent, WireKv } from '../../support/watch-client.js'

// ---------------------------------------------------------------------------------------------------------
// Oracle

export interface OracleEvent {
  type: 'PUT' | 'DELETE'
  revision: number
  kv: WireKv
  prevKv?: WireKv
}

/** What the checker needs of an oracle: every event of revisions first..last, in revision and op order. */
export interface OracleView {
  /** The first revision covered (inclusive). */
  first: number
  /** The last revision covered (inclusive). */
  last: number
  events: readonly OracleEvent[]
}

/** GET /v1/history over all keys, prevKv=true, fetched from where it left off up to the current revision. */
export class Oracle implements OracleView {
  readonly events: OracleEvent[] = []
  last: number
  fetches = 0

  /** `first`: the first revision to fetch (2 = from the first write of an empty store). */
  constructor(readonly first = 2) {
    this.last = first - 1
  }

  /** Fetches last + 1 .. the current revision; returns the new last revision. `headers`: e.g. Authorization. */
  async fetch(httpUrl: string, headers: Record<string, string> = {}): Promise<number> {
    this.fetches++
    let from = this.last + 1
    for (;;) {
      const qs = new URLSearchParams({ keyBase64: 'AA==', fromKey: 'true', from: String(from), prevKv: 'true', limit: '5000' })
      const res = await fetch(`${httpUrl}/v1/history?${qs}`, { headers })
      const body = (await res.json()) as {
        events: Array<OracleEvent & { time?: string }>
        more: boolean
        nextRevision: number
        error?: unknown
      }
      if (res.status !== 200) throw new Error(`oracle: history from ${from} answered ${res.status}: ${JSON.stringify(body)}`)
      for (const e of body.events) {
        if (e.revision < from) throw new Error(`oracle: history from ${from} returned revision ${e.revision}`)
        const { time: _time, ...event } = e
        this.events.push(event)
      }
      this.last = body.nextRevision - 1
      if (!body.more) return this.last
      from = body.nextRevision
    }
  }
}

/**
 * The oracle's own consistency, when it starts at an empty store (first = 2): revisions ascend, every
 * event's prevKv is the key's previous state, versions and create revisions follow from it.
 */
export function checkOracle(oracle: OracleView): string[] {
  const out: string[] = []
  if (oracle.first !== 2) return out
  const state = new Map<string, WireKv>()
  let last = 1
  for (const e of oracle.events) {
    if (e.revision < last) out.push(`[oracle] revision ${e.revision} after ${last}`)
    last = e.revision
    const key = keyB64(e.kv)
    const before = state.get(key)
    const where = `[oracle] revision ${e.revision} ${e.type} ${describeKey(e.kv)}`
    if (canonKv(e.prevKv) !== canonKv(before))
      out.push(`${where}: prevKv ${JSON.stringify(e.prevKv)}, but the key was ${JSON.stringify(before)}`)
    if (e.type === 'PUT') {
      const version = (before?.version ?? 0) + 1
      const create = before?.createRevision ?? e.revision
      if (e.kv.version !== version || e.kv.createRevision !== create || e.kv.modRevision !== e.revision) {
        out.push(`${where}: kv ${JSON.stringify(e.kv)}, expected version ${version}, createRevision ${create}, modRevision ${e.revision}`)
      }
      state.set(key, e.kv)
    } else {
      if (before === undefined) out.push(`${where}: delete of a key that did not exist`)
      state.delete(key)
    }
    if (out.length > 20) break
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------
// Specs and key selection

/** A watch's spec, in the wire's create-request shape (key selection, filters, prevKv). */
export interface WatchSelection {
  key?: string
  keyBase64?: string
  rangeEnd?: string
  rangeEndBase64?: string
  prefix?: boolean
  fromKey?: boolean
  prevKv?: boolean
  noPut?: boolean
  noDelete?: boolean
  /**
   * The door shows objects, not kvs (the resource API): an event is compared by type, key, revision and
   * value only; a DELETE's value is the deleted object, compared with the oracle's prevKv.
   */
  objectView?: boolean
}

export interface Bounds {
  start: Buffer
  /** undefined: just `start`; 'open': every key >= start; else [start, end). */
  end: Buffer | 'open' | undefined
}

function bytes(text: string | undefined, b64: string | undefined): Buffer | undefined {
  if (text !== undefined) return Buffer.from(text, 'utf8')
  if (b64 !== undefined) return Buffer.from(b64, 'base64')
  return undefined
}

export function prefixEnd(prefix: Buffer): Buffer | 'open' {
  const end = Buffer.from(prefix)
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++
      return end.subarray(0, i + 1)
    }
  }
  return 'open'
}

export function boundsOf(spec: WatchSelection): Bounds {
  const start = bytes(spec.key, spec.keyBase64)
  if (start === undefined) throw new TypeError(`watch spec without a key: ${JSON.stringify(spec)}`)
  if (spec.prefix) return { start, end: prefixEnd(start) }
  if (spec.fromKey) return { start, end: 'open' }
  const end = bytes(spec.rangeEnd, spec.rangeEndBase64)
  if (end === undefined) return { start, end: undefined }
  if (end.length === 1 && end[0] === 0) return { start, end: 'open' }
  return { start, end }
}

export function inBounds(b: Bounds, key: Buffer): boolean {
  if (b.end === undefined) return key.equals(b.start)
  if (Buffer.compare(key, b.start) < 0) return false
  return b.end === 'open' || Buffer.compare(key, b.end) < 0
}

export function keyBytes(kv: WireKv): Buffer {
  return bytes(kv.key, kv.keyBase64) ?? Buffer.alloc(0)
}

export function keyB64(kv: WireKv): string {
  return keyBytes(kv).toString('base64')
}

export function describeKey(kv: WireKv): string {
  return kv.key !== undefined ? JSON.stringify(kv.key) : `base64:${kv.keyBase64}`
}

/** A kv as one comparable string (bytes normalized, so `key` and `keyBase64` forms compare equal). */
export function canonKv(kv: WireKv | undefined): string {
  if (kv === undefined) return '-'
  const value = bytes(kv.value, kv.valueBase64) ?? Buffer.alloc(0)
  return [keyB64(kv), value.toString('base64'), kv.createRevision, kv.modRevision, kv.version, kv.lease ?? '0'].join('|')
}

/** Whether the spec wants this event (range and filters). */
export function matches(spec: WatchSelection, bounds: Bounds, e: { type: string; kv: WireKv }): boolean {
  if (e.type === 'PUT' ? spec.noPut : spec.noDelete) return false
  return inBounds(bounds, keyBytes(e.kv))
}

// ---------------------------------------------------------------------------------------------------------
// Recorded watches

export interface WatchSegment {
  /** The start revision asked for; absent or 0 = from now (the created message's revision + 1). */
  startRevision?: number
  /** This watch id's messages on its connection, in arrival order. */
  messages: ReadonlyArray<Received | WatchMessage>
  label?: string
}

export interface LogicalWatch {
  name: string
  spec: WatchSelection
  segments: WatchSegment[]
}

export interface CheckOptions {
  /** Every logical watch not ended by a cancel must have seen (event or progress) at least this revision. */
  finalRevision?: number
  /** Most violations reported per segment (default 10). */
  maxPerSegment?: number
}

/** Where a segment left off. */
export interface SegmentSummary {
  start: number
  /** The highest revision the segment vouches for: its last event's, or its last progress notice's. */
  lastSeen: number
  events: number
  canceled?: WatchMessage
}

function isReceived(m: Received | WatchMessage): m is Received {
  return typeof (m as Received).seq === 'number' && typeof (m as Received).msg === 'object'
}

/** Checks every logical watch against the oracle; returns the violations (empty when all is well). */
export function checkWatches(oracle: OracleView, watches: readonly LogicalWatch[], options: CheckOptions = {}): string[] {
  const out: string[] = []
  const byRevision = indexByRevision(oracle)
  for (const w of watches) {
    let resumeFrom: number | undefined
    let ended: WatchMessage | undefined
    let last: SegmentSummary | undefined
    w.segments.forEach((segment, i) => {
      const name = `${w.name}/${i}${segment.label ? ` (${segment.label})` : ''}`
      if (ended !== undefined) out.push(`[resumable] ${name}: a segment after the watch was canceled (${JSON.stringify(ended)})`)
      const summary = checkSegment(oracle, byRevision, w.spec, segment, name, resumeFrom, out, options.maxPerSegment ?? 10)
      resumeFrom = summary.lastSeen + 1
      ended = summary.canceled
      last = summary
    })
    if (options.finalRevision !== undefined && last !== undefined && last.canceled === undefined && last.lastSeen < options.finalRevision) {
      out.push(`[reliable] ${w.name}: saw revisions only up to ${last.lastSeen}, not the final revision ${options.finalRevision}`)
    }
  }
  return out
}

/** Summarizes a segment (start and where it left off), without checking it. */
export function summarizeSegment(segment: WatchSegment): SegmentSummary {
  const msgs = segment.messages.map((m) => (isReceived(m) ? m.msg : m))
  const created = msgs[0]?.type === 'created' ? msgs[0] : undefined
  const start = segment.startRevision !== undefined && segment.startRevision > 0 ? segment.startRevision : (created?.revision ?? 0) + 1
  let lastSeen = start - 1
  let events = 0
  let canceled: WatchMessage | undefined
  for (const m of msgs) {
    if (m.type === 'events' && m.events !== undefined) {
      events += m.events.length
      for (const e of m.events) lastSeen = Math.max(lastSeen, e.revision)
    } else if (m.type === 'progress' && typeof m.revision === 'number') {
      lastSeen = Math.max(lastSeen, m.revision)
    } else if (m.type === 'canceled') {
      canceled = m
    }
  }
  return { start, lastSeen, events, canceled }
}

interface RevisionIndex {
  revisions: number[]
  /** events of revision revisions[i] are oracle.events[offsets[i] .. offsets[i+1]) */
  offsets: number[]
}

function indexByRevision(oracle: OracleView): RevisionIndex {
  const revisions: number[] = []
  const offsets: number[] = []
  oracle.events.forEach((e, i) => {
    if (revisions.length === 0 || revisions[revisions.length - 1] !== e.revision) {
      revisions.push(e.revision)
      offsets.push(i)
    }
  })
  offsets.push(oracle.events.length)
  return { revisions, offsets }
}

/** First index i with revisions[i] >= rev. */
function lowerBound(revisions: number[], rev: number): number {
  let lo = 0
  let hi = revisions.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (revisions[mid] < rev) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** First index i with revisions[i] > rev. */
function upperBound(revisions: number[], rev: number): number {
  return lowerBound(revisions, rev + 1)
}

function oracleMatching(
  oracle: OracleView,
  index: RevisionIndex,
  spec: WatchSelection,
  bounds: Bounds,
  from: number,
  to: number,
): OracleEvent[] {
  const out: OracleEvent[] = []
  const first = lowerBound(index.revisions, from)
  const last = lowerBound(index.revisions, to + 1)
  for (let i = index.offsets[first] ?? oracle.events.length; i < (index.offsets[last] ?? oracle.events.length); i++) {
    const e = oracle.events[i]
    if (matches(spec, bounds, e)) out.push(e)
  }
  return out
}

function describe(e: WireEvent | OracleEvent): string {
  return `${e.type}@${e.revision} ${describeKey(e.kv)}`
}

function checkSegment(
  oracle: OracleView,
  index: RevisionIndex,
  spec: WatchSelection,
  segment: WatchSegment,
  name: string,
  expectedStart: number | undefined,
  sink: string[],
  max: number,
): SegmentSummary {
  const out: string[] = []
  const report = (v: string) => out.push(`${v.replace(/^(\[[^\]]+\]) /, `$1 ${name}: `)}`)
  const bounds = boundsOf(spec)
  const msgs = segment.messages.map((m) => (isReceived(m) ? m.msg : m))
  const summary = summarizeSegment(segment)
  const { start, lastSeen } = summary

  if (msgs.length > 0 && msgs[0].type !== 'created') report(`[protocol] the first message is ${JSON.stringify(msgs[0])}, not created`)
  if (expectedStart !== undefined && start !== expectedStart) {
    report(`[resumable] starts at ${start}, but the previous segment left off at ${expectedStart - 1} (resume from ${expectedStart})`)
  }
  if (start < oracle.first) report(`[oracle] starts at ${start}, before the oracle's first revision ${oracle.first}`)
  // (A watch that starts in the future has "seen" up to its start - 1 without being shown anything.)
  if (lastSeen > oracle.last && lastSeen >= start)
    report(`[oracle] saw revision ${lastSeen}, after the oracle's last revision ${oracle.last}: fetch the oracle at the end`)

  // Pass 1: message by message (ordered, unique, atomic, filtered, bookmarkable, kv shape).
  const delivered: WireEvent[] = []
  const messageOfRevision = new Map<number, number>()
  const seen = new Set<string>()
  let lastEventRevision = 0
  let lastProgress = 0
  let canceledAt = -1
  // Everything the segment vouches for, once; progress notices count into it (linear, not per notice).
  const expected = oracleMatching(oracle, index, spec, bounds, start, lastSeen)
  const expectedRevisions = expected.map((e) => e.revision)
  /** Revisions of the events delivered so far, kept sorted (they arrive sorted unless [ordered] fails). */
  const deliveredRevisions: number[] = []
  const expectedUpTo = (r: number) => upperBound(expectedRevisions, r)
  const deliveredUpTo = (r: number) => upperBound(deliveredRevisions, r) - lowerBound(deliveredRevisions, start)
  msgs.forEach((m, i) => {
    if (canceledAt >= 0) report(`[protocol] message #${i} ${JSON.stringify(m).slice(0, 200)} after canceled`)
    switch (m.type) {
      case 'created':
        if (i > 0) report(`[protocol] a second created message at #${i}`)
        if (typeof m.revision !== 'number') report(`[protocol] created without a revision`)
        break
      case 'events': {
        const evs = m.events ?? []
        if (evs.length === 0) report(`[protocol] an events message without events at #${i}`)
        if (evs.length > 0 && m.revision !== evs[evs.length - 1].revision) {
          report(`[protocol] events message revision ${m.revision} is not its last event's ${evs[evs.length - 1].revision}`)
        }
        for (const e of evs) {
          const canon = canonEvent(e, true)
          if (seen.has(canon)) {
            report(`[unique] ${describe(e)} delivered again in message #${i}`)
            continue
          }
          seen.add(canon)
          if (e.revision < lastEventRevision) report(`[ordered] ${describe(e)} after revision ${lastEventRevision}`)
          else if (e.revision === lastEventRevision && messageOfRevision.get(e.revision) !== i) {
            report(`[atomic] revision ${e.revision} split across messages #${messageOfRevision.get(e.revision)} and #${i}`)
          }
          if (e.revision < start) report(`[reliable] ${describe(e)} is before the start revision ${start}`)
          if (e.revision <= lastProgress) report(`[bookmarkable] ${describe(e)} after a progress notice at ${lastProgress}`)
          if (e.type === 'PUT' && spec.noPut) report(`[filtered] ${describe(e)} despite noPut`)
          if (e.type === 'DELETE' && spec.noDelete) report(`[filtered] ${describe(e)} despite noDelete`)
          if (!inBounds(bounds, keyBytes(e.kv))) report(`[filtered] ${describe(e)} is outside the watched keys`)
          if (!spec.prevKv && e.prevKv !== undefined) report(`[prevKv] ${describe(e)} carries a prevKv that was not asked for`)
          if (!spec.objectView) checkKvShape(e, report)
          else if (e.kv.modRevision !== e.revision)
            report(`[createFlag] ${describe(e)}: kv.modRevision ${e.kv.modRevision} is not the event's revision`)
          if (!messageOfRevision.has(e.revision)) messageOfRevision.set(e.revision, i)
          lastEventRevision = Math.max(lastEventRevision, e.revision)
          delivered.push(e)
          const at = upperBound(deliveredRevisions, e.revision)
          if (at === deliveredRevisions.length) deliveredRevisions.push(e.revision)
          else deliveredRevisions.splice(at, 0, e.revision)
        }
        break
      }
      case 'progress': {
        const r = m.revision
        if (typeof r !== 'number') {
          report(`[protocol] progress without a revision`)
          break
        }
        if (r < lastProgress) report(`[bookmarkable] progress at ${r} after progress at ${lastProgress}`)
        if (r >= start) {
          const want = expectedUpTo(r)
          const got = deliveredUpTo(r)
          if (got !== want)
            report(`[bookmarkable] progress at ${r} arrived when ${got} of the ${want} matching events at or below it had been delivered`)
        }
        lastProgress = Math.max(lastProgress, r)
        break
      }
      case 'canceled':
        canceledAt = i
        if (m.code === 'COMPACTED') {
          if (typeof m.compactRevision !== 'number') report(`[protocol] COMPACTED without compactRevision`)
          else if (lastSeen + 1 >= m.compactRevision) {
            report(`[reliable] canceled COMPACTED at ${m.compactRevision}, but the watch could resume from ${lastSeen + 1}`)
          }
        } else if (m.code !== undefined && m.code !== 'CLOSED') {
          report(`[protocol] canceled with code ${m.code}: ${m.reason}`)
        }
        break
      case 'error':
        report(`[protocol] error for this watch: ${JSON.stringify(m)}`)
        break
      default:
        report(`[protocol] unknown message ${JSON.stringify(m).slice(0, 200)}`)
    }
  })

  // Pass 2: everything from start to lastSeen, revision by revision, against the oracle.
  compareByRevision(expected, delivered, spec.prevKv === true, spec.objectView === true, report)

  sink.push(...out.slice(0, max))
  if (out.length > max) sink.push(`[more] ${name}: ${out.length - max} more violations`)
  return summary
}

function checkKvShape(e: WireEvent, report: (v: string) => void): void {
  const kv = e.kv
  if (kv.modRevision !== e.revision) report(`[createFlag] ${describe(e)}: kv.modRevision ${kv.modRevision} is not the event's revision`)
  if (e.type === 'PUT') {
    const created = kv.createRevision === kv.modRevision
    if (created !== (kv.version === 1)) {
      report(`[createFlag] ${describe(e)}: version ${kv.version} with createRevision ${kv.createRevision}, modRevision ${kv.modRevision}`)
    }
  } else if (kv.version !== 0) {
    report(`[createFlag] ${describe(e)}: a DELETE with version ${kv.version}`)
  }
}

function canonEvent(e: WireEvent | OracleEvent, withPrevKv: boolean): string {
  return `${e.type}@${e.revision}:${canonKv(e.kv)}${withPrevKv ? `<${canonKv(e.prevKv)}` : ''}`
}

function groupByRevision<T extends { revision: number }>(events: readonly T[]): Map<number, T[]> {
  const out = new Map<number, T[]>()
  for (const e of events) {
    let list = out.get(e.revision)
    if (list === undefined) out.set(e.revision, (list = []))
    list.push(e)
  }
  return out
}

/** What an object view shows of an event: key, revision, and the object's bytes (a DELETE: the deleted one). */
function canonObject(e: WireEvent | OracleEvent, oracle: boolean): string {
  const shown = e.type === 'DELETE' && oracle ? e.prevKv : e.kv
  const value = shown === undefined ? '' : (bytes(shown.value, shown.valueBase64) ?? Buffer.alloc(0)).toString('base64')
  return `${e.type}@${e.revision}:${keyB64(e.kv)}|${value}`
}

function compareByRevision(
  expected: readonly OracleEvent[],
  delivered: readonly WireEvent[],
  prevKv: boolean,
  objectView: boolean,
  report: (v: string) => void,
): void {
  const want = groupByRevision(expected)
  const got = groupByRevision(delivered)
  const revisions = [...new Set([...want.keys(), ...got.keys()])].sort((a, b) => a - b)
  for (const r of revisions) {
    const w = want.get(r) ?? []
    const g = got.get(r) ?? []
    if (g.length === 0) {
      report(`[reliable] gap: revision ${r} (${w.map(describe).join(', ')}) was never delivered`)
      continue
    }
    if (w.length === 0) {
      report(`[reliable] revision ${r} has no matching event in the oracle, but ${g.map(describe).join(', ')} was delivered`)
      continue
    }
    if (g.length !== w.length) {
      report(
        `[atomic] revision ${r}: delivered ${g.length} events (${g.map(describe).join(', ')}), the oracle has ${w.length} (${w.map(describe).join(', ')})`,
      )
      continue
    }
    for (let i = 0; i < w.length; i++) {
      const a = w[i]
      const b = g[i]
      if (a.type !== b.type || keyB64(a.kv) !== keyB64(b.kv)) {
        report(`[atomic] revision ${r}, event ${i}: delivered ${describe(b)}, the oracle has ${describe(a)} (op order)`)
      } else if (objectView) {
        if (canonObject(a, true) !== canonObject(b, false))
          report(
            `[createFlag] ${describe(b)}: object ${canonObject(b, false).slice(0, 300)}, the oracle has ${canonObject(a, true).slice(0, 300)}`,
          )
      } else if (canonKv(a.kv) !== canonKv(b.kv)) {
        report(`[createFlag] ${describe(b)}: kv ${JSON.stringify(b.kv)}, the oracle has ${JSON.stringify(a.kv)}`)
      } else if (prevKv && canonKv(a.prevKv) !== canonKv(b.prevKv)) {
        report(`[prevKv] ${describe(b)}: prevKv ${JSON.stringify(b.prevKv)}, the oracle has ${JSON.stringify(a.prevKv)}`)
      }
    }
  }
}
