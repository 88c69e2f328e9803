/**
 * Model-based test: random sequences of writes, txns, compactions and reads run against LevelLog and against
 * the in-memory model (test/log/model/kv-model.ts); after every command the results must agree (kvs, count,
 * more, revisions, error codes). Keys come from a small alphabet with shared prefixes and 0xff bytes, so
 * collisions, prefix overlaps and byte-order edges happen often.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Log } from '../../../log/backend.js'
import { prefixEnd } from '../../../log/keys.js'
import { openLevelLog } from '../../../log/level/level-log.js'
import type { Compare, KeyValue, LogEntry, Op, OpResult } from '../../../log/types.js'
import { KvModel, ModelError, type ModelCompare, type ModelEntry, type ModelKv, type ModelOp, type Selector } from '../model/kv-model.js'

// ---------------------------------------------------------------------------------------------------------
// Alphabet

const KEYS: Buffer[] = ['a', 'ab', 'abc', 'b', 'ba', 'c']
  .map((k) => Buffer.from(k))
  .concat([Buffer.from([0x61, 0xff]), Buffer.from([0xff]), Buffer.from([0x61, 0x00]), Buffer.from([0x61, 0x00, 0x00, 0x01])])
const VALUES: Buffer[] = ['', 'x', 'y', 'zz'].map((v) => Buffer.from(v)).concat([Buffer.from([0x00, 0xff])])
const PREFIXES: Buffer[] = [
  Buffer.from('a'),
  Buffer.from('ab'),
  Buffer.from('b'),
  Buffer.from([0xff]),
  Buffer.from([0x61, 0xff]),
  Buffer.from([0x61, 0x00]),
]
const ZERO = Buffer.from([0])

const keyArb = fc.nat({ max: KEYS.length - 1 }).map((i) => KEYS[i]!)
const valueArb = fc.nat({ max: VALUES.length - 1 }).map((i) => VALUES[i]!)
const selectorArb: fc.Arbitrary<Selector> = fc.oneof(
  { weight: 3, arbitrary: keyArb.map((key): Selector => ({ kind: 'key', key })) },
  { weight: 3, arbitrary: fc.nat({ max: PREFIXES.length - 1 }).map((i): Selector => ({ kind: 'prefix', prefix: PREFIXES[i]! })) },
  { weight: 1, arbitrary: keyArb.map((key): Selector => ({ kind: 'from', key })) },
  { weight: 1, arbitrary: fc.constant<Selector>({ kind: 'from', key: ZERO }) },
  {
    weight: 1,
    arbitrary: fc.tuple(keyArb, keyArb).map(([x, y]): Selector => {
      const [lo, hi] = Buffer.compare(x, y) <= 0 ? [x, y] : [y, x]
      return { kind: 'interval', key: lo, end: Buffer.compare(lo, hi) === 0 ? Buffer.concat([hi, ZERO]) : hi }
    }),
  },
)

/** How the real log is addressed for a selector: a prefix goes through prefixEnd (which the model does not use). */
function toRange(sel: Selector): { key: Buffer; rangeEnd?: Buffer } {
  switch (sel.kind) {
    case 'key':
      return { key: sel.key }
    case 'prefix':
      return { key: sel.prefix, rangeEnd: prefixEnd(sel.prefix) }
    case 'from':
      return { key: sel.key, rangeEnd: ZERO }
    case 'interval':
      return { key: sel.key, rangeEnd: sel.end }
  }
}

/** A revision chosen when the command runs, relative to the floor and head at that time. */
type RevPick = { kind: 'latest' } | { kind: 'future' } | { kind: 'below' } | { kind: 'retained'; n: number }
const revPickArb: fc.Arbitrary<RevPick> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<RevPick>({ kind: 'latest' }) },
  { weight: 1, arbitrary: fc.constant<RevPick>({ kind: 'future' }) },
  { weight: 1, arbitrary: fc.constant<RevPick>({ kind: 'below' }) },
  { weight: 5, arbitrary: fc.nat().map((n): RevPick => ({ kind: 'retained', n })) },
)

function resolveRev(pick: RevPick, m: KvModel): number {
  const floor = Math.max(1, m.compactRevision)
  switch (pick.kind) {
    case 'latest':
      return 0
    case 'future':
      return m.revision + 1
    case 'below':
      return Math.max(1, m.compactRevision - 1)
    case 'retained':
      return floor + (pick.n % (m.revision - floor + 1))
  }
}

