/**
 * Crash in the middle of a compaction: a real child process (crash-child.ts) compacts a LevelLog on a real
 * directory (fsync always, batches of 50 revisions) while three writers keep writing, and the parent
 * SIGKILLs it at a random moment — before the compaction is scheduled, between its batches, or after it
 * finished — for several cycles on the same directory. After each kill the parent opens the log and checks:
 *
 *   - the compact revision never went down, and is R whenever the child saw durable progress;
 *   - status shows the compaction in progress (target R, progress at least the durable one) or finished;
 *   - the interrupted job resumes on open and completes (some cycles leave it to the next child instead,
 *     which is then killed while resuming);
 *   - every revision written since the last check is one of the child's writes (gapless), every
 *     acknowledged write is there at its revision, nothing else is;
 *   - the state at every checked revision >= the floor, and the whole history from the floor with prevKv,
 *     equal the model folded from those writes; below the floor is COMPACTED with the floor.
 */
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { COMPACTION_METHODS, type CompactionMethod } from '../../../../config/schema.js'
import { openLevelLog, type LevelLog } from '../../../../log/level/level-log.js'
import { expectCode } from '../../conformance/helpers.js'
import { belowFloorOf, readRawTables, withRawDb } from '../raw-db.js'
import { CRASH_LOG_OPTIONS, HEAD_START_ACKS, KeyWriter, WRITERS, type WireOps } from './crash-workload.js'
import { plain, plainEntries, rng, waitUntil, type PlainEntry, type PlainEvent, type PlainKv } from '../../../compaction/helpers.js'

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'crash-child.js')
const CYCLES = 10
const INITIAL_REVISIONS = 3000
const ZERO = Buffer.from([0])
const SEED = Number(process.env.KVLOG_TEST_SEED ?? 7)

interface Line {
  ready?: boolean
  revision?: number
  floor?: number
  job?: { target: number; progress: number } | null
  compacting?: number
  resuming?: number
  i?: number
  a?: number
  n?: number
  ops?: WireOps
  rev?: number
  p?: number
  durable?: number
  done?: number
}

interface KillPlan {
  /** Kill once this many progress lines were seen after the compaction started ... */
  afterProgress: number
  /** ... this many ms later (also the delay after `done`, if it comes first). */
  delayMs: number
}

/** Runs one child until the plan kills it; returns its complete stdout lines. */
function runChild(dir: string, R: number, cycle: number, plan: KillPlan, method: CompactionMethod): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dir, String(R), String(cycle), method], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let killed = false
    let started = false
    let progress = 0
    let scanned = 0
    const kill = (): void => {
      if (killed) return
      killed = true
      child.kill('SIGKILL')
    }
    const killSoon = (): void => {
      if (plan.delayMs === 0) kill()
      else setTimeout(kill, plan.delayMs)
    }
    const safety = setTimeout(kill, 20_000)
    child.stdout.setEncoding('utf8')
    child.stderr.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      out += chunk
      const end = out.lastIndexOf('\n')
      if (end < scanned) return
      for (const text of out.slice(scanned, end).split('\n')) {
        if (text === '') continue
        const line = JSON.parse(text) as Line
        if (line.compacting !== undefined || line.resuming !== undefined) {
          started = true
          if (plan.afterProgress === 0) killSoon()
        } else if (line.p !== undefined && started && ++progress === plan.afterProgress) {
          killSoon()
        } else if (line.done !== undefined) {
          killSoon()
        }
      }
      scanned = end + 1
    })
    child.stderr.on('data', (chunk: string) => (err += chunk))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(safety)
      if (!killed || signal !== 'SIGKILL')
        return reject(new Error(`child ${cycle} ended by itself (code ${code}, signal ${signal}): ${err}`))
      if (!started) return reject(new Error(`child ${cycle} was killed before it started compacting (safety timeout?): ${err}`))
      // only complete lines count: a line cut by the kill was never fully printed
      resolve(
        out
          .split('\n')
          .slice(0, -1)
          .map((l) => JSON.parse(l) as Line),
      )
    })
  })
}

