/**
 * Shared pieces of the watch hub tests: a real LevelLog in a temp dir, a Log wrapper that can hold
 * history reads back (to widen the catch-up race on purpose), a recording sink that checks the delivery
 * contract as it goes, and the expected stream of a watch computed from log.history.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Log } from '../../../log/backend.js'
import type { KvlogError } from '../../../log/errors.js'
import { openLevelLog } from '../../../log/level/level-log.js'
import type { Event, HistoryOptions, HistoryResult, KeyValue } from '../../../log/types.js'
import type { WatchBatch, WatchSink, WatchSpec } from '../../../log/watch/types.js'

export interface TempLog {
  log: Log
  cleanup(): Promise<void>
}

export async function openTempLog(): Promise<TempLog> {
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-watch-'))
  const log = await openLevelLog({ dir, fsync: 'never', compactionBatchRevisions: 7 })
  return {
    log,
    cleanup: async () => {
      await log.close().catch(() => undefined)
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A Log that forwards to a real one, records history reads, and can make them wait: while `gate` is set,
 * every history read is made (the snapshot taken) and then held until the gate resolves.
 */
export class SpyLog implements Log {
  readonly reads: Array<{ from: number; to: number }> = []
  gate: Promise<void> | undefined
  /** Extra milliseconds before each read answers (random delays shuffle catch-up against commits). */
  delay: (() => number) | undefined

  constructor(readonly inner: Log) {}

  get revision(): number {
    return this.inner.revision
  }
  get compactRevision(): number {
    return this.inner.compactRevision
  }
  txn: Log['txn'] = (r) => this.inner.txn(r)
  put: Log['put'] = (k, v, o) => this.inner.put(k, v, o)
  delete: Log['delete'] = (k, o) => this.inner.delete(k, o)
  get: Log['get'] = (k, o) => this.inner.get(k, o)
  range: Log['range'] = (k, o) => this.inner.range(k, o)
  rangeInto: Log['rangeInto'] = (k, o, s) => this.inner.rangeInto(k, o, s)
  compact: Log['compact'] = (r, o) => this.inner.compact(r, o)
  status: Log['status'] = () => this.inner.status()
  subscribe: Log['subscribe'] = (l) => this.inner.subscribe(l)
  close: Log['close'] = () => this.inner.close()
  revisionAt: Log['revisionAt'] = (t) => this.inner.revisionAt(t)
  reclaimSpace: Log['reclaimSpace'] = () => this.inner.reclaimSpace()
  readMeta: Log['readMeta'] = (n) => this.inner.readMeta(n)
  writeMeta: Log['writeMeta'] = (n, v) => this.inner.writeMeta(n, v)
  alarms: Log['alarms'] = () => this.inner.alarms()
  setAlarm: Log['setAlarm'] = (k, a) => this.inner.setAlarm(k, a)
  leaseGrant: Log['leaseGrant'] = (t, i) => this.inner.leaseGrant(t, i)
  leaseRevoke: Log['leaseRevoke'] = (i) => this.inner.leaseRevoke(i)
  leaseKeepAlive: Log['leaseKeepAlive'] = (i) => this.inner.leaseKeepAlive(i)
  leaseTimeToLive: Log['leaseTimeToLive'] = (i, o) => this.inner.leaseTimeToLive(i, o)
  leases: Log['leases'] = () => this.inner.leases()
  snapshot: Log['snapshot'] = (c) => this.inner.snapshot(c)

  async history(key: Parameters<Log['history']>[0], options: HistoryOptions = {}): Promise<HistoryResult> {
    this.reads.push({ from: options.fromRevision ?? 0, to: options.toRevision ?? 0 })
    const result = this.inner.history(key, options)
    const gate = this.gate
    const ms = this.delay?.() ?? 0
    if (gate !== undefined || ms > 0) result.catch(() => undefined)
    if (gate !== undefined) await gate
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
    return result
  }
}