// ---------------------------------------------------------------------------------------------------------
// Commands

const opArb: fc.Arbitrary<ModelOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ key: keyArb, value: valueArb, prevKv: fc.boolean() }).map((o): ModelOp => ({ type: 'put', ...o })) },
  { weight: 2, arbitrary: fc.record({ sel: selectorArb, prevKv: fc.boolean() }).map((o): ModelOp => ({ type: 'delete', ...o })) },
  { weight: 2, arbitrary: selectorArb.map((sel): ModelOp => ({ type: 'range', sel })) },
)

const compareArb: fc.Arbitrary<ModelCompare> = fc.oneof(
  fc.record({
    key: keyArb,
    target: fc.constantFrom('VERSION' as const, 'CREATE' as const, 'MOD' as const),
    result: fc.constantFrom('EQUAL' as const, 'NOT_EQUAL' as const, 'LESS' as const, 'GREATER' as const),
    value: fc.nat({ max: 12 }),
  }),
  fc.record({
    key: keyArb,
    target: fc.constant('VALUE' as const),
    result: fc.constantFrom('EQUAL' as const, 'NOT_EQUAL' as const, 'LESS' as const, 'GREATER' as const),
    value: valueArb,
  }),
)

type Command =
  | { c: 'put'; key: Buffer; value: Buffer; prevKv: boolean }
  | { c: 'delete'; sel: Selector; prevKv: boolean }
  | { c: 'cas'; key: Buffer; value: Buffer; current: boolean; guess: number }
  | { c: 'txn'; compare: ModelCompare[]; success: ModelOp[]; failure: ModelOp[] }
  | { c: 'compact'; pick: RevPick | { kind: 'lower' } }
  | {
      c: 'range'
      sel: Selector
      rev: RevPick
      limit: number
      keysOnly: boolean
      countOnly: boolean
      descend: boolean
      minMod: number
      maxCreate: number
    }
  | { c: 'get'; key: Buffer; rev: RevPick }
  | { c: 'history'; sel: Selector; from: RevPick; to: RevPick | undefined; limit: number; prevKv: boolean }
  | { c: 'reopen' }

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ key: keyArb, value: valueArb, prevKv: fc.boolean() }).map((o): Command => ({ c: 'put', ...o })) },
  { weight: 2, arbitrary: fc.record({ sel: selectorArb, prevKv: fc.boolean() }).map((o): Command => ({ c: 'delete', ...o })) },
  {
    weight: 3,
    arbitrary: fc
      .record({ key: keyArb, value: valueArb, current: fc.boolean(), guess: fc.nat({ max: 30 }) })
      .map((o): Command => ({ c: 'cas', ...o })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        compare: fc.array(compareArb, { maxLength: 2 }),
        success: fc.array(opArb, { minLength: 1, maxLength: 5 }),
        failure: fc.array(opArb, { maxLength: 2 }),
      })
      .map((o): Command => ({ c: 'txn', ...o })),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(revPickArb, fc.constant({ kind: 'lower' as const })).map((pick): Command => ({ c: 'compact', pick })),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({
        sel: selectorArb,
        rev: revPickArb,
        limit: fc.oneof(fc.constant(0), fc.nat({ max: 4 })),
        keysOnly: fc.boolean(),
        countOnly: fc.boolean(),
        descend: fc.boolean(),
        minMod: fc.oneof(fc.constant(0), fc.constant(0), fc.nat({ max: 30 })),
        maxCreate: fc.oneof(fc.constant(0), fc.constant(0), fc.nat({ max: 30 })),
      })
      .map((o): Command => ({ c: 'range', ...o })),
  },
  { weight: 2, arbitrary: fc.record({ key: keyArb, rev: revPickArb }).map((o): Command => ({ c: 'get', ...o })) },
  {
    weight: 2,
    arbitrary: fc
      .record({
        sel: selectorArb,
        from: revPickArb,
        to: fc.option(revPickArb, { nil: undefined }),
        limit: fc.nat({ max: 3 }),
        prevKv: fc.boolean(),
      })
      .map((o): Command => ({ c: 'history', ...o })),
  },
  { weight: 1, arbitrary: fc.constant<Command>({ c: 'reopen' }) },
)

