/**
 * Crash test: a real child process (crash/writer-child.ts) writes to a LevelLog with fsync 'always' on a real
 * directory and prints every acknowledged write; the parent SIGKILLs it at a random moment (sometimes while
 * it is still opening/recovering), reopens the log and checks:
 *   - every acknowledged write is there, at its revision;
 *   - the revisions are gapless from 2 to the current one (history shows every revision), so what survived is
 *     a prefix of what was written, and the current revision is at least the highest acknowledged one;
 *   - revisions are never reused: each cycle's acknowledgements lie above what the previous check saw;
 *   - the latest state equals the history folded from the start, and the segment table is contiguous.
 * About 15 cycles on the same directory, each continuing where the last one stopped; every fourth cycle has a
 * single writer, whose groups are written inline on the main thread (io/inline-write.ts). LevelDB's log is
 * allocated ahead of its writes (leveldbWalPreallocateBytes), so most kills leave it with a zeroed tail,
 * which the reopen reads past; the test counts those.
 */
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openLevelLog } from '../../../log/level/level-log.js'
import type { LevelLog } from '../../../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../../log/level/options.js'
import type { LogEntry } from '../../../log/types.js'

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'crash', 'writer-child.js')
const CYCLES = 15
const ZERO = Buffer.from([0])

interface Ack {
  key: string
  value: string | null
  revision: number
  cycle: number
}

interface CycleOutcome {
  acks: Ack[]
  ready: boolean
  /** Batches the child had written inline by its last acknowledgement. */
  inline: number
}

/** Runs one child, kills it with SIGKILL after `killAfterMs` (counted from ready, or from spawn if early). */
function runChild(dir: string, cycle: number, killAfterMs: number, early: boolean, writers: number): Promise<CycleOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dir, String(cycle), String(writers)], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let killed = false
    let ready = false
    const kill = (): void => {
      if (!killed) {
        killed = true
        child.kill('SIGKILL')
      }
    }
    const timer = early ? setTimeout(kill, killAfterMs) : undefined
    child.stdout.setEncoding('utf8')
    child.stderr.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      out += chunk
      if (!ready && out.includes('\n')) {
        ready = true
        if (!early) setTimeout(kill, killAfterMs)
      }
    })
    child.stderr.on('data', (chunk: string) => {
      err += chunk
    })
    const safety = setTimeout(kill, 15_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(safety)
      if (timer !== undefined) clearTimeout(timer)
      if (!killed || signal !== 'SIGKILL') {
        reject(new Error(`child ${cycle} ended by itself (code ${code}, signal ${signal}): ${err}`))
        return
      }
      // only complete lines count: a line cut by the kill was never fully printed
      const lines = out.split('\n').slice(0, -1)
      const acks: Ack[] = []
      let sawReady = false
      let inline = 0
      for (const line of lines) {
        const msg = JSON.parse(line) as { ready?: boolean; key?: string; value?: string | null; revision: number; inline?: number }
        if (msg.ready === true) sawReady = true
        else {
          acks.push({ key: msg.key!, value: msg.value ?? null, revision: msg.revision, cycle })
          inline = msg.inline ?? inline
        }
      }
      resolve({ acks, ready: sawReady, inline })
    })
  })
}

/** Whether a write-ahead log (NNNNNN.log) in `dir` is allocated ahead of its records (whole chunks). */
async function logPreallocated(dir: string): Promise<boolean> {
  const chunk = DEFAULT_LEVEL_LOG_OPTIONS.leveldbWalPreallocateBytes
  for (const name of (await readdir(dir)).filter((f) => /^\d+\.log$/.test(f))) {
    const { size } = await stat(join(dir, name))
    if (size > 0 && size % chunk === 0) return true
  }
  return false
}

/** Reads history (fromRevision..current) in pages; asserts every revision in that span is present. */
async function readAll(log: LevelLog, fromRevision: number): Promise<LogEntry[]> {
  const entries: LogEntry[] = []
  let from = fromRevision
  for (;;) {
    const page = await log.history(ZERO, { rangeEnd: ZERO, fromRevision: from, limit: 5000 })
    entries.push(...page.entries)
    if (!page.more) break
    from = page.nextRevision
  }
  return entries
}