/** The model: every revision's ops, folded into kvs (version, createRevision, modRevision) and events. */
class Model {
  readonly ops = new Map<number, WireOps>()

  /** Expected history from `from` to `to` (with prevKv), and the expected ranges at `at`. */
  expect(from: number, to: number, at: Set<number>): { history: PlainEntry[]; ranges: Map<number, PlainKv[]> } {
    const state = new Map<string, PlainKv>()
    const history: PlainEntry[] = []
    const ranges = new Map<number, PlainKv[]>()
    for (let rev = 2; rev <= to; rev++) {
      const ops = this.ops.get(rev)
      if (ops === undefined) throw new Error(`model: no ops for revision ${rev}`)
      const events: PlainEvent[] = []
      for (const [key, value] of ops) {
        const prev = state.get(key)
        if (value === null) {
          events.push({
            type: 'DELETE',
            kv: { key, value: '', createRevision: 0, modRevision: rev, version: 0 },
            ...(prev ? { prevKv: prev } : {}),
          })
          state.delete(key)
        } else {
          const kv = { key, value, createRevision: prev?.createRevision ?? rev, modRevision: rev, version: (prev?.version ?? 0) + 1 }
          events.push({ type: 'PUT', kv, ...(prev ? { prevKv: prev } : {}) })
          state.set(key, kv)
        }
      }
      if (rev >= from) history.push({ revision: rev, events })
      if (at.has(rev))
        ranges.set(
          rev,
          [...state.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)),
        )
    }
    return { history, ranges }
  }
}

/** The parent writes the first revisions itself, in-process, with the same workload. */
async function writeInitial(dir: string, model: Model): Promise<number> {
  const log = await openLevelLog({ dir, ...CRASH_LOG_OPTIONS, fsync: 'never' })
  try {
    const writers = Array.from({ length: WRITERS }, (_, w) => new KeyWriter(w, new Set(), rng(SEED * 1000 + w), 'init'))
    await Promise.all(
      writers.map(async (writer) => {
        while (log.revision < INITIAL_REVISIONS) {
          const { ops } = writer.next()
          model.ops.set(await writer.write(log, ops), ops)
        }
      }),
    )
    return log.revision
  } finally {
    await log.close()
  }
}

/**
 * Places the child's writes: every revision above `verified` must be one of its intents — acknowledged
 * ones exactly at their revision, the others (at most one in flight per writer) anywhere once.
 */
async function placeWrites(
  log: LevelLog,
  lines: Line[],
  verified: number,
  model: Model,
  cycle: number,
): Promise<{ acked: number; unacked: number }> {
  const intents = new Map<string, WireOps>()
  const acks = new Map<string, number>()
  for (const l of lines) {
    if (l.i !== undefined) intents.set(`${l.i}.${l.n}`, l.ops!)
    if (l.a !== undefined) acks.set(`${l.a}.${l.n}`, l.rev!)
  }
  const found = new Map<number, WireOps>()
  let from = verified + 1
  for (;;) {
    const page = await log.history(ZERO, { rangeEnd: ZERO, fromRevision: from, limit: 2000 })
    for (const e of page.entries)
      found.set(
        e.revision,
        e.events.map((ev): [string, string | null] => [ev.kv.key.toString(), ev.type === 'PUT' ? ev.kv.value.toString() : null]),
      )
    if (!page.more) break
    from = page.nextRevision
  }
  const head = log.revision
  expect([...found.keys()], `cycle ${cycle}: revisions ${verified + 1}..${head} all present`).to.deep.equal(
    Array.from({ length: head - verified }, (_, i) => verified + 1 + i),
  )
  const placed = new Set<number>()
  for (const [id, rev] of acks) {
    expect(rev, `cycle ${cycle}: write ${id} acknowledged at ${rev}, at or below the last verified ${verified}`).to.be.greaterThan(verified)
    expect(found.get(rev), `cycle ${cycle}: acknowledged write ${id} at ${rev}`).to.deep.equal(intents.get(id))
    placed.add(rev)
  }
  const pending = [...intents].filter(([id]) => !acks.has(id))
  expect(pending.length, `cycle ${cycle}: at most one write in flight per writer`).to.be.at.most(WRITERS)
  let unacked = 0
  for (const [rev, ops] of found) {
    if (!placed.has(rev)) {
      const i = pending.findIndex(([, intent]) => JSON.stringify(intent) === JSON.stringify(ops))
      expect(i, `cycle ${cycle}: revision ${rev} ${JSON.stringify(ops)} is no write of the child`).to.be.at.least(0)
      pending.splice(i, 1)
      unacked++
    }
    model.ops.set(rev, ops)
  }
  return { acked: acks.size, unacked }
}