// ---------------------------------------------------------------------------------------------------------
// Comparing answers

const show = (b: Buffer): string => b.toString('hex')
interface KvView {
  key: string
  value: string
  create: number
  mod: number
  version: number
  lease: string
}
const kvOf = (kv: KeyValue | ModelKv): KvView => ({
  key: show(kv.key),
  value: show(kv.value),
  create: kv.createRevision,
  mod: kv.modRevision,
  version: kv.version,
  lease: kv.lease.toString(),
})
const kvsOf = (kvs: ReadonlyArray<KeyValue | ModelKv>): KvView[] => kvs.map(kvOf)
const optKv = (kv: KeyValue | ModelKv | undefined): KvView | undefined => (kv === undefined ? undefined : kvOf(kv))

/** Runs both sides; they must both succeed with equal views, or both fail with the same code. */
async function both<T>(what: string, model: () => T, real: () => Promise<unknown>, view: (m: T, r: unknown) => void): Promise<void> {
  let expected: T | undefined
  let expectedCode: string | undefined
  try {
    expected = model()
  } catch (err) {
    if (!(err instanceof ModelError)) throw err
    expectedCode = err.code
  }
  let actual: unknown
  let actualCode: string | undefined
  try {
    actual = await real()
  } catch (err) {
    actualCode = (err as { code?: string }).code ?? `untyped error: ${String(err)}`
  }
  expect(actualCode, `${what}: error code`).to.equal(expectedCode)
  if (expectedCode === undefined) view(expected as T, actual)
}

function opResultView(r: OpResult): unknown {
  switch (r.type) {
    case 'put':
      return { type: 'put', prevKv: optKv(r.prevKv) }
    case 'delete':
      return {
        type: 'delete',
        deleted: r.deleted,
        prevKvs: r.prevKvs === undefined || r.prevKvs.length === 0 ? undefined : kvsOf(r.prevKvs),
      }
    case 'range':
      return { type: 'range', kvs: kvsOf(r.kvs), count: r.count }
    case 'txn':
      return { type: 'txn' }
  }
}

function toOp(op: ModelOp): Op {
  switch (op.type) {
    case 'put':
      return { type: 'put', key: op.key, value: op.value, prevKv: op.prevKv }
    case 'delete':
      return { type: 'delete', ...toRange(op.sel), prevKv: op.prevKv }
    case 'range':
      return { type: 'range', ...toRange(op.sel) }
  }
}

const toCompare = (c: ModelCompare): Compare => ({ key: c.key, target: c.target, result: c.result, value: c.value })

/** History events, with the prevKv of an event at the compact revision allowed to be missing (it may be gone). */
function historyView(
  entries: ReadonlyArray<LogEntry | ModelEntry>,
  floor: number,
  model: boolean,
  real?: ReadonlyArray<LogEntry>,
): unknown {
  return entries.map((e, i) => ({
    revision: e.revision,
    events: e.events.map((ev, j) => {
      const keepPrev = !model || e.revision > floor || real?.[i]?.events[j]?.prevKv !== undefined
      return { type: ev.type, kv: kvOf(ev.kv), prevKv: keepPrev ? optKv(ev.prevKv) : undefined }
    }),
  }))
}

