/**
 * Shared pieces of the log conformance suite: the per-test fixture, error assertions and readable views of
 * kvs and events (so a failing deep-equal prints keys and values as text, not as byte arrays).
 */
import { expect } from 'chai'
import type { Log } from '../../../log/backend.js'
import type { ErrorCode } from '../../../log/errors.js'
import type { Event, KeyValue, LogEntry, RangeResult } from '../../../log/types.js'

/** What a backend's test gives the suite: a fresh, empty log, and a way to close and reopen it on the same storage. */
export interface LogFixture {
  log: Log
  /** Closes the current log (if still open) and opens a new one on the same storage. */
  reopen: () => Promise<Log>
  /** Closes whatever is open and removes the storage. */
  cleanup: () => Promise<void>
}

export type OpenLog = () => Promise<LogFixture>

/** The limits the backend under test must be opened with (the suite tests them at their edges). */
export interface ConformanceLimits {
  maxTxnOps: number
  maxRequestBytes: number
  segmentMaxEntries: number
  /** Shortest lease TTL in seconds; expired leases must be revoked within ~100 ms of their deadline. */
  leaseMinTtl: number
}

export interface SuiteContext {
  open: OpenLog
  limits: ConformanceLimits
}

/** The log of the current test; `reopen` swaps it for the reopened one. */
export interface LogHandle {
  readonly log: Log
  reopen(): Promise<Log>
}

/** Registers beforeEach/afterEach hooks that give every test of the enclosing describe a fresh, empty log. */
export function useLog(ctx: SuiteContext): LogHandle {
  let fixture: LogFixture | undefined
  let current: Log | undefined
  beforeEach(async () => {
    fixture = await ctx.open()
    current = fixture.log
  })
  afterEach(async () => {
    const f = fixture
    fixture = undefined
    current = undefined
    if (f !== undefined) await f.cleanup()
  })
  return {
    get log(): Log {
      if (current === undefined) throw new Error('no log: used outside a test')
      return current
    },
    async reopen(): Promise<Log> {
      if (fixture === undefined) throw new Error('no fixture: used outside a test')
      current = await fixture.reopen()
      return current
    },
  }
}

export const b = (s: string): Buffer => Buffer.from(s, 'utf8')

/** [0x00]: as a key, the smallest key; as a rangeEnd, "no upper bound". Both together address every key. */
export const ZERO = Buffer.from([0])

export interface CodedError {
  code: ErrorCode
  details: Record<string, unknown>
}

/**
 * Runs `fn` and asserts it fails (by rejecting or by throwing) with one of `codes`. Returns the error.
 * Only the code is asserted, never the message.
 */
export async function expectCode(fn: () => unknown, codes: ErrorCode | ErrorCode[], what = ''): Promise<CodedError> {
  const wanted = Array.isArray(codes) ? codes : [codes]
  let result: unknown
  try {
    result = await fn()
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code
    expect(code, `${what}: error code of ${String(err)}`).to.be.oneOf(wanted)
    const details = (err as { details?: unknown }).details
    return { code: code as ErrorCode, details: (details ?? {}) as Record<string, unknown> }
  }
  expect.fail(`${what}: expected an error with code ${wanted.join(' or ')}, got a result: ${inspect(result)}`)
}

function inspect(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x))
  } catch {
    return String(v)
  }
}

/** Bytes as text when printable ASCII, else as hex (for readable assertion failures). */
export function show(buf: Uint8Array): string {
  const bytes = Buffer.from(buf)
  return bytes.every((c) => c >= 0x20 && c < 0x7f) ? bytes.toString('latin1') : `hex:${bytes.toString('hex')}`
}

export interface KvView {
  key: string
  value: string
  createRevision: number
  modRevision: number
  version: number
  lease: string
}

export function kvView(kv: KeyValue): KvView {
  expect(Buffer.isBuffer(kv.key), 'kv.key is a Buffer').to.equal(true)
  expect(Buffer.isBuffer(kv.value), 'kv.value is a Buffer').to.equal(true)
  expect(typeof kv.lease, 'kv.lease is a bigint').to.equal('bigint')
  return {
    key: show(kv.key),
    value: show(kv.value),
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
    lease: kv.lease.toString(),
  }
}

export const kvViews = (kvs: readonly KeyValue[]): KvView[] => kvs.map(kvView)

export const optKv = (kv: KeyValue | undefined): KvView | undefined => (kv === undefined ? undefined : kvView(kv))

export interface EventView {
  type: string
  kv: KvView
  prevKv?: KvView
}

export function eventView(e: Event, withPrev = true): EventView {
  const v: EventView = { type: e.type, kv: kvView(e.kv) }
  if (withPrev && e.prevKv !== undefined) v.prevKv = kvView(e.prevKv)
  return v
}

export interface EntryView {
  revision: number
  events: EventView[]
}

/** An entry without its timestamp (which tests check separately), optionally without prevKvs. */
export function entryView(e: LogEntry, withPrev = true): EntryView {
  return { revision: e.revision, events: e.events.map((ev) => eventView(ev, withPrev)) }
}

export const entryViews = (entries: readonly LogEntry[], withPrev = true): EntryView[] => entries.map((e) => entryView(e, withPrev))

/** Every key, at the latest or a given revision. */
export function rangeAll(log: Log, revision?: number): Promise<RangeResult> {
  return log.range(ZERO, revision === undefined ? { rangeEnd: ZERO } : { rangeEnd: ZERO, revision })
}

/** The whole history between two revisions, read in one call (no limit). */
export async function historyAll(log: Log, fromRevision: number, toRevision?: number, prevKv = true): Promise<LogEntry[]> {
  const r = await log.history(ZERO, { rangeEnd: ZERO, fromRevision, toRevision, prevKv })
  expect(r.more, 'history without a limit has no more').to.equal(false)
  return r.entries
}

/** Runs `n` puts sequentially, returning their revisions. */
export async function putMany(log: Log, pairs: Array<[string, string]>): Promise<number[]> {
  const revs: number[] = []
  for (const [k, v] of pairs) revs.push((await log.put(k, v)).revision)
  return revs
}
