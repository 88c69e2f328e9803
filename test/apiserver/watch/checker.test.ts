/**
 * The watch checker's own tests: a hand-written oracle, a correct stream it accepts, and doctored streams
 * (a gap, a duplicate, a split revision, a wrong prevKv, an early progress, ...) that it must report.
 */
import { expect } from 'chai'
import type { WatchMessage, WireEvent, WireKv } from '../../support/watch-client.js'
import { checkOracle, checkWatches, type LogicalWatch, type OracleEvent, type OracleView, type WatchSelection } from './checker.js'

const kv = (key: string, value: string, createRevision: number, modRevision: number, version: number): WireKv => ({
  key,
  value,
  createRevision,
  modRevision,
  version,
})
const gone = (key: string, revision: number): WireKv => ({ key, value: '', createRevision: 0, modRevision: revision, version: 0 })

/**
 *   2  PUT /a/1=v1
 *   3  PUT /a/2=x
 *   4  txn: PUT /a/1=v2, PUT /b/1=b
 *   5  DELETE /a/2
 *   6  PUT /b/1=b2
 *   7  txn: DELETE /a/1, PUT /a/3=y
 *   8  PUT /c/1=c
 */
function oracle(): OracleView & { events: OracleEvent[] } {
  const events: OracleEvent[] = [
    { type: 'PUT', revision: 2, kv: kv('/a/1', 'v1', 2, 2, 1) },
    { type: 'PUT', revision: 3, kv: kv('/a/2', 'x', 3, 3, 1) },
    { type: 'PUT', revision: 4, kv: kv('/a/1', 'v2', 2, 4, 2), prevKv: kv('/a/1', 'v1', 2, 2, 1) },
    { type: 'PUT', revision: 4, kv: kv('/b/1', 'b', 4, 4, 1) },
    { type: 'DELETE', revision: 5, kv: gone('/a/2', 5), prevKv: kv('/a/2', 'x', 3, 3, 1) },
    { type: 'PUT', revision: 6, kv: kv('/b/1', 'b2', 4, 6, 2), prevKv: kv('/b/1', 'b', 4, 4, 1) },
    { type: 'DELETE', revision: 7, kv: gone('/a/1', 7), prevKv: kv('/a/1', 'v2', 2, 4, 2) },
    { type: 'PUT', revision: 7, kv: kv('/a/3', 'y', 7, 7, 1) },
    { type: 'PUT', revision: 8, kv: kv('/c/1', 'c', 8, 8, 1) },
  ]
  return { first: 2, last: 8, events }
}

const PREFIX_A: WatchSelection = { key: '/a/', prefix: true, prevKv: true }

/** A correct stream: created, then one events message per revision (prevKv as the spec says). */
function stream(spec: WatchSelection, from: number, to: number, createdAt = 8): WatchMessage[] {
  const out: WatchMessage[] = [{ type: 'created', id: 1, revision: createdAt }]
  const o = oracle()
  for (let r = from; r <= to; r++) {
    const events: WireEvent[] = o.events
      .filter((e) => e.revision === r && matchesSimple(spec, e))
      .map((e) => (spec.prevKv && e.prevKv ? { ...e } : { type: e.type, revision: e.revision, kv: e.kv }))
    if (events.length > 0) out.push({ type: 'events', id: 1, revision: r, events })
  }
  return out
}

function matchesSimple(spec: WatchSelection, e: OracleEvent): boolean {
  if (e.type === 'PUT' ? spec.noPut : spec.noDelete) return false
  const key = e.kv.key!
  if (spec.prefix) return key.startsWith(spec.key!)
  if (spec.fromKey) return key >= spec.key!
  return key === spec.key
}

function one(spec: WatchSelection, messages: WatchMessage[], startRevision = 2): LogicalWatch[] {
  return [{ name: 'w', spec, segments: [{ startRevision, messages }] }]
}

/** The violations' tags, e.g. ['[reliable]']. */
function tags(violations: string[]): string[] {
  return [...new Set(violations.map((v) => v.slice(0, v.indexOf(']') + 1)))].sort()
}