async function run(log: Log, m: KvModel, cmd: Exclude<Command, { c: 'reopen' }>): Promise<void> {
  switch (cmd.c) {
    case 'put':
      return both(
        'put',
        () => m.txn({ compare: [], success: [{ type: 'put', key: cmd.key, value: cmd.value, prevKv: cmd.prevKv }], failure: [] }),
        () => log.put(cmd.key, cmd.value, { prevKv: cmd.prevKv }),
        (want, got) => {
          const r = got as Awaited<ReturnType<Log['put']>>
          const prev = want.results[0]!.type === 'put' ? want.results[0]!.prevKv : undefined
          expect({ revision: r.revision, wrote: r.wrote, prevKv: optKv(r.prevKv) }).to.deep.equal({
            revision: want.revision,
            wrote: true,
            prevKv: optKv(prev),
          })
        },
      )
    case 'delete':
      return both(
        'delete',
        () => m.txn({ compare: [], success: [{ type: 'delete', sel: cmd.sel, prevKv: cmd.prevKv }], failure: [] }),
        () => {
          const r = toRange(cmd.sel)
          return log.delete(r.key, { rangeEnd: r.rangeEnd, prevKv: cmd.prevKv })
        },
        (want, got) => {
          const r = got as Awaited<ReturnType<Log['delete']>>
          expect({
            revision: r.revision,
            wrote: r.wrote,
            ...(opResultView({ type: 'delete', deleted: r.deleted, prevKvs: r.prevKvs }) as object),
          }).to.deep.equal({ revision: want.revision, wrote: want.wrote, ...(opResultView(want.results[0] as OpResult) as object) })
        },
      )
    case 'cas': {
      const current = m.at(cmd.key, m.revision)?.modRevision ?? 0
      const expectedMod = cmd.current ? current : cmd.guess
      const req = {
        compare: [{ key: cmd.key, target: 'MOD' as const, result: 'EQUAL' as const, value: expectedMod }],
        success: [{ type: 'put' as const, key: cmd.key, value: cmd.value, prevKv: true }],
        failure: [{ type: 'range' as const, sel: { kind: 'key' as const, key: cmd.key } }],
      }
      return txnBoth('cas', log, m, req)
    }
    case 'txn':
      return txnBoth('txn', log, m, cmd)
    case 'compact': {
      const target = cmd.pick.kind === 'lower' ? Math.max(1, m.compactRevision) : resolveRev(cmd.pick, m) || m.revision
      const before = m.compactRevision
      let modelCode: string | undefined
      try {
        m.compact(target)
      } catch (err) {
        if (!(err instanceof ModelError)) throw err
        modelCode = err.code
      }
      let realCode: string | undefined
      let realFloor: number | undefined
      try {
        realFloor = (await log.compact(target)).compactRevision
      } catch (err) {
        realCode = (err as { code?: string }).code ?? String(err)
      }
      if (modelCode === 'COMPACTED') {
        // at or below the floor: a no-op or COMPACTED, and the floor stays
        if (realCode === undefined) expect(realFloor, `compact(${target}) at/below the floor`).to.equal(before)
        else expect(realCode, `compact(${target}) at/below the floor`).to.equal('COMPACTED')
      } else {
        expect(realCode, `compact(${target})`).to.equal(modelCode)
        if (modelCode === undefined) expect(realFloor).to.equal(target)
      }
      return
    }
    case 'range': {
      const revision = resolveRev(cmd.rev, m)
      const opts = {
        revision,
        limit: cmd.limit,
        keysOnly: cmd.keysOnly,
        countOnly: cmd.countOnly,
        sortOrder: cmd.descend ? ('DESCEND' as const) : ('NONE' as const),
        minModRevision: cmd.minMod,
        maxCreateRevision: cmd.maxCreate,
      }
      const r = toRange(cmd.sel)
      return both(
        `range ${JSON.stringify(opts)}`,
        () => m.range(cmd.sel, opts),
        () => log.range(r.key, { ...opts, rangeEnd: r.rangeEnd, sortTarget: 'KEY' }),
        (want, got) => {
          const g = got as Awaited<ReturnType<Log['range']>>
          const view = (x: { kvs: ReadonlyArray<KeyValue | ModelKv>; more: boolean; count: number; revision: number }): unknown => ({
            kvs: kvsOf(x.kvs),
            count: x.count,
            revision: x.revision,
            more: cmd.countOnly ? undefined : x.more,
          })
          expect(view(g)).to.deep.equal(view(want))
        },
      )
    }
    case 'get': {
      const revision = resolveRev(cmd.rev, m)
      return both(
        `get at ${revision}`,
        () => m.get(cmd.key, revision),
        () => log.get(cmd.key, { revision }),
        (want, got) => expect(optKv(got as KeyValue | undefined)).to.deep.equal(optKv(want)),
      )
    }
    case 'history':
      return historyBoth(log, m, cmd)
  }
}

async function txnBoth(
  what: string,
  log: Log,
  m: KvModel,
  req: { compare: ModelCompare[]; success: ModelOp[]; failure: ModelOp[] },
): Promise<void> {
  return both(
    what,
    () => m.txn(req),
    () => log.txn({ compare: req.compare.map(toCompare), success: req.success.map(toOp), failure: req.failure.map(toOp) }),
    (want, got) => {
      const g = got as Awaited<ReturnType<Log['txn']>>
      expect({ succeeded: g.succeeded, wrote: g.wrote, revision: g.revision, results: g.results.map(opResultView) }).to.deep.equal({
        succeeded: want.succeeded,
        wrote: want.wrote,
        revision: want.revision,
        results: want.results.map((r) => opResultView(r as OpResult)),
      })
    },
  )
}

