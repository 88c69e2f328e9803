/**
 * A deliberately simple in-memory model of the log's semantics (etcd v3 MVCC), for the model-based test.
 * Every key keeps its full list of versions (a deleted key gets a tombstone); compaction only raises a floor,
 * so the model answers every read at or above the floor from complete data. No indexes, no cleverness: the
 * point is to be obviously right.
 *
 * Key ranges are "selectors" here, interpreted directly (a prefix is a startsWith test), so the model does not
 * share the implementation's rangeEnd arithmetic.
 */
import type { ErrorCode } from '../../../log/errors.js'

export interface ModelKv {
  key: Buffer
  value: Buffer
  createRevision: number
  modRevision: number
  version: number
  lease: bigint
}

export interface ModelEvent {
  type: 'PUT' | 'DELETE'
  kv: ModelKv
  prevKv?: ModelKv
}

export interface ModelEntry {
  revision: number
  events: ModelEvent[]
}

/** Which keys an operation addresses. `from` = every key >= key (etcd's rangeEnd [0x00]). */
export type Selector =
  | { kind: 'key'; key: Buffer }
  | { kind: 'prefix'; prefix: Buffer }
  | { kind: 'from'; key: Buffer }
  | { kind: 'interval'; key: Buffer; end: Buffer }

export function selects(sel: Selector, key: Buffer): boolean {
  switch (sel.kind) {
    case 'key':
      return key.equals(sel.key)
    case 'prefix':
      return key.length >= sel.prefix.length && key.subarray(0, sel.prefix.length).equals(sel.prefix)
    case 'from':
      return Buffer.compare(key, sel.key) >= 0
    case 'interval':
      return Buffer.compare(key, sel.key) >= 0 && Buffer.compare(key, sel.end) < 0
  }
}

export class ModelError extends Error {
  constructor(readonly code: ErrorCode) {
    super(code)
  }
}

export interface ModelRangeOptions {
  revision?: number
  limit?: number
  keysOnly?: boolean
  countOnly?: boolean
  sortOrder?: 'NONE' | 'ASCEND' | 'DESCEND'
  minModRevision?: number
  maxCreateRevision?: number
}

export interface ModelRange {
  kvs: ModelKv[]
  more: boolean
  count: number
  revision: number
}

export interface ModelCompare {
  key: Buffer
  target: 'VALUE' | 'VERSION' | 'CREATE' | 'MOD'
  result: 'EQUAL' | 'NOT_EQUAL' | 'LESS' | 'GREATER'
  value: number | Buffer
}

export type ModelOp =
  | { type: 'put'; key: Buffer; value: Buffer; prevKv?: boolean }
  | { type: 'delete'; sel: Selector; prevKv?: boolean }
  | { type: 'range'; sel: Selector }

export type ModelOpResult =
  | { type: 'put'; prevKv?: ModelKv }
  | { type: 'delete'; deleted: number; prevKvs?: ModelKv[] }
  | { type: 'range'; kvs: ModelKv[]; count: number }

export interface ModelTxn {
  compare: ModelCompare[]
  success: ModelOp[]
  failure: ModelOp[]
}

export interface ModelTxnResult {
  succeeded: boolean
  results: ModelOpResult[]
  revision: number
  wrote: boolean
}

interface Version {
  revision: number
  /** undefined: deleted at this revision */
  kv?: ModelKv
}

const hex = (b: Buffer): string => b.toString('hex')

export class KvModel {
  revision = 1
  compactRevision: number
  readonly entries: ModelEntry[] = []
  private readonly versions = new Map<string, Version[]>()

  constructor(initialCompactRevision = 0) {
    this.compactRevision = initialCompactRevision
  }

  /** The key's state at `revision` (the newest version at or below it), undefined if absent there. */
  at(key: Buffer, revision: number): ModelKv | undefined {
    const list = this.versions.get(hex(key)) ?? []
    let found: Version | undefined
    for (const v of list) if (v.revision <= revision) found = v
    return found?.kv
  }