/** The state at sampled revisions >= the floor and the whole history from the floor equal the model. */
async function verifyAgainstModel(log: LevelLog, model: Model, random: () => number, cycle: number): Promise<number> {
  const floor = log.compactRevision
  const head = log.revision
  const at = new Set<number>([floor, head])
  for (let r = floor; r <= Math.min(head, floor + 20); r++) at.add(r)
  while (at.size < 120 && at.size < head - floor + 1) at.add(floor + Math.floor(random() * (head - floor + 1)))
  const expected = model.expect(floor, head, at)
  const actual = await log.history(ZERO, { rangeEnd: ZERO, fromRevision: floor, prevKv: true })
  expect(actual.more).to.equal(false)
  const history = plainEntries(actual.entries)
  if (JSON.stringify(history) !== JSON.stringify(expected.history)) {
    expect(history, `cycle ${cycle}: history from the floor ${floor}`).to.deep.equal(expected.history)
  }
  for (const [rev, kvs] of expected.ranges) {
    const r = await log.range(ZERO, { rangeEnd: ZERO, revision: rev })
    expect(r.kvs.map(plain), `cycle ${cycle}: range at ${rev}`).to.deep.equal(kvs)
  }
  if (floor > 1) {
    const e = await expectCode(
      () => log.range(ZERO, { rangeEnd: ZERO, revision: floor - 1 }),
      'COMPACTED',
      `cycle ${cycle}: below the floor`,
    )
    expect(e.details.compactRevision).to.equal(floor)
  }
  return at.size
}

