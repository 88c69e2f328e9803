import { expect } from 'chai'
import type { Kv, WatchEvent } from '../linearizability/types.js'
import { checkWatch, type EventLog, type WatchResponse, type WatchStream } from './check.js'

const kv = (key: string, value: string, create: number, mod: number, version: number): Kv => ({ key, value, create, mod, version })
const putA2 = { type: 'PUT', kv: kv('a', '1', 2, 2, 1) } as const
const putA3 = { type: 'PUT', kv: kv('a', '2', 2, 3, 2), prevKv: putA2.kv } as const
// A txn at 4 writes two keys.
const putB4 = { type: 'PUT', kv: kv('b', '1', 4, 4, 1) } as const
const delA4 = { type: 'DELETE', kv: kv('a', '', 0, 4, 0), prevKv: putA3.kv } as const
const putC5 = { type: 'PUT', kv: kv('c', '1', 5, 5, 1) } as const

const log: EventLog = new Map<number, WatchEvent[]>([
  [2, [putA2]],
  [3, [putA3]],
  [4, [putB4, delA4]],
  [5, [putC5]],
])

const stream = (responses: WatchResponse[], request: Partial<WatchStream['request']> = {}): WatchStream => ({
  id: 'w',
  request: { key: '', end: '\0', startRevision: 2, prevKv: true, ...request },
  responses,
})
const kinds = (s: WatchStream) => [...new Set(checkWatch(s, log).map((v) => v.kind))]

const good = [
  { revision: 3, events: [putA2, putA3] },
  { revision: 4, events: [putB4, delA4] },
  { revision: 4, events: [] },
  { revision: 5, events: [putC5] },
]

describe('robustness: watch checks', () => {
  it('accepts a stream that has every event once, in order, with the right prev_kv', () => {
    expect(kinds(stream(good))).to.deep.equal([])
    // A progress notification at 5 before the event at 5 was sent would be wrong (below), but one at 4 is fine.
    expect(kinds(stream([good[0]!, good[1]!, { revision: 4, events: [] }, good[3]!]))).to.deep.equal([])
  })

  it('catches a gap: an event of the log never sent', () => {
    expect(kinds(stream([{ revision: 3, events: [putA2] }, good[1]!, good[3]!]))).to.deep.equal(['reliable'])
  })

  it('catches a duplicate and a reordered event', () => {
    expect(kinds(stream([good[0]!, { revision: 4, events: [putB4, delA4] }, { revision: 5, events: [putA3, putC5] }]))).to.include.members([
      'ordered',
      'unique',
    ])
  })

  it("catches a txn's events split over two responses", () => {
    expect(kinds(stream([good[0]!, { revision: 4, events: [putB4] }, { revision: 4, events: [delA4] }, good[3]!]))).to.deep.equal([
      'atomic',
    ])
  })

  it('catches a progress notification that claims a revision before events not yet sent', () => {
    expect(kinds(stream([good[0]!, { revision: 4, events: [] }, good[1]!, good[3]!]))).to.deep.equal(['bookmarkable'])
  })

  it('catches a resume that does not start exactly at the asked revision', () => {
    expect(kinds(stream([good[1]!, good[3]!], { startRevision: 3 }))).to.deep.equal(['reliable'])
    expect(kinds(stream([{ revision: 3, events: [putA3] }, good[1]!, good[3]!], { startRevision: 3 }))).to.deep.equal([])
  })

  it('catches a wrong prev_kv, prev_kv not asked for, and a wrong is-create', () => {
    const wrongPrev = { ...putA3, prevKv: kv('a', 'x', 2, 2, 1) }
    expect(kinds(stream([{ revision: 3, events: [putA2, wrongPrev] }, good[1]!, good[3]!]))).to.deep.equal(['prev-kv'])
    expect(kinds(stream(good, { prevKv: false }))).to.include('prev-kv')
    const notCreate = { type: 'PUT', kv: kv('c', '1', 3, 5, 1) } as const
    expect(kinds(stream([good[0]!, good[1]!, { revision: 5, events: [notCreate] }]))).to.include('is-create')
  })

  it('catches events its filters or range exclude, and an event not in the log', () => {
    expect(kinds(stream(good, { noDelete: true }))).to.deep.equal(['filter'])
    expect(kinds(stream([{ revision: 3, events: [putA2, putA3] }, good[1]!], { key: 'a', end: undefined }))).to.deep.equal(['filter'])
    const made = { type: 'PUT', kv: kv('d', '1', 6, 6, 1) } as const
    expect(kinds(stream([...good, { revision: 6, events: [made] }]))).to.deep.equal(['reliable'])
  })

  it('stops at a cancel for compaction, and without the log checks what the stream alone shows', () => {
    expect(kinds(stream([{ revision: 5, events: [], compactRevision: 4 }], { startRevision: 1 }))).to.deep.equal([])
    expect(
      checkWatch(stream([good[0]!, { revision: 4, events: [putB4] }, { revision: 4, events: [delA4] }])).map((v) => v.kind),
    ).to.deep.equal(['atomic'])
  })
})
