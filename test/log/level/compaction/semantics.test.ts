/**
 * What compaction keeps (docs/architecture.md, "Compaction"; log/level/compaction/compactor.ts): compacting at R keeps every read at or
 * above R exactly as it was — ranges at any revision >= R (kvs with version, createRevision, modRevision,
 * count) and history from R with prevKv — while everything below R answers COMPACTED with the floor. The
 * floor never goes down, deleted keys stay gone, whole segments below R leave the segment table, and the
 * space comes back after reclaimSpace.
 *
 * LevelLog in a temp dir with tiny compaction batches (7 revisions) and tiny segments (50 entries), so a
 * compaction of a few thousand revisions runs hundreds of batches interleaved with reads and writes.
 * The workload is random but seeded (the seed is in the test title).
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { prefixEnd } from '../../../../log/keys.js'
import { openLevelLog, type LevelLog } from '../../../../log/level/level-log.js'
import type { Op } from '../../../../log/types.js'
import { expectCode } from '../../conformance/helpers.js'
import { plain, plainEntries, rng, type PlainEntry, type PlainKv } from '../../../compaction/helpers.js'

const ZERO = Buffer.from([0])
const GROUPS = ['a', 'b', 'c', 'd']
const PER_GROUP = 10
const BATCH = 7
const SEGMENT = 50
const SEED = Number(process.env.KVLOG_TEST_SEED ?? 20261122)

/** Random writes over 40 keys in 4 groups: puts, deletes, multi-put txns, delete-ranges; 16 in flight at a time. */
async function randomWrites(log: LevelLog, random: () => number, revisions: number, tag: string): Promise<void> {
  const key = () => `${GROUPS[Math.floor(random() * GROUPS.length)]}/${Math.floor(random() * PER_GROUP)}`
  const target = log.revision + revisions
  let n = 0
  while (log.revision < target) {
    const inFlight: Array<Promise<unknown>> = []
    for (let i = 0; i < 16; i++) {
      const value = `${tag}${n++}:${'x'.repeat(Math.floor(random() * 40))}`
      const roll = random()
      if (roll < 0.55) {
        inFlight.push(log.put(key(), value))
      } else if (roll < 0.7) {
        inFlight.push(log.delete(key()))
      } else if (roll < 0.85) {
        const keys = [...new Set([key(), key(), key(), key()])].slice(0, 2 + Math.floor(random() * 3))
        inFlight.push(log.txn({ success: keys.map((k, j): Op => ({ type: 'put', key: k, value: `${value}.${j}` })) }))
      } else if (roll < 0.95) {
        // delete one group, put into another, in one revision
        const g = Math.floor(random() * GROUPS.length)
        const other = GROUPS[(g + 1 + Math.floor(random() * 3)) % GROUPS.length]
        inFlight.push(
          log.txn({
            success: [
              { type: 'delete', key: `${GROUPS[g]}/`, rangeEnd: prefixEnd(`${GROUPS[g]}/`), prevKv: true },
              { type: 'put', key: `${other}/${Math.floor(random() * PER_GROUP)}`, value },
            ],
          }),
        )
      } else {
        const g = GROUPS[Math.floor(random() * GROUPS.length)]
        inFlight.push(log.delete(`${g}/`, { rangeEnd: prefixEnd(`${g}/`) }))
      }
    }
    await Promise.all(inFlight)
  }
}

async function rangeAt(log: LevelLog, revision: number): Promise<{ kvs: PlainKv[]; count: number }> {
  const r = await log.range(ZERO, { rangeEnd: ZERO, revision })
  expect(r.revision).to.equal(revision)
  return { kvs: r.kvs.map(plain), count: r.count }
}

async function historyFrom(log: LevelLog, from: number, to?: number): Promise<PlainEntry[]> {
  const r = await log.history(ZERO, { rangeEnd: ZERO, fromRevision: from, toRevision: to, prevKv: true })
  expect(r.more).to.equal(false)
  return plainEntries(r.entries)
}

/** Runs fn over items, `limit` at a time (reads at a past revision are round-trip bound: overlap them). */
async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++])
    }),
  )
}

const span = (from: number, to: number, step = 1): number[] =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step)

/** Ranges at every revision from..to, as they are now. */
async function recordRanges(log: LevelLog, from: number, to: number): Promise<Map<number, { kvs: PlainKv[]; count: number }>> {
  const out = new Map<number, { kvs: PlainKv[]; count: number }>()
  await eachLimit(span(from, to), 8, async (r) => {
    out.set(r, await rangeAt(log, r))
  })
  return out
}