// 'scan' reports its progress batch by batch; 'drop' once at the start and once when its walk of the hist
// index is done (drop-job.ts), so its kills land in the walk after a random delay, or in the log's drop.
for (const method of COMPACTION_METHODS)
  describe(`compaction crash safety (SIGKILL mid-compaction, real disk, method ${method})`, function () {
    this.timeout(120_000)
    let dir = ''
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kvlog-compaction-crash-'))
    })
    after(async () => {
      if (dir !== '') await rm(dir, { recursive: true, force: true })
    })

    it(`resumes and completes an interrupted compaction, losing no acknowledged write, over ${CYCLES} kill -9 cycles (seed ${SEED})`, async () => {
      const random = rng(SEED)
      const model = new Model()
      let verified = await writeInitial(dir, model)
      let floor = 0
      let pendingR: number | undefined
      const stats = { interrupted: 0, killedWhileResuming: 0, beforeScheduled: 0, finishedByChild: 0, acked: 0, unacked: 0, ranges: 0 }

      for (let cycle = 1; cycle <= CYCLES; cycle++) {
        const R = pendingR ?? Math.min(verified, Math.max(floor, 1) + 300 + Math.floor(random() * 500))
        const batches = Math.ceil((R - Math.max(floor, 2)) / CRASH_LOG_OPTIONS.compactionBatchRevisions)
        // The child sees about every other batch's progress (it polls status()), so aim within the first half.
        const plan: KillPlan =
          method === 'scan'
            ? {
                afterProgress: Math.floor(random() * (Math.ceil(batches * 0.45) + 1)),
                delayMs: random() < 0.5 ? 0 : Math.floor(random() * 8),
              }
            : { afterProgress: Math.floor(random() * 3), delayMs: Math.floor(random() * 40) }
        const lines = await runChild(dir, R, cycle, plan, method)
        const durable = Math.max(-1, ...lines.map((l) => l.durable ?? -1))
        const done = lines.some((l) => l.done !== undefined)
        const resuming = lines.some((l) => l.resuming !== undefined)
        if (done) stats.finishedByChild++
        else if (resuming) stats.killedWhileResuming++

        const log = await openLevelLog({ dir, ...CRASH_LOG_OPTIONS, compactionMethod: method })
        /** status().belowFloor once no compaction runs: checked against the disk after close. */
        let kept: { floor: number; entries: number; bytes: number } | undefined
        try {
          const status = await log.status()
          // never lowered; R once the child saw durable progress (or finished)
          expect(log.compactRevision, `cycle ${cycle}: floor went down`).to.be.at.least(floor)
          expect([floor, R], `cycle ${cycle}: floor after the kill`).to.include(log.compactRevision)
          if (durable >= 0 || done) expect(log.compactRevision, `cycle ${cycle}: durable progress ${durable} but floor`).to.equal(R)
          if (status.compaction !== undefined) {
            // in progress: the scheduled job, resumed by open, at least as far as the child durably got
            stats.interrupted++
            expect(status.compaction.target, `cycle ${cycle}: job target`).to.equal(R)
            expect(log.compactRevision).to.equal(R)
            expect(done, `cycle ${cycle}: the child saw compact() resolve, yet a job is left`).to.equal(false)
            expect(status.compaction.progress, `cycle ${cycle}: progress went back`).to.be.at.least(durable)
          } else if (log.compactRevision < R) {
            stats.beforeScheduled++
          }
          floor = log.compactRevision

          const placed = await placeWrites(log, lines, verified, model, cycle)
          stats.acked += placed.acked
          stats.unacked += placed.unacked
          verified = log.revision

          // Either let this open finish the job, or (sometimes) leave it to the next child to resume.
          const complete = cycle === CYCLES || random() < 0.6
          if (complete) {
            await waitUntil(
              async () => ((await log.status()).compaction === undefined ? true : undefined),
              30_000,
              `cycle ${cycle}: the resumed compaction to finish`,
              10,
            )
            if (log.compactRevision < R) await log.compact(R)
            expect(log.compactRevision).to.equal(R)
            const after = await log.status()
            expect(after.compaction).to.equal(undefined)
            expect(after.segments[0].firstRevision, `cycle ${cycle}: segments start at the floor`).to.equal(R)
            expect(after.segments.reduce((n, s) => n + s.entries, 0)).to.equal(verified - R + 1)
            kept = { floor: R, ...after.belowFloor }
            floor = R
            pendingR = undefined
          } else {
            pendingR = log.compactRevision < R || (await log.status()).compaction !== undefined ? R : undefined
          }
          const st = await log.status()
          for (let i = 1; i < st.segments.length; i++) expect(st.segments[i].firstRevision).to.equal(st.segments[i - 1].lastRevision + 1)
          expect(st.segments[st.segments.length - 1].lastRevision).to.equal(verified)
          stats.ranges += await verifyAgainstModel(log, model, random, cycle)
          floor = log.compactRevision
        } finally {
          await log.close()
        }
        if (kept !== undefined) {
          const onDisk = belowFloorOf(await withRawDb(dir, readRawTables), kept.floor)
          expect(onDisk, `cycle ${cycle}: entries kept below the floor, as status() counted them`).to.deep.equal({
            entries: kept.entries,
            bytes: kept.bytes,
          })
        }
      }
      if (process.env.KVLOG_CRASH_STATS !== undefined)
        process.stderr.write(`compaction crash test: ${JSON.stringify({ ...stats, revision: verified, floor })}\n`)
      expect(stats.interrupted + stats.killedWhileResuming, 'some kills landed in the middle of a compaction').to.be.at.least(2)
      // Each child has HEAD_START_ACKS writes acknowledged before it compacts, and it is killed only after that.
      expect(stats.acked, 'the children acknowledged writes').to.be.at.least(CYCLES * HEAD_START_ACKS)
    })
  })