  /** All live keys selected at `revision`, in key order. */
  private select(sel: Selector, revision: number): ModelKv[] {
    const out: ModelKv[] = []
    for (const list of this.versions.values()) {
      const kv = this.atList(list, revision)
      if (kv !== undefined && selects(sel, kv.key)) out.push(kv)
    }
    return out.sort((x, y) => Buffer.compare(x.key, y.key))
  }

  private atList(list: Version[], revision: number): ModelKv | undefined {
    let found: Version | undefined
    for (const v of list) if (v.revision <= revision) found = v
    return found?.kv
  }

  /** Resolves a requested read revision (0 = latest) or throws COMPACTED / FUTURE_REVISION. */
  readRevision(requested: number | undefined): number {
    const rev = requested === undefined || requested === 0 ? this.revision : requested
    if (rev > this.revision) throw new ModelError('FUTURE_REVISION')
    if (rev < this.compactRevision) throw new ModelError('COMPACTED')
    return rev
  }

  range(sel: Selector, opts: ModelRangeOptions = {}): ModelRange {
    const revision = this.readRevision(opts.revision)
    const all = this.select(sel, revision)
    let kvs = all.filter(
      (kv) =>
        (opts.minModRevision === undefined || opts.minModRevision === 0 || kv.modRevision >= opts.minModRevision) &&
        (opts.maxCreateRevision === undefined || opts.maxCreateRevision === 0 || kv.createRevision <= opts.maxCreateRevision),
    )
    if (opts.sortOrder === 'DESCEND') kvs.reverse()
    let more = false
    const limit = opts.limit ?? 0
    if (limit > 0 && kvs.length > limit) {
      kvs = kvs.slice(0, limit)
      more = true
    }
    if (opts.countOnly === true) return { kvs: [], more: false, count: all.length, revision }
    if (opts.keysOnly === true) kvs = kvs.map((kv) => ({ ...kv, value: Buffer.alloc(0) }))
    return { kvs, more, count: all.length, revision }
  }

  get(key: Buffer, revision?: number): ModelKv | undefined {
    return this.at(key, this.readRevision(revision))
  }

  txn(req: ModelTxn): ModelTxnResult {
    checkDuplicates(req.success)
    checkDuplicates(req.failure)
    const succeeded = req.compare.every((c) => this.holds(c))
    const ops = succeeded ? req.success : req.failure
    const next = this.revision + 1
    // the txn's own writes, visible to its later ops; undefined = deleted in this txn
    const overlay = new Map<string, ModelKv | undefined>()
    const current = (key: Buffer): ModelKv | undefined => {
      const id = hex(key)
      return overlay.has(id) ? overlay.get(id) : this.at(key, this.revision)
    }
    const liveKeys = (sel: Selector): ModelKv[] => {
      const ids = new Set<string>([...this.versions.keys(), ...overlay.keys()])
      const out: ModelKv[] = []
      for (const id of ids) {
        const kv = current(Buffer.from(id, 'hex'))
        if (kv !== undefined && selects(sel, kv.key)) out.push(kv)
      }
      return out.sort((x, y) => Buffer.compare(x.key, y.key))
    }
    const events: ModelEvent[] = []
    const results: ModelOpResult[] = []
    for (const op of ops) {
      if (op.type === 'put') {
        const prev = current(op.key)
        const kv: ModelKv = {
          key: op.key,
          value: op.value,
          createRevision: prev?.createRevision ?? next,
          modRevision: next,
          version: (prev?.version ?? 0) + 1,
          lease: 0n,
        }
        overlay.set(hex(op.key), kv)
        events.push(prev === undefined ? { type: 'PUT', kv } : { type: 'PUT', kv, prevKv: prev })
        results.push(op.prevKv === true && prev !== undefined ? { type: 'put', prevKv: prev } : { type: 'put' })
      } else if (op.type === 'delete') {
        const gone = liveKeys(op.sel)
        for (const prev of gone) {
          overlay.set(hex(prev.key), undefined)
          events.push({ type: 'DELETE', kv: tombstone(prev.key, next), prevKv: prev })
        }
        results.push(
          op.prevKv === true ? { type: 'delete', deleted: gone.length, prevKvs: gone } : { type: 'delete', deleted: gone.length },
        )
      } else {
        const kvs = liveKeys(op.sel)
        results.push({ type: 'range', kvs, count: kvs.length })
      }
    }
    if (events.length === 0) return { succeeded, results, revision: this.revision, wrote: false }
    this.revision = next
    for (const [id, kv] of overlay) {
      const list = this.versions.get(id) ?? []
      list.push(kv === undefined ? { revision: next } : { revision: next, kv })
      this.versions.set(id, list)
    }
    this.entries.push({ revision: next, events })
    return { succeeded, results, revision: next, wrote: true }
  }

