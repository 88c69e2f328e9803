/**
 * log/page-counts.ts in LevelLog's ranges: a list paged as kube-apiserver pages it (limit, the next page
 * from the key after the last, at the first page's revision) gets etcd's count on every page (the keys from
 * the page's start to the range's end) while the range is counted once, not once per page; at another
 * revision, after writes, it is counted anew; with rangePageCounts 0 every page counts.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RangeOptions } from '../../../log/types.js'
import { HistView } from '../../../log/level/hist-view.js'
import { LatestView } from '../../../log/level/latest-view.js'
import { openLevelLog, type LevelLog } from '../../../log/level/level-log.js'
import { DEFAULT_LEVEL_LOG_OPTIONS } from '../../../log/level/options.js'

const PREFIX = '/pods/'
const END = '/pods0'
const KEYS = 250
const PAGE = 40
const name = (i: number) => `${PREFIX}${String(i).padStart(4, '0')}`

describe('log/level: paged ranges count once', function () {
  this.timeout(60_000)
  let dir = ''
  let log: LevelLog | undefined
  let counted = 0
  const originals = { latest: LatestView.prototype.count, hist: HistView.prototype.count }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-paged-counts-'))
    counted = 0
    LatestView.prototype.count = function (this: LatestView, ...args) {
      counted++
      return originals.latest.apply(this, args)
    }
    HistView.prototype.count = function (this: HistView, ...args) {
      counted++
      return originals.hist.apply(this, args)
    }
  })
  afterEach(async () => {
    LatestView.prototype.count = originals.latest
    HistView.prototype.count = originals.hist
    await log?.close()
    log = undefined
    await rm(dir, { recursive: true, force: true })
  })

  const open = async (rangePageCounts: number): Promise<LevelLog> => {
    log = await openLevelLog({ ...DEFAULT_LEVEL_LOG_OPTIONS, dir, fsync: 'never', rangePageCounts, maxTxnOps: KEYS })
    await log.txn({ success: Array.from({ length: KEYS }, (_, i) => ({ type: 'put' as const, key: name(i), value: `v${i}` })) })
    return log
  }

  /** Lists the prefix in pages, through range or rangeInto: each page's keys and count, and the revision read. */
  async function pagedList(l: LevelLog, into: boolean, revision = 0): Promise<{ keys: string[]; counts: number[]; revision: number }> {
    const keys: string[] = []
    const counts: number[] = []
    let start = PREFIX
    let rev = revision
    for (;;) {
      const options: RangeOptions = { rangeEnd: END, limit: PAGE, revision: rev }
      let page: string[]
      let r: { more: boolean; count: number; revision: number }
      if (into) {
        page = []
        r = await l.rangeInto(start, options, (key) => page.push(key.toString()))
      } else {
        const result = await l.range(start, options)
        page = result.kvs.map((kv) => kv.key.toString())
        r = result
      }
      rev = r.revision
      keys.push(...page)
      counts.push(r.count)
      if (!r.more) break
      start = `${page[page.length - 1]}\0`
    }
    return { keys, counts, revision: rev }
  }

  const expectedCounts = (keys: number) => Array.from({ length: Math.ceil(keys / PAGE) }, (_, p) => keys - p * PAGE)

  for (const into of [true, false]) {
    it(`counts the range once for all its pages (${into ? 'rangeInto' : 'range'}), each page's count etcd's`, async () => {
      const l = await open(1024)
      const first = await pagedList(l, into)
      expect(first.keys).to.deep.equal(Array.from({ length: KEYS }, (_, i) => name(i)))
      expect(first.counts).to.deep.equal(expectedCounts(KEYS))
      expect(counted, 'counts of the range').to.equal(1)

      // Writes move the store on; the same list at the first revision reads the past (HistView), counted once.
      await l.put(name(KEYS), 'new')
      await l.delete(name(3))
      counted = 0
      const again = await pagedList(l, into, first.revision)
      expect(again.counts).to.deep.equal(expectedCounts(KEYS))
      expect(counted).to.equal(1)

      counted = 0
      const now = await pagedList(l, into)
      expect(now.revision).to.equal(first.revision + 2)
      expect(now.counts).to.deep.equal(expectedCounts(KEYS))
      expect(now.keys).to.not.include(name(3))
      expect(now.keys).to.include(name(KEYS))
      expect(counted, 'a new revision is counted anew').to.equal(1)
    })
  }

  it('with rangePageCounts 0, counts every page', async () => {
    const l = await open(0)
    const list = await pagedList(l, true)
    expect(list.counts).to.deep.equal(expectedCounts(KEYS))
    expect(counted).to.equal(Math.ceil(KEYS / PAGE) - 1)
  })
})