/** A gate for SpyLog: open() lets held reads through. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

// ---------------------------------------------------------------------------------------------------------
// Readable views of events

export interface EventView {
  revision: number
  type: string
  key: string
  value: string
  createRevision: number
  modRevision: number
  version: number
  prev?: string
}

function kvText(kv: KeyValue): string {
  return `${kv.key.toString('latin1')}=${kv.value.toString('latin1')}@c${kv.createRevision}m${kv.modRevision}v${kv.version}l${kv.lease}`
}

export function eventView(e: Event, revision: number): EventView {
  const v: EventView = {
    revision,
    type: e.type,
    key: e.kv.key.toString('latin1'),
    value: e.kv.value.toString('latin1'),
    createRevision: e.kv.createRevision,
    modRevision: e.kv.modRevision,
    version: e.kv.version,
  }
  if (e.prevKv !== undefined) v.prev = kvText(e.prevKv)
  return v
}

// ---------------------------------------------------------------------------------------------------------
// The recording sink

export type Call = { kind: 'events'; batch: WatchBatch } | { kind: 'progress'; revision: number } | { kind: 'canceled'; err: KvlogError }

/**
 * Records every call and checks the contract on the fly (violations are collected, then asserted by
 * check()): batches non-empty, revisions strictly increasing across batches (so a revision is never split
 * or repeated), batch.revision = the last event's, progress never below what was delivered, nothing after
 * canceled.
 */
export class Recorder implements WatchSink {
  readonly calls: Call[] = []
  readonly violations: string[] = []
  /** Events delivered, each with its revision. */
  readonly seen: EventView[] = []
  lastRevision = 0
  /** Return value of events(): set to a function to simulate a backed-up consumer. */
  accept: (batch: WatchBatch) => boolean = () => true
  private ended = false

  constructor(readonly name = 'watch') {}

  events(batch: WatchBatch): boolean {
    this.note('events')
    this.calls.push({ kind: 'events', batch })
    if (batch.events.length === 0) this.violations.push(`${this.name}: empty batch`)
    let last = 0
    for (const e of batch.events) {
      const rev = e.kv.modRevision
      if (rev < last) this.violations.push(`${this.name}: revision ${rev} after ${last} inside a batch`)
      if (rev !== last && rev <= this.lastRevision) {
        this.violations.push(`${this.name}: revision ${rev} delivered again or out of order (after ${this.lastRevision})`)
      }
      last = rev
      this.seen.push(eventView(e, rev))
    }
    if (batch.revision !== last) this.violations.push(`${this.name}: batch.revision ${batch.revision}, last event at ${last}`)
    this.lastRevision = Math.max(this.lastRevision, last)
    return this.accept(batch)
  }

  canceled(err: KvlogError): void {
    this.note('canceled')
    this.calls.push({ kind: 'canceled', err })
    this.ended = true
  }

  progress(revision: number): void {
    this.note('progress')
    this.calls.push({ kind: 'progress', revision })
    if (revision < this.lastRevision) this.violations.push(`${this.name}: progress ${revision} below delivered ${this.lastRevision}`)
  }

  get batches(): WatchBatch[] {
    return this.calls.flatMap((c) => (c.kind === 'events' ? [c.batch] : []))
  }

  get progressRevisions(): number[] {
    return this.calls.flatMap((c) => (c.kind === 'progress' ? [c.revision] : []))
  }

  get cancellation(): KvlogError | undefined {
    const c = this.calls.find((x) => x.kind === 'canceled')
    return c?.kind === 'canceled' ? c.err : undefined
  }

  check(): void {
    expect(this.violations, `${this.name}: contract violations`).to.deep.equal([])
  }

  private note(kind: string): void {
    if (this.ended) this.violations.push(`${this.name}: ${kind}() after canceled()`)
  }
}

// ---------------------------------------------------------------------------------------------------------
// Expected streams

/** What a watch with this spec must deliver between `from` and `to`, according to log.history. */
export async function expectedEvents(log: Log, spec: WatchSpec, from: number, to: number): Promise<EventView[]> {
  if (from > to) return []
  const h = await log.history(spec.key, { rangeEnd: spec.rangeEnd, fromRevision: from, toRevision: to, prevKv: true })
  const out: EventView[] = []
  for (const entry of h.entries) {
    for (const e of entry.events) {
      if (e.type === 'PUT' && spec.filters?.noPut === true) continue
      if (e.type === 'DELETE' && spec.filters?.noDelete === true) continue
      out.push(eventView(spec.prevKv === true ? e : { type: e.type, kv: e.kv }, entry.revision))
    }
  }
  return out
}

export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) expect.fail(`timed out waiting for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** Lets queued microtasks and immediates run (catch-up steps, commit publication). */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve))
}

export { rng } from '../../support/random.js'

export const ZERO = Buffer.from([0])