  private holds(c: ModelCompare): boolean {
    const kv = this.at(c.key, this.revision)
    if (c.target === 'VALUE') {
      if (kv === undefined) return false
      return outcome(Buffer.compare(kv.value, c.value as Buffer), c.result)
    }
    const actual = kv === undefined ? 0 : c.target === 'VERSION' ? kv.version : c.target === 'CREATE' ? kv.createRevision : kv.modRevision
    return outcome(Math.sign(actual - (c.value as number)), c.result)
  }

  /**
   * Raises the floor. At or below the current floor: COMPACTED (what etcd and LevelLog answer); above the
   * current revision: FUTURE_REVISION.
   */
  compact(revision: number): number {
    if (revision > this.revision) throw new ModelError('FUTURE_REVISION')
    if (revision <= this.compactRevision) throw new ModelError('COMPACTED')
    this.compactRevision = revision
    return revision
  }

  /** Events of the selected keys in [from, to], grouped by revision (revisions without one left out). */
  history(sel: Selector, from: number, to: number | undefined, prevKv: boolean): ModelEntry[] {
    if (from < this.compactRevision) throw new ModelError('COMPACTED')
    const last = to === undefined || to === 0 ? this.revision : to
    if (last > this.revision) throw new ModelError('FUTURE_REVISION')
    const out: ModelEntry[] = []
    for (const e of this.entries) {
      if (e.revision < from || e.revision > last) continue
      const events = e.events
        .filter((ev) => selects(sel, ev.kv.key))
        .map((ev) => (prevKv || ev.prevKv === undefined ? ev : { type: ev.type, kv: ev.kv }))
      if (events.length > 0) out.push({ revision: e.revision, events })
    }
    return out
  }
}

function tombstone(key: Buffer, revision: number): ModelKv {
  return { key, value: Buffer.alloc(0), createRevision: 0, modRevision: revision, version: 0, lease: 0n }
}

/** Whether a comparison's sign (actual vs operand) satisfies a compare result. */
export function outcome(sign: number, result: ModelCompare['result']): boolean {
  switch (result) {
    case 'EQUAL':
      return sign === 0
    case 'NOT_EQUAL':
      return sign !== 0
    case 'LESS':
      return sign < 0
    case 'GREATER':
      return sign > 0
  }
}

/** etcd's rule, checked per branch whether or not it runs: no key put twice, no put inside a deleted range. */
function checkDuplicates(ops: ModelOp[]): void {
  const puts = ops.filter((op): op is Extract<ModelOp, { type: 'put' }> => op.type === 'put')
  const dels = ops.filter((op): op is Extract<ModelOp, { type: 'delete' }> => op.type === 'delete')
  const seen = new Set<string>()
  for (const p of puts) {
    const id = hex(p.key)
    if (seen.has(id) || dels.some((d) => selects(d.sel, p.key))) throw new ModelError('DUPLICATE_KEY')
    seen.add(id)
  }
}