async function historyBoth(log: Log, m: KvModel, cmd: Extract<Command, { c: 'history' }>): Promise<void> {
  const from = Math.max(1, resolveRev(cmd.from, m) || m.revision)
  let to = cmd.to === undefined ? undefined : resolveRev(cmd.to, m) || m.revision
  if (to !== undefined && to < from) to = undefined
  const r = toRange(cmd.sel)
  const floor = m.compactRevision
  return both(
    `history ${from}..${to ?? ''} limit ${cmd.limit}`,
    () => m.history(cmd.sel, from, to, cmd.prevKv),
    async () => {
      const pages: LogEntry[] = []
      let next = from
      for (let i = 0; i < 200; i++) {
        const page = await log.history(r.key, {
          rangeEnd: r.rangeEnd,
          fromRevision: next,
          toRevision: to,
          limit: cmd.limit,
          prevKv: cmd.prevKv,
        })
        const events = page.entries.reduce((n, e) => n + e.events.length, 0)
        if (page.more) expect(events, 'a page with more holds at least the limit').to.be.at.least(cmd.limit)
        for (const e of page.entries) expect(e.revision).to.be.at.least(next)
        pages.push(...page.entries)
        if (!page.more) return pages
        expect(page.nextRevision).to.be.greaterThan(next)
        next = page.nextRevision
      }
      throw new Error('history did not finish in 200 pages')
    },
    (want, got) => {
      const g = got as LogEntry[]
      for (let i = 1; i < g.length; i++)
        expect(g[i]!.revision, 'pages never repeat or split a revision').to.be.greaterThan(g[i - 1]!.revision)
      expect(historyView(g, floor, false)).to.deep.equal(historyView(want, floor, true, g))
    },
  )
}

/** After a run: every retained revision reads the same on both sides. */
async function checkAllRevisions(log: Log, m: KvModel): Promise<void> {
  expect(log.revision, 'revision').to.equal(m.revision)
  expect(log.compactRevision, 'compact revision').to.equal(m.compactRevision)
  for (let rev = Math.max(1, m.compactRevision); rev <= m.revision; rev++) {
    const want = m.range({ kind: 'from', key: ZERO }, { revision: rev })
    const got = await log.range(ZERO, { rangeEnd: ZERO, revision: rev })
    expect(kvsOf(got.kvs), `state at ${rev}`).to.deep.equal(kvsOf(want.kvs))
  }
}

function describeCommand(cmd: Command): string {
  return JSON.stringify(cmd, (_k, v: unknown) => {
    if (v !== null && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer')
      return `0x${Buffer.from((v as { data: number[] }).data).toString('hex')}`
    return v
  })
}

describe('LevelLog against the in-memory model', function () {
  this.timeout(120_000)

  it('agrees on every command of random command sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 60, size: 'max' }), async (cmds) => {
        const dir = await mkdtemp(join(tmpdir(), 'kvlog-model-'))
        const options = { dir, fsync: 'never' as const, segmentMaxEntries: 4, compactionBatchRevisions: 2, maxTxnOps: 16 }
        let log = await openLevelLog(options)
        try {
          const m = new KvModel(log.compactRevision)
          expect(log.compactRevision).to.be.at.most(1)
          for (const [i, cmd] of cmds.entries()) {
            try {
              if (cmd.c === 'reopen') {
                await log.close()
                log = await openLevelLog(options)
              } else {
                await run(log, m, cmd)
              }
              expect(log.revision, 'revision').to.equal(m.revision)
              expect(log.compactRevision, 'compact revision').to.equal(m.compactRevision)
            } catch (err) {
              if (err instanceof Error) err.message = `command #${i} ${describeCommand(cmd)}: ${err.message}`
              throw err
            }
          }
          await checkAllRevisions(log, m)
        } finally {
          await log.close()
          await rm(dir, { recursive: true, force: true })
        }
      }),
      { numRuns: 100, interruptAfterTimeLimit: 50_000 },
    )
  })
})
