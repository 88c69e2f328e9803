/**
 * The history checker's own tests: a hand-written history it must accept, and copies of it with one
 * known violation each (a lost write, a reused revision, a stale read, a wrong read, a wrong txn branch,
 * a failed write that was applied, a value applied twice, revisions lowered by a restart, history
 * changed by a restart, a watch gap) that it must report under the right tag. This is how we know the
 * checker can fail.
 */
import { expect } from 'chai'
import type { OracleEvent } from '../../apiserver/watch/checker.js'
import type { WatchMessage, WireKv } from '../../support/watch-client.js'
import type { History, OpRecord, Operation, OpResult, Outcome, RecoveryCheck } from '../history.js'
import { checkHistory } from './index.js'

const b64 = (s: string) => Buffer.from(s).toString('base64')
const kv = (key: string, value: string, createRevision: number, modRevision: number, version: number): WireKv => ({
  key,
  value,
  createRevision,
  modRevision,
  version,
})
const gone = (key: string, revision: number): WireKv => ({ key, value: '', createRevision: 0, modRevision: revision, version: 0 })
const sel = (key: string, extra: { prefix?: boolean; fromKey?: boolean } = {}) => ({ keyBase64: b64(key), ...extra })

/**
 *   2  PUT /a=v1                 op 1
 *   3  PUT /b=v2                 op 2
 *   4  txn MOD(/a)=2 → PUT /a=v3 op 3
 *   5  DELETE /b                 op 4
 *   -  txn MOD(/a)=2 fails → range /a (read-only at 5)   op 5
 *   -  range / prefix at latest (5)                       op 6
 *   -  range / prefix at revision 3                       op 7
 *   6  txn: PUT /c=v4, DELETE /a op 8
 *   -  put /d=v9 → NO_SPACE (not applied)                 op 9
 *   7  PUT /d=v10 (outcome unknown, applied)              op 10
 *   -  put /d=v11 (outcome unknown, not applied)          op 11
 *   -  compact 3                                          op 12
 *   restart: back at 7, compact revision 3
 */
function oracleEvents(): OracleEvent[] {
  return [
    { type: 'PUT', revision: 2, kv: kv('/a', 'v1', 2, 2, 1) },
    { type: 'PUT', revision: 3, kv: kv('/b', 'v2', 3, 3, 1) },
    { type: 'PUT', revision: 4, kv: kv('/a', 'v3', 2, 4, 2), prevKv: kv('/a', 'v1', 2, 2, 1) },
    { type: 'DELETE', revision: 5, kv: gone('/b', 5), prevKv: kv('/b', 'v2', 3, 3, 1) },
    { type: 'PUT', revision: 6, kv: kv('/c', 'v4', 6, 6, 1) },
    { type: 'DELETE', revision: 6, kv: gone('/a', 6), prevKv: kv('/a', 'v3', 2, 4, 2) },
    { type: 'PUT', revision: 7, kv: kv('/d', 'v10', 7, 7, 1) },
  ]
}

let nextId = 1
function rec(op: Operation, outcome: Outcome, result?: OpResult, code?: string): OpRecord {
  const id = nextId++
  return {
    id,
    client: `c${id % 2}`,
    door: 'native',
    start: id * 10,
    end: id * 10 + 5,
    op,
    outcome,
    ...(result ? { result } : {}),
    ...(code ? { code } : {}),
  }
}