describe('watch checker', () => {
  it('accepts correct streams: one revision per message, several per message, resumed across segments', () => {
    const o = oracle()
    expect(checkOracle(o)).to.deep.equal([])
    expect(checkWatches(o, one(PREFIX_A, stream(PREFIX_A, 2, 8)), { finalRevision: 7 })).to.deep.equal([])
    const all: WatchSelection = { key: '/', fromKey: true }
    expect(checkWatches(o, one(all, stream(all, 2, 8)), { finalRevision: 8 })).to.deep.equal([])
    // Several revisions in one message, then a progress notice.
    const merged: WatchMessage[] = [
      { type: 'created', id: 1, revision: 8 },
      {
        type: 'events',
        id: 1,
        revision: 5,
        events: stream(PREFIX_A, 2, 5)
          .slice(1)
          .flatMap((m) => m.events!),
      },
      { type: 'progress', id: 1, revision: 6 },
      ...stream(PREFIX_A, 7, 8).slice(1),
    ]
    expect(checkWatches(o, one(PREFIX_A, merged))).to.deep.equal([])
    // Resumed: the second segment starts after the first one's progress notice at 6.
    const resumed: LogicalWatch[] = [
      {
        name: 'w',
        spec: PREFIX_A,
        segments: [
          { startRevision: 2, messages: [...stream(PREFIX_A, 2, 5), { type: 'progress', id: 1, revision: 6 }] },
          { startRevision: 7, messages: [...stream(PREFIX_A, 7, 8), { type: 'progress', id: 1, revision: 8 }] },
        ],
      },
    ]
    expect(checkWatches(o, resumed, { finalRevision: 8 })).to.deep.equal([])
    // From now (no start revision): starts at created.revision + 1.
    expect(
      checkWatches(o, [
        {
          name: 'w',
          spec: PREFIX_A,
          segments: [{ messages: [{ type: 'created', id: 1, revision: 6 }, ...stream(PREFIX_A, 7, 8).slice(1)] }],
        },
      ]),
    ).to.deep.equal([])
    // A COMPACTED cancel below the resume point is fine.
    const compacted: WatchMessage[] = [
      { type: 'created', id: 1, revision: 8 },
      { type: 'canceled', id: 1, code: 'COMPACTED', compactRevision: 5, reason: 'r' },
    ]
    expect(checkWatches(o, one(PREFIX_A, compacted, 3))).to.deep.equal([])
  })

  it('reports a gap', () => {
    const s = stream(PREFIX_A, 2, 8).filter((m) => m.revision !== 4)
    const v = checkWatches(oracle(), one(PREFIX_A, s))
    expect(tags(v)).to.deep.equal(['[reliable]'])
    expect(v[0]).to.contain('revision 4')
  })

  it('reports a gap at the tail only when the watch vouched for it (progress) or had to reach the end', () => {
    const s = stream(PREFIX_A, 2, 5)
    expect(checkWatches(oracle(), one(PREFIX_A, s))).to.deep.equal([])
    expect(tags(checkWatches(oracle(), one(PREFIX_A, [...s, { type: 'progress', id: 1, revision: 7 }])))).to.deep.equal([
      '[bookmarkable]',
      '[reliable]',
    ])
    expect(tags(checkWatches(oracle(), one(PREFIX_A, s), { finalRevision: 8 }))).to.deep.equal(['[reliable]'])
  })

  it('reports a duplicate', () => {
    const s = stream(PREFIX_A, 2, 8)
    s.splice(3, 0, s[2])
    const v = checkWatches(oracle(), one(PREFIX_A, s))
    expect(tags(v)).to.deep.equal(['[unique]'])
  })

  it('reports a revision split across messages', () => {
    const s = stream(PREFIX_A, 2, 8)
    const i = s.findIndex((m) => m.revision === 7)
    const [del, put] = s[i].events!
    s.splice(i, 1, { type: 'events', id: 1, revision: 7, events: [del] }, { type: 'events', id: 1, revision: 7, events: [put] })
    expect(tags(checkWatches(oracle(), one(PREFIX_A, s)))).to.deep.equal(['[atomic]'])
  })

  it('reports a revision delivered incomplete, and op order swapped inside a revision', () => {
    const all: WatchSelection = { key: '/', fromKey: true }
    const s = stream(all, 2, 8)
    const i = s.findIndex((m) => m.revision === 4)
    const incomplete = s.map((m, j) => (j === i ? { ...m, events: m.events!.slice(0, 1) } : m))
    expect(tags(checkWatches(oracle(), one(all, incomplete)))).to.deep.equal(['[atomic]'])
    const swapped = s.map((m, j) => (j === i ? { ...m, events: [...m.events!].reverse() } : m))
    expect(tags(checkWatches(oracle(), one(all, swapped)))).to.deep.equal(['[atomic]'])
  })

  it('reports revisions out of order', () => {
    const s = stream(PREFIX_A, 2, 8)
    ;[s[2], s[3]] = [s[3], s[2]]
    expect(tags(checkWatches(oracle(), one(PREFIX_A, s)))).to.include('[ordered]')
  })

  it('reports a wrong prevKv, and a prevKv that was not asked for', () => {
    const s = stream(PREFIX_A, 2, 8)
    const i = s.findIndex((m) => m.revision === 4)
    s[i] = { ...s[i], events: [{ ...s[i].events![0], prevKv: kv('/a/1', 'v0', 2, 2, 1) }] }
    expect(tags(checkWatches(oracle(), one(PREFIX_A, s)))).to.deep.equal(['[prevKv]'])
    const missing = stream(PREFIX_A, 2, 8)
    missing[i] = { ...missing[i], events: [{ ...missing[i].events![0], prevKv: undefined }] }
    expect(tags(checkWatches(oracle(), one(PREFIX_A, missing)))).to.deep.equal(['[prevKv]'])
    const bare: WatchSelection = { key: '/a/', prefix: true }
    const extra = stream(PREFIX_A, 2, 8) // carries prevKv, but this watch did not ask for it
    expect(tags(checkWatches(oracle(), one(bare, extra)))).to.deep.equal(['[prevKv]'])
  })

  it('reports a progress notice that arrived before the events it vouches for', () => {
    const s = stream(PREFIX_A, 2, 8)
    const i = s.findIndex((m) => m.revision === 4)
    s.splice(i, 0, { type: 'progress', id: 1, revision: 5 })
    const v = checkWatches(oracle(), one(PREFIX_A, s))
    expect(tags(v)).to.deep.equal(['[bookmarkable]'])
    expect(v.join('\n')).to.contain('progress at 5')
  })

  it('reports filter violations and events outside the watched keys', () => {
    const noDelete: WatchSelection = { key: '/a/', prefix: true, noDelete: true }
    const withDeletes = stream({ key: '/a/', prefix: true }, 2, 8)
    expect(tags(checkWatches(oracle(), one(noDelete, withDeletes)))).to.include('[filtered]')
    const single: WatchSelection = { key: '/a/1' }
    expect(tags(checkWatches(oracle(), one(single, stream({ key: '/a/', prefix: true }, 2, 3))))).to.include('[filtered]')
  })

  it('reports a wrong create flag (version, createRevision)', () => {
    const s = stream(PREFIX_A, 2, 8)
    const i = s.findIndex((m) => m.revision === 4)
    s[i] = { ...s[i], events: [{ ...s[i].events![0], kv: kv('/a/1', 'v2', 4, 4, 1) }] }
    expect(tags(checkWatches(oracle(), one(PREFIX_A, s)))).to.deep.equal(['[createFlag]'])
    const t = stream(PREFIX_A, 2, 8)
    t[1] = { ...t[1], events: [{ ...t[1].events![0], kv: kv('/a/1', 'v1', 2, 2, 2) }] }
    expect(tags(checkWatches(oracle(), one(PREFIX_A, t)))).to.deep.equal(['[createFlag]'])
  })

  it('reports a resume that does not start where the previous segment left off', () => {
    const w: LogicalWatch[] = [
      {
        name: 'w',
        spec: PREFIX_A,
        segments: [
          { startRevision: 2, messages: stream(PREFIX_A, 2, 3) },
          { startRevision: 5, messages: stream(PREFIX_A, 5, 8) },
        ],
      },
    ]
    expect(tags(checkWatches(oracle(), w))).to.deep.equal(['[resumable]'])
  })

  it('reports a COMPACTED cancel the watch did not deserve, and protocol errors', () => {
    const s: WatchMessage[] = [...stream(PREFIX_A, 2, 5), { type: 'canceled', id: 1, code: 'COMPACTED', compactRevision: 4, reason: 'r' }]
    expect(tags(checkWatches(oracle(), one(PREFIX_A, s)))).to.deep.equal(['[reliable]'])
    const noCreated = stream(PREFIX_A, 2, 8).slice(1)
    expect(tags(checkWatches(oracle(), one(PREFIX_A, noCreated)))).to.deep.equal(['[protocol]'])
    const afterCancel = [
      ...stream(PREFIX_A, 2, 4),
      { type: 'canceled', id: 1, reason: 'x' } as WatchMessage,
      ...stream(PREFIX_A, 5, 8).slice(1),
    ]
    expect(tags(checkWatches(oracle(), one(PREFIX_A, afterCancel)))).to.deep.equal(['[protocol]'])
  })

  it('checks the oracle itself', () => {
    const o = oracle()
    o.events[2] = { ...o.events[2], kv: kv('/a/1', 'v2', 2, 4, 3) }
    expect(tags(checkOracle(o))).to.deep.equal(['[oracle]'])
    const p = oracle()
    p.events[5] = { ...p.events[5], prevKv: kv('/b/1', 'zz', 4, 4, 1) }
    expect(tags(checkOracle(p))).to.deep.equal(['[oracle]'])
  })
})