describe('LevelLog crash safety (SIGKILL of a writing process)', function () {
  this.timeout(120_000)
  let dir = ''
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-crash-'))
  })
  after(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true })
  })

  it(`keeps exactly an acknowledged, gapless prefix across ${CYCLES} kill -9 cycles`, async () => {
    const byRevision = new Map<number, Ack[]>()
    const state = new Map<string, string>()
    let verified = 1
    let maxAcked = 1
    let total = 0
    let killedEarly = 0
    let unacked = 0
    let loneAcks = 0
    let zeroedTails = 0
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const early = cycle % 5 === 3
      const delay = early ? Math.floor(Math.random() * 150) : 20 + Math.floor(Math.random() * 300)
      const lone = cycle % 4 === 2
      const outcome = await runChild(dir, cycle, delay, early, lone ? 1 : 64)
      if (!outcome.ready) killedEarly++
      if (lone && outcome.acks.length > 0) {
        expect(outcome.inline, `cycle ${cycle}: a lone writer's batches were written inline`).to.be.greaterThan(0)
        loneAcks += outcome.acks.length
      }
      for (const a of outcome.acks) {
        expect(
          a.revision,
          `cycle ${cycle}: ${a.key} acknowledged at ${a.revision}, not above the last verified ${verified}`,
        ).to.be.greaterThan(verified)
        const same = byRevision.get(a.revision) ?? []
        expect(
          same.every((s) => s.cycle === cycle),
          `revision ${a.revision} reused across cycles`,
        ).to.equal(true)
        same.push(a)
        byRevision.set(a.revision, same)
        maxAcked = Math.max(maxAcked, a.revision)
      }
      total += outcome.acks.length
      if (await logPreallocated(dir)) zeroedTails++

      const log = await openLevelLog({ dir, fsync: 'always', segmentMaxEntries: 200 })
      try {
        const rev = log.revision
        expect(rev, `cycle ${cycle}: revision after reopen vs highest acknowledged`).to.be.at.least(maxAcked)
        expect(rev, `cycle ${cycle}: revision went back`).to.be.at.least(verified)
        const entries = await readAll(log, verified + 1)
        expect(entries.length, `cycle ${cycle}: entries ${verified + 1}..${rev}`).to.equal(rev - verified)
        entries.forEach((e, i) => expect(e.revision, `cycle ${cycle}: gap in history`).to.equal(verified + 1 + i))
        for (const e of entries) {
          expect(e.events.length, `revision ${e.revision} has events`).to.be.greaterThan(0)
          for (const ev of e.events) {
            if (ev.type === 'PUT') state.set(ev.kv.key.toString(), ev.kv.value.toString())
            else state.delete(ev.kv.key.toString())
          }
          for (const a of byRevision.get(e.revision) ?? []) {
            const ev = e.events.find((x) => x.kv.key.toString() === a.key)
            expect(ev, `acknowledged ${a.key} at ${a.revision} is missing`).to.not.equal(undefined)
            expect(ev!.type).to.equal(a.value === null ? 'DELETE' : 'PUT')
            if (a.value !== null) expect(ev!.kv.value.toString(), `value of ${a.key} at ${a.revision}`).to.equal(a.value)
          }
        }
        // the latest state is the fold of the whole history
        const latest = await log.range(ZERO, { rangeEnd: ZERO })
        expect(new Map(latest.kvs.map((kv) => [kv.key.toString(), kv.value.toString()]))).to.deep.equal(state)
        // spot checks of older acknowledgements through reads at their revision
        const old = [...byRevision.values()].flat()
        for (let i = 0; i < Math.min(40, old.length); i++) {
          const a = old[Math.floor(Math.random() * old.length)]!
          const kv = await log.get(a.key, { revision: a.revision })
          if (a.value === null) expect(kv, `${a.key} deleted at ${a.revision}`).to.equal(undefined)
          else expect([kv?.value.toString(), kv?.modRevision], `get ${a.key} at ${a.revision}`).to.deep.equal([a.value, a.revision])
        }
        // the segment table covers 2..rev without holes
        const st = await log.status()
        expect(st.revision).to.equal(rev)
        if (rev > 1) {
          expect(st.segments[0]?.firstRevision).to.equal(2)
          expect(st.segments[st.segments.length - 1]?.lastRevision).to.equal(rev)
          for (let i = 1; i < st.segments.length; i++) expect(st.segments[i]!.firstRevision).to.equal(st.segments[i - 1]!.lastRevision + 1)
          expect(st.segments.reduce((n, s) => n + s.entries, 0)).to.equal(rev - 1)
        }
        unacked += rev - maxAcked
        verified = rev
      } finally {
        await log.close()
      }
    }
    // once more over everything: history from 2 shows every revision and every acknowledgement
    const log = await openLevelLog({ dir, fsync: 'always' })
    try {
      const all = await readAll(log, 2)
      expect(all.map((e) => e.revision)).to.deep.equal(Array.from({ length: log.revision - 1 }, (_, i) => i + 2))
      const events = new Map(all.map((e) => [e.revision, e]))
      for (const [rev, acks] of byRevision) {
        for (const a of acks)
          expect(
            events.get(rev)?.events.some((x) => x.kv.key.toString() === a.key),
            `${a.key} at ${rev}`,
          ).to.equal(true)
      }
    } finally {
      await log.close()
    }
    expect(total, 'the children acknowledged writes').to.be.greaterThan(CYCLES * 10)
    expect(loneAcks, 'the lone writers acknowledged writes').to.be.greaterThan(0)
    expect(zeroedTails, 'kills that left the log with a preallocated, zeroed tail').to.be.greaterThan(CYCLES / 2)
    if (process.env.KVLOG_CRASH_STATS !== undefined) {
      process.stderr.write(
        `crash test: ${total} acknowledged writes (${loneAcks} by lone writers), revision ${verified}, ${killedEarly} kills before ready, ${zeroedTails} with a zeroed log tail, ${unacked} durable but unacknowledged\n`,
      )
    }
  })
})