function history(): History {
  nextId = 1
  const ops: OpRecord[] = [
    rec({ type: 'put', keyBase64: b64('/a'), valueBase64: b64('v1') }, 'ok', { revision: 2 }),
    rec({ type: 'put', keyBase64: b64('/b'), valueBase64: b64('v2') }, 'ok', { revision: 3 }),
    rec(
      {
        type: 'txn',
        compare: [{ keyBase64: b64('/a'), target: 'MOD', result: 'EQUAL', value: 2 }],
        success: [{ type: 'put', keyBase64: b64('/a'), valueBase64: b64('v3') }],
        failure: [{ type: 'range', sel: sel('/a') }],
      },
      'ok',
      { revision: 4, succeeded: true, results: [{ type: 'put' }] },
    ),
    rec({ type: 'delete', sel: sel('/b') }, 'ok', { revision: 5, deleted: 1 }),
    rec(
      {
        type: 'txn',
        compare: [{ keyBase64: b64('/a'), target: 'MOD', result: 'EQUAL', value: 2 }],
        success: [{ type: 'put', keyBase64: b64('/a'), valueBase64: b64('v5') }],
        failure: [{ type: 'range', sel: sel('/a') }],
      },
      'ok',
      { revision: 5, succeeded: false, results: [{ type: 'range', kvs: [kv('/a', 'v3', 2, 4, 2)] }] },
    ),
    rec({ type: 'range', sel: sel('/', { prefix: true }) }, 'ok', { revision: 5, kvs: [kv('/a', 'v3', 2, 4, 2)] }),
    rec({ type: 'range', sel: sel('/', { prefix: true }), revision: 3 }, 'ok', {
      revision: 3,
      kvs: [kv('/a', 'v1', 2, 2, 1), kv('/b', 'v2', 3, 3, 1)],
    }),
    rec(
      {
        type: 'txn',
        compare: [],
        success: [
          { type: 'put', keyBase64: b64('/c'), valueBase64: b64('v4') },
          { type: 'delete', sel: sel('/a') },
        ],
        failure: [],
      },
      'ok',
      { revision: 6, succeeded: true, results: [{ type: 'put' }, { type: 'delete', deleted: 1 }] },
    ),
    rec({ type: 'put', keyBase64: b64('/d'), valueBase64: b64('v9') }, 'fail', undefined, 'NO_SPACE'),
    rec({ type: 'put', keyBase64: b64('/d'), valueBase64: b64('v10') }, 'unknown', undefined, 'OUTCOME_UNKNOWN'),
    rec({ type: 'put', keyBase64: b64('/d'), valueBase64: b64('v11') }, 'unknown', undefined, 'OUTCOME_UNKNOWN'),
    rec({ type: 'compact', revision: 3 }, 'ok', { revision: 7 }),
  ]
  const events = oracleEvents()
  const recovery: RecoveryCheck = {
    index: 1,
    fault: 'sigkill',
    at: 1000,
    revision: 7,
    compactRevision: 3,
    events: events.filter((e) => e.revision >= 3),
    kvs: [kv('/c', 'v4', 6, 6, 1), kv('/d', 'v10', 7, 7, 1)],
  }
  const messages: WatchMessage[] = [
    { type: 'created', id: 1, revision: 1 },
    { type: 'events', id: 1, revision: 2, events: [{ type: 'PUT', revision: 2, kv: kv('/a', 'v1', 2, 2, 1) }] },
    { type: 'events', id: 1, revision: 4, events: [{ type: 'PUT', revision: 4, kv: kv('/a', 'v3', 2, 4, 2) }] },
    { type: 'events', id: 1, revision: 6, events: [{ type: 'DELETE', revision: 6, kv: gone('/a', 6) }] },
    { type: 'progress', id: 1, revision: 7 },
  ]
  return {
    ops,
    recoveries: [recovery],
    oracle: { first: 2, last: 7, events },
    finalRevision: 7,
    watches: [{ name: 'w', spec: { key: '/a' }, segments: [{ startRevision: 2, messages }] }],
  }
}

function tags(h: History): string[] {
  return Object.keys(checkHistory(h).byKind).sort()
}

/** The oracle's events, to doctor them. */
function events(h: History): OracleEvent[] {
  return h.oracle.events as OracleEvent[]
}

function op(h: History, id: number): OpRecord {
  return h.ops.find((o) => o.id === id)!
}

