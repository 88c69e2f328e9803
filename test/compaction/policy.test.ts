/**
 * compaction/policy.ts: planFloor (where automatic compaction may put the floor) and parseRetention
 * (--auto-compaction-retention per mode). Pure functions, no I/O.
 */
import { expect } from 'chai'
import { DEFAULT_CONFIG, type Config } from '../../config/index.js'
import { ConfigError } from '../../config/index.js'
import { parseRetention, planFloor, retentionPolicy, type RetentionPolicy } from '../../compaction/index.js'
import type { CursorPosition, FloorInputs } from '../../compaction/policy.js'

const HOUR = 3_600_000

function policy(p: Partial<RetentionPolicy>): RetentionPolicy {
  return { mode: 'off', revisions: 0, durationMs: 0, quotaBytes: 0, minRetain: 0, maxCursorLag: 1_000_000, ...p }
}

function inputs(i: Partial<FloorInputs>): FloorInputs {
  return { current: 1000, compactRevision: 0, dbSize: 0, cursors: [], ...i }
}

const cursor = (name: string, revision: number, expired = false): CursorPosition => ({ name, revision, expired })

describe('compaction policy: planFloor', () => {
  describe('each policy on its own', () => {
    it('off: no target, whatever the inputs', () => {
      const plan = planFloor(policy({ mode: 'off' }), inputs({ current: 10_000 }))
      expect(plan.target).to.equal(undefined)
      expect(plan.expire).to.deep.equal([])
      expect(plan.overQuota).to.equal(false)
    })

    it('revision: keeps the last N revisions (floor = current - N)', () => {
      expect(planFloor(policy({ mode: 'revision', revisions: 100 }), inputs({ current: 1000 })).target).to.equal(900)
      // nothing to do while there are fewer than N revisions
      expect(planFloor(policy({ mode: 'revision', revisions: 100 }), inputs({ current: 80 })).target).to.equal(undefined)
      expect(planFloor(policy({ mode: 'revision', revisions: 0 }), inputs({ current: 1000 })).target).to.equal(undefined)
    })

    it('periodic: the first revision inside the window; everything when the window is empty', () => {
      const p = policy({ mode: 'periodic', durationMs: HOUR })
      expect(planFloor(p, inputs({ current: 1000, firstRevisionInWindow: 640 })).target).to.equal(640)
      // nothing committed within the window: revisionAt answers current + 1, the floor goes to current
      expect(planFloor(p, inputs({ current: 1000, firstRevisionInWindow: 1001 })).target).to.equal(1000)
      // not asked (no window computed): no target
      expect(planFloor(p, inputs({ current: 1000 })).target).to.equal(undefined)
      // a duration of 0 is off
      expect(planFloor(policy({ mode: 'periodic', durationMs: 0 }), inputs({ current: 1000, firstRevisionInWindow: 500 })).target).to.equal(
        undefined,
      )
    })

    it('periodic ignores a window in revision mode and vice versa', () => {
      expect(planFloor(policy({ mode: 'revision', revisions: 0 }), inputs({ firstRevisionInWindow: 700 })).target).to.equal(undefined)
      expect(planFloor(policy({ mode: 'periodic', revisions: 100, durationMs: 0 }), inputs({})).target).to.equal(undefined)
    })

    it('quota: over the quota, compacts to current - minRetain', () => {
      const p = policy({ quotaBytes: 1000, minRetain: 50 })
      const over = planFloor(p, inputs({ current: 1000, dbSize: 1001 }))
      expect(over.overQuota).to.equal(true)
      expect(over.target).to.equal(950)
      const at = planFloor(p, inputs({ current: 1000, dbSize: 1000 }))
      expect(at.overQuota, 'exactly at the quota is not over it').to.equal(false)
      expect(at.target).to.equal(undefined)
      // no quota (0) is never over
      expect(planFloor(policy({ quotaBytes: 0 }), inputs({ dbSize: 1e12 })).overQuota).to.equal(false)
    })
  })

  describe('combining', () => {
    it('the most aggressive candidate wins', () => {
      // under the quota only the mode counts
      const a = planFloor(
        policy({ mode: 'revision', revisions: 300, quotaBytes: 10, minRetain: 100 }),
        inputs({ current: 1000, dbSize: 5 }),
      )
      expect(a.target).to.equal(700)
      // over the quota: revision would keep 300, the quota only minRetain (100): the quota wins
      const b = planFloor(
        policy({ mode: 'revision', revisions: 300, quotaBytes: 10, minRetain: 100 }),
        inputs({ current: 1000, dbSize: 11 }),
      )
      expect(b.target).to.equal(900)
      // periodic vs quota, the same way
      const c = planFloor(
        policy({ mode: 'periodic', durationMs: HOUR, quotaBytes: 10, minRetain: 10 }),
        inputs({ current: 1000, dbSize: 11, firstRevisionInWindow: 400 }),
      )
      expect(c.target).to.equal(990)
      const d = planFloor(
        policy({ mode: 'periodic', durationMs: HOUR, quotaBytes: 10, minRetain: 10 }),
        inputs({ current: 1000, dbSize: 9, firstRevisionInWindow: 400 }),
      )
      expect(d.target).to.equal(400)
      // the quota's candidate is the cap itself, so a mode can at most tie with it
      const e = planFloor(policy({ mode: 'revision', revisions: 5, quotaBytes: 10, minRetain: 100 }), inputs({ current: 1000, dbSize: 11 }))
      expect(e.target).to.equal(900)
    })

    it('min retain caps every policy', () => {
      expect(planFloor(policy({ mode: 'revision', revisions: 10, minRetain: 200 }), inputs({ current: 1000 })).target).to.equal(800)
      expect(
        planFloor(policy({ mode: 'periodic', durationMs: 1, minRetain: 200 }), inputs({ current: 1000, firstRevisionInWindow: 1001 }))
          .target,
      ).to.equal(800)
      expect(planFloor(policy({ quotaBytes: 1, minRetain: 200 }), inputs({ current: 1000, dbSize: 2 })).target).to.equal(800)
      // min retain larger than the history: nothing at all
      const none = planFloor(
        policy({ mode: 'revision', revisions: 10, quotaBytes: 1, minRetain: 5000 }),
        inputs({ current: 1000, dbSize: 2 }),
      )
      expect(none.target).to.equal(undefined)
      expect(none.overQuota, 'still reported over quota (the alarm needs it)').to.equal(true)
    })

    it('never lowers: a target at or below the compact revision is undefined', () => {
      const p = policy({ mode: 'revision', revisions: 100 })
      expect(planFloor(p, inputs({ current: 1000, compactRevision: 899 })).target).to.equal(900)
      expect(planFloor(p, inputs({ current: 1000, compactRevision: 900 })).target).to.equal(undefined)
      expect(planFloor(p, inputs({ current: 1000, compactRevision: 950 })).target).to.equal(undefined)
      const q = policy({ quotaBytes: 1, minRetain: 100 })
      const plan = planFloor(q, inputs({ current: 1000, compactRevision: 950, dbSize: 2 }))
      expect(plan.target).to.equal(undefined)
      expect(plan.overQuota).to.equal(true)
    })
  })

  describe('consumer cursors', () => {
    it('the slowest cursor holds the floor at its revision + 1', () => {
      const p = policy({ mode: 'revision', revisions: 100 })
      const plan = planFloor(p, inputs({ current: 1000, cursors: [cursor('fast', 990), cursor('slow', 400), cursor('mid', 700)] }))
      expect(plan.target).to.equal(401)
      expect(plan.expire).to.deep.equal([])
      // a cursor ahead of the policy's floor holds nothing back
      expect(planFloor(p, inputs({ current: 1000, cursors: [cursor('a', 950)] })).target).to.equal(900)
      // exactly at floor - 1: resumes at the floor, nothing to hold
      expect(planFloor(p, inputs({ current: 1000, cursors: [cursor('a', 899)] })).target).to.equal(900)
    })

    it('a held floor below the compact revision means no compaction (the floor never goes down)', () => {
      const p = policy({ mode: 'revision', revisions: 100 })
      expect(planFloor(p, inputs({ current: 1000, compactRevision: 500, cursors: [cursor('a', 450)] })).target).to.equal(undefined)
    })

    it('holds the quota back too (bounded by max lag)', () => {
      const plan = planFloor(policy({ quotaBytes: 1, minRetain: 0 }), inputs({ current: 1000, dbSize: 2, cursors: [cursor('c', 600)] }))
      expect(plan.target).to.equal(601)
      expect(plan.overQuota).to.equal(true)
    })

    it('a cursor lagging more than maxCursorLag expires and holds nothing', () => {
      const p = policy({ mode: 'revision', revisions: 100, maxCursorLag: 300 })
      const plan = planFloor(p, inputs({ current: 1000, cursors: [cursor('old', 699), cursor('edge', 700), cursor('ok', 850)] }))
      expect(plan.expire).to.deep.equal(['old'])
      // 'edge' lags exactly maxCursorLag: still holds
      expect(plan.target).to.equal(701)
      const beyond = planFloor(p, inputs({ current: 1000, cursors: [cursor('old', 10)] }))
      expect(beyond.expire).to.deep.equal(['old'])
      expect(beyond.target).to.equal(900)
    })

    it('an expired cursor holds nothing and is not expired again', () => {
      const p = policy({ mode: 'revision', revisions: 100, maxCursorLag: 50 })
      const plan = planFloor(p, inputs({ current: 1000, cursors: [cursor('gone', 10, true)] }))
      expect(plan.expire).to.deep.equal([])
      expect(plan.target).to.equal(900)
    })

    it('expires lagging cursors even when no policy compacts', () => {
      const plan = planFloor(policy({ mode: 'off', maxCursorLag: 5 }), inputs({ current: 1000, cursors: [cursor('c', 900)] }))
      expect(plan.expire).to.deep.equal(['c'])
      expect(plan.target).to.equal(undefined)
    })
  })
})