/** Every recorded range at `revisions` reads the same now. */
async function expectRangesUnchanged(
  log: LevelLog,
  recorded: Map<number, { kvs: PlainKv[]; count: number }>,
  revisions: number[],
  what: string,
): Promise<void> {
  await eachLimit(revisions, 8, async (rev) => {
    const actual = await rangeAt(log, rev)
    const expected = recorded.get(rev)
    if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual, `${what}: range at ${rev}`).to.deep.equal(expected)
  })
}

/** The state after applying entries to `state` (a fold of history), keyed by key. */
function fold(state: Map<string, PlainKv>, entries: readonly PlainEntry[], upTo: number): Map<string, PlainKv> {
  const next = new Map(state)
  for (const e of entries) {
    if (e.revision > upTo) break
    for (const ev of e.events) {
      if (ev.type === 'PUT') next.set(ev.kv.key, ev.kv)
      else next.delete(ev.kv.key)
    }
  }
  return next
}

const sorted = (m: Map<string, PlainKv>): PlainKv[] => [...m.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))

// The same semantics hold for both methods: the hist walk with the log dropped (drop-job.ts, the default), and
// the log scan; each in the compaction thread (compact-thread.ts) or on the main thread (compactionThread false).
const CONFIGURATIONS = [
  { name: 'drop, the walk in the compaction thread', compactionMethod: 'drop', compactionThread: true },
  { name: 'drop, the walk on the main thread', compactionMethod: 'drop', compactionThread: false },
  { name: 'scan in the compaction thread', compactionMethod: 'scan', compactionThread: true },
  { name: 'scan on the main thread', compactionMethod: 'scan', compactionThread: false },
] as const
for (const { name, compactionMethod, compactionThread } of CONFIGURATIONS)
  describe(`compaction semantics (LevelLog, batches of 7, ${name})`, function () {
    this.timeout(60_000)
    let dir = ''
    let log: LevelLog

    const open = () =>
      openLevelLog({ dir, fsync: 'never', compactionBatchRevisions: BATCH, segmentMaxEntries: SEGMENT, compactionMethod, compactionThread })

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kvlog-compaction-'))
      log = await open()
    })
    afterEach(async () => {
      await log.close()
      await rm(dir, { recursive: true, force: true })
    })

    it(`keeps every range at >= R and history from R (with prevKv) through two compactions and a reopen (seed ${SEED})`, async () => {
      const random = rng(SEED)
      await randomWrites(log, random, 2000, 'w')
      const V = log.revision
      const R1 = V - 600
      const R2 = V - 300
      const ranges = await recordRanges(log, R1, V)
      const history1 = await historyFrom(log, R1)
      expect(history1.length, 'every revision from R1 is in the history').to.equal(V - R1 + 1)

      // Reads keep running during the compaction: each sees either side of a batch, never a broken state.
      let compacting = true
      let concurrentReads = 0
      const reader = (async () => {
        const pick = rng(SEED + 1)
        while (compacting) {
          const rev = R1 + Math.floor(pick() * (V - R1 + 1))
          expect(await rangeAt(log, rev), `range at ${rev} during the compaction`).to.deep.equal(ranges.get(rev))
          concurrentReads++
          if (log.compactRevision === R1)
            await expectCode(() => log.range(ZERO, { rangeEnd: ZERO, revision: R1 - 1 }), 'COMPACTED', 'below R1 while compacting')
        }
      })()
      const result = await log.compact(R1)
      compacting = false
      await reader
      expect(concurrentReads, 'reads ran while compacting').to.be.greaterThan(0)
      expect(result.compactRevision).to.equal(R1)
      expect(result.removedRevisions, 'entries 2..R1-1 are gone').to.equal(R1 - 2)
      expect(result.removedVersions).to.be.greaterThan(0)
      expect(log.compactRevision).to.equal(R1)
      expect((await log.status()).compaction, 'no compaction left in progress').to.equal(undefined)

      await expectRangesUnchanged(log, ranges, span(R1, V), 'after compact(R1)')
      expect(await historyFrom(log, R1), 'history from R1 after compact(R1)').to.deep.equal(history1)
      // history without fromRevision starts at the floor
      const fromFloor = await log.history(ZERO, { rangeEnd: ZERO, prevKv: true })
      expect(fromFloor.compactRevision).to.equal(R1)
      expect(plainEntries(fromFloor.entries)).to.deep.equal(history1)

      // The second compaction removes exactly R1..R2-1.
      const second = await log.compact(R2)
      expect(second.removedRevisions).to.equal(R2 - R1)
      await expectRangesUnchanged(log, ranges, span(R2, V), 'after compact(R2)')
      expect(await historyFrom(log, R2)).to.deep.equal(history1.filter((e) => e.revision >= R2))

      // Durable: the same after a reopen.
      await log.close()
      log = await open()
      expect(log.compactRevision).to.equal(R2)
      expect(log.revision).to.equal(V)
      await expectRangesUnchanged(log, ranges, span(R2, V, 3), 'after reopen (every 3rd revision)')
      expect(await historyFrom(log, R2)).to.deep.equal(history1.filter((e) => e.revision >= R2))
    })

    it('below the floor: COMPACTED with the floor; the floor never goes down; above the head: FUTURE_REVISION', async () => {
      await randomWrites(log, rng(SEED + 2), 600, 'f')
      const V = log.revision
      const R = 300
      await log.compact(R)
      for (const rev of [1, 2, R - 1]) {
        const e = await expectCode(() => log.range(ZERO, { rangeEnd: ZERO, revision: rev }), 'COMPACTED', `range at ${rev}`)
        expect(e.details.compactRevision, `range at ${rev}`).to.equal(R)
        expect(e.details.currentRevision).to.equal(V)
      }
      expect((await expectCode(() => log.get('a/1', { revision: R - 1 }), 'COMPACTED', 'get')).details.compactRevision).to.equal(R)
      expect(
        (await expectCode(() => log.history(ZERO, { rangeEnd: ZERO, fromRevision: R - 1 }), 'COMPACTED', 'history')).details
          .compactRevision,
      ).to.equal(R)
      expect(
        (await expectCode(() => log.history('a/1', { fromRevision: 1, toRevision: R - 1 }), 'COMPACTED', 'history below')).details
          .compactRevision,
      ).to.equal(R)
      // a txn reading below the floor fails the same way
      await expectCode(
        () => log.txn({ success: [{ type: 'range', key: ZERO, rangeEnd: ZERO, revision: R - 1 }] }),
        'COMPACTED',
        'txn range',
      )
      // at the floor: fine
      await log.range(ZERO, { rangeEnd: ZERO, revision: R })

      // never lowers: at or below the floor is COMPACTED and changes nothing
      for (const rev of [R, R - 1, 1]) {
        const e = await expectCode(() => log.compact(rev), 'COMPACTED', `compact(${rev})`)
        expect(e.details.compactRevision).to.equal(R)
      }
      await expectCode(() => log.compact(V + 1), 'FUTURE_REVISION', 'compact above the head')
      await expectCode(() => log.compact(-1), 'INVALID_ARGUMENT', 'compact(-1)')
      expect(log.compactRevision).to.equal(R)
      expect((await log.status()).compactRevision).to.equal(R)
      await log.close()
      log = await open()
      expect(log.compactRevision, 'after reopen').to.equal(R)
      await expectCode(() => log.compact(R), 'COMPACTED', 'compact(R) after reopen')
      // compacting to the head is allowed: only the current state stays
      const latest = (await log.range(ZERO, { rangeEnd: ZERO })).kvs.map(plain)
      await log.compact(V)
      expect((await log.range(ZERO, { rangeEnd: ZERO, revision: V })).kvs.map(plain)).to.deep.equal(latest)
      expect((await log.history(ZERO, { rangeEnd: ZERO })).entries.map((e) => e.revision)).to.deep.equal([V])
    })

    it('deleted keys stay gone; a key recreated before R keeps its new incarnation', async () => {
      await log.put('gone/x', '1')
      await log.put('gone/x', '2')
      await log.put('gone/y', '1')
      await log.delete('gone/', { rangeEnd: prefixEnd('gone/') })
      await log.put('again', '1')
      await log.delete('again')
      const recreated = await log.put('again', 'new')
      await log.put('again', 'newer')
      await randomWrites(log, rng(SEED + 3), 200, 'g')
      const R = log.revision - 50
      await log.compact(R)
      for (const rev of [R, R + 25, log.revision]) {
        expect(await log.get('gone/x', { revision: rev }), `gone/x at ${rev}`).to.equal(undefined)
        expect((await log.range('gone/', { rangeEnd: prefixEnd('gone/'), revision: rev, countOnly: true })).count).to.equal(0)
        const again = await log.get('again', { revision: rev })
        expect([again?.value.toString(), again?.createRevision, again?.version]).to.deep.equal(['newer', recreated.revision, 2])
      }
      expect((await log.history('gone/', { rangeEnd: prefixEnd('gone/') })).entries).to.deep.equal([])
      await log.close()
      log = await open()
      expect(await log.get('gone/x', { revision: R })).to.equal(undefined)
      expect((await log.get('again', { revision: R }))?.version).to.equal(2)
    })

    it('writes running during a compaction land intact and fold onto the state at the head', async () => {
      await randomWrites(log, rng(SEED + 4), 1500, 'p')
      const V0 = log.revision
      const R = V0 - 100
      const ranges = await recordRanges(log, R, V0)
      const compaction = log.compact(R)
      await randomWrites(log, rng(SEED + 5), 300, 'q')
      await compaction
      const V1 = log.revision
      await expectRangesUnchanged(log, ranges, span(R, V0), 'after a compaction with writes')
      // the new revisions: every range at V0+1..V1 equals the state at V0 folded with the history
      const later = await historyFrom(log, V0 + 1)
      expect(later.map((e) => e.revision)).to.deep.equal(Array.from({ length: V1 - V0 }, (_, i) => V0 + 1 + i))
      const base = new Map(ranges.get(V0)!.kvs.map((kv) => [kv.key, kv]))
      for (let rev = V0 + 1; rev <= V1; rev += 7) {
        expect((await rangeAt(log, rev)).kvs, `range at ${rev}`).to.deep.equal(sorted(fold(base, later, rev)))
      }
      expect((await rangeAt(log, V1)).kvs).to.deep.equal(sorted(fold(base, later, V1)))
    })

    it('drops whole segments below R and trims the first one left', async () => {
      await randomWrites(log, rng(SEED + 6), 1000, 's')
      const V = log.revision
      const before = (await log.status()).segments
      expect(before.length).to.be.greaterThan(10)
      expect(before[0].firstRevision).to.equal(2)
      const R = before[7].firstRevision + 13 // inside the 8th segment
      await log.compact(R)
      const after = (await log.status()).segments
      expect(after.length, 'seven whole segments dropped').to.equal(before.length - 7)
      expect(after[0].id).to.equal(before[7].id)
      expect(after[0].firstRevision).to.equal(R)
      expect(after[0].lastRevision).to.equal(before[7].lastRevision)
      expect(after[0].entries).to.equal(before[7].entries - 13)
      expect(after[0].bytes).to.be.lessThan(before[7].bytes)
      expect(after.slice(1)).to.deep.equal(before.slice(8))
      expect(after.reduce((n, s) => n + s.entries, 0)).to.equal(V - R + 1)
      for (const s of after) expect(s.lastRevision).to.be.at.least(R)
      await log.close()
      log = await open()
      expect((await log.status()).segments, 'after reopen').to.deep.equal(after)
      // at the last revision of a segment: that segment goes too
      await log.compact(after[2].lastRevision + 1)
      const third = (await log.status()).segments
      expect(third[0].id).to.equal(after[3].id)
      expect(third[0].firstRevision).to.equal(after[3].firstRevision)
    })

    it('gives the space back: the database shrinks after a large removal and reclaimSpace', async () => {
      const random = rng(SEED + 7)
      const chunk = Buffer.alloc(2048)
      for (let round = 0; round < 150; round++) {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => {
            for (let j = 0; j < chunk.length; j++) chunk[j] = Math.floor(random() * 256)
            return log.put(`big/${i}`, Buffer.from(chunk))
          }),
        )
      }
      await log.reclaimSpace()
      const before = (await log.status()).dbSize
      expect(before, 'about 3000 x 2 KiB written').to.be.greaterThan(5 * 1024 * 1024)
      await log.compact(log.revision)
      await log.reclaimSpace()
      const after = (await log.status()).dbSize
      expect(after, `db size ${before} -> ${after}`).to.be.lessThan(before / 4)
      // and what is left is the current state, intact
      expect((await log.range('big/', { rangeEnd: prefixEnd('big/'), countOnly: true })).count).to.equal(20)
    })
  })