describe('reliability: history checker', () => {
  it('accepts a correct history and resolves unknown outcomes from the log', () => {
    const report = checkHistory(history())
    expect(report.violations).to.deep.equal([])
    expect(report.stats).to.include({
      ackedWrites: 5,
      ackedWritesLost: 0,
      failedButApplied: 0,
      unknown: 2,
      unknownApplied: 1,
      unknownNotApplied: 1,
      watchEvents: 3,
      revisions: 6,
    })
  })

  it('reports an acknowledged write missing from the log ([durability], counted as lost)', () => {
    const h = history()
    events(h).splice(1, 1) // revision 3 (/b=v2) vanished
    const report = checkHistory(h)
    expect(report.byKind).to.have.property('durability')
    expect(report.stats.ackedWritesLost).to.be.at.least(1)
  })

  it('reports an acknowledged write whose revision holds something else, or is beyond the log', () => {
    const h = history()
    op(h, 2).result = { revision: 4 } // /b=v2 claimed revision 4, which is /a=v3
    expect(tags(h)).to.include('durability')
    const g = history()
    g.ops.push(rec({ type: 'put', keyBase64: b64('/e'), valueBase64: b64('late') }, 'ok', { revision: 8 }))
    const report = checkHistory(g)
    expect(report.byKind).to.have.property('durability')
    expect(report.stats.ackedWritesLost).to.equal(1)
  })

  it('reports two writes acknowledged with the same revision ([revision])', () => {
    const h = history()
    h.ops.push({ ...op(h, 1), id: 99, start: 500, end: 505 })
    expect(tags(h)).to.include('revision')
  })

  it('reports a stale read: a read that started after a write finished but reflects an older revision', () => {
    const h = history()
    // op 6 (latest read) answered revision 3 with the state at 3, after the write at 5 had finished.
    op(h, 6).result = { revision: 3, kvs: [kv('/a', 'v1', 2, 2, 1), kv('/b', 'v2', 3, 3, 1)] }
    expect(tags(h)).to.deep.equal(['linearizable'])
  })

  it('reports a write that got a revision below one already acknowledged before it started', () => {
    const h = history()
    const w = op(h, 4) // delete /b at 5: pretend it started after op 8 (revision 6) had finished
    w.start = op(h, 8).end + 1
    w.end = w.start + 1
    expect(tags(h)).to.deep.equal(['linearizable'])
  })

  it('reports a read that does not equal the replayed state', () => {
    const h = history()
    op(h, 7).result = { revision: 3, kvs: [kv('/a', 'v1', 2, 2, 1)] } // /b missing at 3
    expect(tags(h)).to.deep.equal(['linearizable'])
  })

  it('reports a txn that took the wrong branch, or answered a wrong range', () => {
    const h = history()
    op(h, 5).result = { revision: 5, succeeded: true, results: [{ type: 'put' }] }
    expect(tags(h)).to.include('linearizable')
    const g = history()
    op(g, 5).result!.results = [{ type: 'range', kvs: [kv('/a', 'v1', 2, 2, 1)] }]
    expect(tags(g)).to.deep.equal(['linearizable'])
  })

  /** The same run with an oracle read after a compaction to 3: it starts at revision 4 (the watch, at 2, left out). */
  function late(): History {
    const h = history()
    return { ...h, watches: [], oracle: { first: 4, last: 7, events: oracleEvents().filter((e) => e.revision >= 4) } }
  }

  it('checks operations against an oracle that starts after the store did, on the keys it knows', () => {
    const report = checkHistory(late())
    expect(report.violations).to.deep.equal([])
    // The writes at 2 and 3 are below the oracle; the ones from 4 on are checked.
    expect(report.stats).to.include({ ackedWrites: 3, unchecked: 2, ackedWritesLost: 0 })
  })

  it('reports a wrong read and a lost write on an oracle that starts late', () => {
    const h = late()
    op(h, 5).result!.results = [{ type: 'range', kvs: [kv('/a', 'v1', 2, 2, 1)] }]
    expect(tags(h)).to.deep.equal(['linearizable'])
    const g = late()
    op(g, 7).result = { revision: 3, kvs: [kv('/a', 'v1', 2, 2, 1)] } // /b (known from its delete's prevKv) missing at 3
    expect(tags(g)).to.deep.equal(['linearizable'])
    const w = late()
    events(w).splice(
      events(w).findIndex((e) => e.revision === 6 && e.type === 'PUT'),
      1,
    )
    expect(tags(w)).to.include('durability')
  })

  it("checks an acknowledged lease revoke: the lease's keys are gone at its revision", () => {
    nextId = 1
    const leased = { ...kv('/e', 'v1', 2, 2, 1), lease: '7' }
    const revoked = (): History => ({
      ops: [
        rec({ type: 'put', keyBase64: b64('/e'), valueBase64: b64('v1'), lease: '7' }, 'ok', { revision: 2 }),
        rec({ type: 'leaseRevoke', lease: '7' }, 'ok', { revision: 3 }),
      ],
      recoveries: [],
      watches: [],
      oracle: {
        first: 2,
        last: 3,
        events: [
          { type: 'PUT', revision: 2, kv: leased },
          { type: 'DELETE', revision: 3, kv: gone('/e', 3), prevKv: leased },
        ],
      },
    })
    expect(checkHistory(revoked()).violations).to.deep.equal([])
    // The revoke acknowledged at 3, but the key is still there (its delete never made the log).
    const h = revoked()
    events(h).pop()
    h.ops[1].result = { revision: 2 }
    expect(tags(h)).to.deep.equal(['durability'])
  })

  it('reports a write answered as failed that was applied, and a value applied twice ([outcome])', () => {
    const h = history()
    op(h, 10).outcome = 'fail' // v10 is in the log
    expect(checkHistory(h).stats.failedButApplied).to.equal(1)
    expect(tags(h)).to.deep.equal(['outcome'])
    const g = history()
    events(g).push({ type: 'PUT', revision: 8, kv: kv('/d', 'v10', 7, 8, 2), prevKv: kv('/d', 'v10', 7, 7, 1) })
    g.oracle = { ...g.oracle, last: 8 }
    expect(tags(g)).to.deep.equal(['outcome'])
  })

  it('reports a restart that lowered the revision or the compact revision ([revision])', () => {
    const h = history()
    h.recoveries[0] = {
      ...h.recoveries[0],
      revision: 5,
      events: h.recoveries[0].events.filter((e) => e.revision <= 5),
      kvs: [kv('/a', 'v3', 2, 4, 2)],
    }
    expect(tags(h)).to.deep.equal(['revision'])
    const g = history()
    g.recoveries[0] = { ...g.recoveries[0], compactRevision: 2, events: oracleEvents() }
    expect(tags(g)).to.deep.equal(['revision'])
  })

  it('reports a restart that came back below a revision a watch had been shown ([revision])', () => {
    const h = history()
    // The watch saw revision 6 at time 900, before the restart at 1000; the server came back at 5.
    const seg = h.watches[0].segments[0]
    seg.messages = (seg.messages as WatchMessage[]).map((msg, i) => ({ seq: i, at: 900 + i, msg }))
    h.recoveries[0] = {
      ...h.recoveries[0],
      at: 1000,
      revision: 5,
      events: h.recoveries[0].events.filter((e) => e.revision <= 5),
      kvs: [kv('/a', 'v3', 2, 4, 2)],
    }
    h.ops = h.ops.filter((o) => (o.result?.revision ?? 0) <= 5 && o.op.type !== 'compact')
    expect(checkHistory(h).violations.join('\n')).to.contain('that watch w')
  })

  it('reports history or state changed by a restart ([durability])', () => {
    const h = history()
    h.recoveries[0].events = h.recoveries[0].events.filter((e) => e.revision !== 4)
    expect(tags(h)).to.deep.equal(['durability'])
    const g = history()
    g.recoveries[0].kvs = [kv('/c', 'v4', 6, 6, 1)]
    expect(tags(g)).to.deep.equal(['durability'])
  })

  it('reports watch violations through the watch checker (a gap, a duplicate)', () => {
    const h = history()
    const msgs = h.watches[0].segments[0].messages as WatchMessage[]
    msgs.splice(2, 1)
    expect(tags(h)).to.include('reliable')
    const g = history()
    const dup = g.watches[0].segments[0].messages as WatchMessage[]
    dup.splice(2, 0, dup[1])
    expect(tags(g)).to.include('unique')
  })

  it('reports an inconsistent log itself ([oracle])', () => {
    const h = history()
    events(h)[2] = { ...events(h)[2], kv: kv('/a', 'v3', 2, 4, 5) }
    expect(tags(h)).to.include('oracle')
  })

  it('keeps at most maxPerKind messages per tag but counts them all', () => {
    const h = history()
    for (let i = 0; i < 5; i++)
      h.ops.push(rec({ type: 'put', keyBase64: b64('/z'), valueBase64: b64(`lost${i}`) }, 'ok', { revision: 100 + i }))
    const report = checkHistory(h, { maxPerKind: 2 })
    expect(report.byKind.durability).to.equal(5)
    expect(report.violations.filter((v) => v.startsWith('[durability]'))).to.have.length(2)
  })
})