describe('compaction policy: parseRetention', () => {
  it('revision mode: a whole number of revisions', () => {
    expect(parseRetention('revision', '10000')).to.deep.equal({ revisions: 10_000, durationMs: 0 })
    expect(parseRetention('revision', ' 42 ')).to.deep.equal({ revisions: 42, durationMs: 0 })
    expect(parseRetention('revision', '0')).to.deep.equal({ revisions: 0, durationMs: 0 })
  })

  it('periodic mode: units h m s ms, combinable; a bare number is hours (etcd)', () => {
    expect(parseRetention('periodic', '1h')).to.deep.equal({ revisions: 0, durationMs: HOUR })
    expect(parseRetention('periodic', '30m')).to.deep.equal({ revisions: 0, durationMs: 30 * 60_000 })
    expect(parseRetention('periodic', '1h30m')).to.deep.equal({ revisions: 0, durationMs: 90 * 60_000 })
    expect(parseRetention('periodic', '1s')).to.deep.equal({ revisions: 0, durationMs: 1000 })
    expect(parseRetention('periodic', '250ms')).to.deep.equal({ revisions: 0, durationMs: 250 })
    expect(parseRetention('periodic', '1.5s')).to.deep.equal({ revisions: 0, durationMs: 1500 })
    expect(parseRetention('periodic', '2')).to.deep.equal({ revisions: 0, durationMs: 2 * HOUR })
    expect(parseRetention('periodic', '0.5')).to.deep.equal({ revisions: 0, durationMs: HOUR / 2 })
  })

  it('off, 0 and empty mean no retention in every mode', () => {
    for (const mode of ['off', 'revision', 'periodic'] as const) {
      expect(parseRetention(mode, '0'), mode).to.deep.equal({ revisions: 0, durationMs: 0 })
      expect(parseRetention(mode, ''), mode).to.deep.equal({ revisions: 0, durationMs: 0 })
    }
    // mode off ignores the value entirely (as etcd does)
    expect(parseRetention('off', 'garbage')).to.deep.equal({ revisions: 0, durationMs: 0 })
  })

  const bad: Array<['revision' | 'periodic', string]> = [
    ['revision', '1h'],
    ['revision', '1.5'],
    ['revision', '-5'],
    ['revision', '1e3'],
    ['revision', 'ten'],
    ['revision', '10 revisions'],
    ['periodic', '5x'],
    ['periodic', 'h'],
    ['periodic', '-1h'],
    ['periodic', '1h 30m'],
    ['periodic', '1d'],
    ['periodic', 'forever'],
  ]
  for (const [mode, text] of bad) {
    it(`rejects "${text}" in mode ${mode}`, () => {
      expect(() => parseRetention(mode, text)).to.throw(Error)
      // through the config: a ConfigError naming the setting (what `kvlog serve` reports, exit 2)
      const config: Config = { ...DEFAULT_CONFIG, autoCompactionMode: mode, autoCompactionRetention: text }
      let caught: unknown
      try {
        retentionPolicy(config)
      } catch (err) {
        caught = err
      }
      expect(caught).to.be.instanceOf(ConfigError)
      expect((caught as ConfigError).setting).to.equal('autoCompactionRetention')
    })
  }

  it('retentionPolicy carries the quota, min retain and max cursor lag from the config', () => {
    const config: Config = {
      ...DEFAULT_CONFIG,
      autoCompactionMode: 'revision',
      autoCompactionRetention: '500',
      quotaBackendBytes: 1234,
      compactionMinRetain: 7,
      cursorMaxLag: 99,
    }
    expect(retentionPolicy(config)).to.deep.equal({
      mode: 'revision',
      revisions: 500,
      durationMs: 0,
      quotaBytes: 1234,
      minRetain: 7,
      maxCursorLag: 99,
    })
  })
})
