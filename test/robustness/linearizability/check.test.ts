import { expect } from 'chai'
import { checkLinearizable, eventLog } from './check.js'
import type { Input, Kv, Operation, Output } from './types.js'

const op = (client: number, call: number, ret: number, input: Input, output: Output): Operation => ({
  client,
  call,
  return: ret,
  input,
  output,
})
const kv = (key: string, value: string, create: number, mod: number, version: number, lease?: string): Kv => ({
  key,
  value,
  create,
  mod,
  version,
  ...(lease ? { lease } : {}),
})
const put = (key: string, value: string, lease?: string): Input => ({ type: 'put', key, value, ...(lease ? { lease } : {}) })
const get = (key: string, revision?: number, serializable?: boolean): Input => ({ type: 'range', req: { key, revision, serializable } })
const got = (revision: number, ...kvs: Kv[]): Output => ({ revision, range: { kvs, count: kvs.length, more: false } })
/** kube-apiserver's optimistic update: Txn(mod_revision == rv) Then Put Else Range. */
const update = (key: string, rv: number, value: string): Input => ({
  type: 'txn',
  compare: [{ key, target: 'MOD', result: 'EQUAL', value: rv }],
  success: [put(key, value) as { type: 'put'; key: string; value: string }],
  failure: [{ type: 'range', req: { key } }],
})

describe('robustness: linearizability checker (WGL search, etcd model)', () => {
  it('accepts concurrent writes and reads that fit one order', () => {
    const h = [
      op(1, 0, 10, put('a', '1'), { revision: 2 }),
      op(2, 1, 9, put('a', '2'), { revision: 3 }),
      op(3, 2, 8, get('a'), got(2, kv('a', '1', 2, 2, 1))),
      op(3, 11, 12, get('a'), got(3, kv('a', '2', 2, 3, 2))),
      op(4, 13, 14, update('a', 3, '3'), { revision: 4, succeeded: true, results: [{ type: 'put' }] }),
      op(5, 13, 15, update('a', 3, '4'), {
        revision: 4,
        succeeded: false,
        results: [{ type: 'range', kvs: [kv('a', '3', 2, 4, 3)], count: 1, more: false }],
      }),
    ]
    expect(checkLinearizable(h).result).to.equal('ok')
  })

  it('catches a lost write: an acknowledged put that a later read does not see', () => {
    const h = [op(1, 0, 1, put('a', '1'), { revision: 2 }), op(2, 2, 3, get('a'), got(2))]
    const r = checkLinearizable(h)
    expect(r.result).to.equal('illegal')
    if (r.result === 'illegal') expect(r.window).to.contain('"key":"a"')
  })

  it('catches a stale read: a read after the second put returns the first', () => {
    const h = [
      op(1, 0, 1, put('a', '1'), { revision: 2 }),
      op(1, 2, 3, put('a', '2'), { revision: 3 }),
      op(2, 4, 5, get('a'), got(3, kv('a', '1', 2, 2, 1))),
    ]
    expect(checkLinearizable(h).result).to.equal('illegal')
  })

  it('catches reordered txns: an update that succeeded on a revision written only after it returned', () => {
    const h = [
      op(1, 0, 1, put('a', '1'), { revision: 2 }),
      op(2, 2, 3, update('a', 3, 'x'), { revision: 4, succeeded: true, results: [{ type: 'put' }] }),
      op(3, 4, 5, update('a', 2, 'y'), { revision: 3, succeeded: true, results: [{ type: 'put' }] }),
    ]
    expect(checkLinearizable(h).result).to.equal('illegal')
    // The same txns, overlapping in time: then y then x is a valid order.
    const overlapping = [h[0]!, { ...h[1]!, return: 6 }, h[2]!]
    expect(checkLinearizable(overlapping).result).to.equal('ok')
  })

  it("catches a lease revoke that did not delete the lease's keys", () => {
    const h = [
      op(1, 0, 1, { type: 'leaseGrant', ttl: 60 }, { revision: 1, id: '7' }),
      op(1, 2, 3, put('a', '1', '7'), { revision: 2 }),
      op(1, 4, 5, { type: 'leaseRevoke', id: '7' }, { revision: 3 }),
      op(2, 6, 7, get('a'), got(3, kv('a', '1', 2, 2, 1, '7'))),
    ]
    expect(checkLinearizable(h).result).to.equal('illegal')
    const deleted = [...h.slice(0, 3), op(2, 6, 7, get('a'), got(3))]
    expect(checkLinearizable(deleted).result).to.equal('ok')
    // A put with a lease that was revoked fails.
    const afterRevoke = [...deleted, op(1, 8, 9, put('b', '1', '7'), { error: 'lease-not-found' })]
    expect(checkLinearizable(afterRevoke).result).to.equal('ok')
  })

  it('reads below the compacted revision must fail; at or above it they see the store then', () => {
    const base = [
      op(1, 0, 1, put('a', '1'), { revision: 2 }),
      op(1, 2, 3, put('a', '2'), { revision: 3 }),
      op(1, 4, 5, put('a', '3'), { revision: 4 }),
      op(1, 6, 7, { type: 'compact', revision: 3 }, { revision: 4 }),
    ]
    expect(checkLinearizable([...base, op(2, 8, 9, get('a', 2), { error: 'compacted' })]).result).to.equal('ok')
    expect(checkLinearizable([...base, op(2, 8, 9, get('a', 2), got(4, kv('a', '1', 2, 2, 1)))]).result).to.equal('illegal')
    expect(checkLinearizable([...base, op(2, 8, 9, get('a', 3), got(4, kv('a', '2', 2, 3, 2)))]).result).to.equal('ok')
    expect(checkLinearizable([...base, op(2, 8, 9, get('a', 3), got(4, kv('a', '3', 2, 4, 3)))]).result).to.equal('illegal')
    expect(checkLinearizable([...base, op(2, 8, 9, get('a', 9), { error: 'future-rev' })]).result).to.equal('ok')
  })

  it('a write whose outcome is unknown may or may not have happened', () => {
    const lost = op(1, 0, Infinity, put('a', '1'), { error: 'unknown' })
    expect(checkLinearizable([lost, op(2, 5, 6, get('a'), got(1))]).result).to.equal('ok')
    expect(checkLinearizable([lost, op(2, 5, 6, get('a'), got(2, kv('a', '1', 2, 2, 1)))]).result).to.equal('ok')
    // Once known not to have happened, a read that saw it is caught.
    const never = checkLinearizable([lost, op(2, 5, 6, get('a'), got(2, kv('a', '1', 2, 2, 1)))], { happened: () => false })
    expect(never.result).to.equal('illegal')
  })

  it('an unknown write a watch saw happened, exactly at the revision it was seen at', () => {
    const h = [op(1, 0, Infinity, put('a', '1'), { error: 'unknown', revision: 3 }), op(2, 1, 2, put('b', '1'), { revision: 2 })]
    expect(checkLinearizable([...h, op(3, 5, 6, get('a'), got(3, kv('a', '1', 3, 3, 1)))]).result).to.equal('ok')
    expect(checkLinearizable([...h, op(3, 5, 6, get('a'), got(3))]).result).to.equal('illegal')
    const early = [op(1, 0, Infinity, put('a', '1'), { error: 'unknown', revision: 2 }), op(2, 1, 2, put('b', '1'), { revision: 2 })]
    expect(checkLinearizable(early).result).to.equal('illegal')
    // A request that never left the client is no operation at all.
    expect(checkLinearizable([op(1, 0, 1, put('a', '1'), { error: 'not-sent' }), op(2, 2, 3, get('a'), got(1))]).result).to.equal('ok')
  })

  it('a serializable read must be the store at its own header revision, however old', () => {
    const writes = [op(1, 0, 1, put('a', '1'), { revision: 2 }), op(1, 2, 3, put('a', '2'), { revision: 3 })]
    expect(checkLinearizable([...writes, op(2, 4, 5, get('a', undefined, true), got(2, kv('a', '1', 2, 2, 1)))]).result).to.equal('ok')
    expect(checkLinearizable([...writes, op(2, 4, 5, get('a', undefined, true), got(3, kv('a', '1', 2, 2, 1)))]).result).to.equal('illegal')
  })

  it('pages: limit, more and count as etcd answers them', () => {
    const h = [
      op(
        1,
        0,
        1,
        { type: 'txn', compare: [], success: [put('p/a', '1'), put('p/b', '1'), put('p/c', '1')] as never, failure: [] },
        {
          revision: 2,
          succeeded: true,
          results: [{ type: 'put' }, { type: 'put' }, { type: 'put' }],
        },
      ),
      op(
        2,
        2,
        3,
        { type: 'range', req: { key: 'p/', end: 'p0', limit: 2 } },
        { revision: 2, range: { kvs: [kv('p/a', '1', 2, 2, 1), kv('p/b', '1', 2, 2, 1)], count: 3, more: true } },
      ),
      op(
        2,
        4,
        5,
        { type: 'range', req: { key: 'p/', end: 'p0', countOnly: true } },
        { revision: 2, range: { kvs: [], count: 3, more: false } },
      ),
    ]
    expect(checkLinearizable(h).result).to.equal('ok')
    const r = checkLinearizable(h)
    if (r.result !== 'ok' || r.final === undefined) throw new Error(r.result)
    const log = eventLog(r.final)
    expect(log.get(2)?.map((e) => e.kv.key)).to.deep.equal(['p/a', 'p/b', 'p/c'])
  })

  it('reports the window that cannot be linearized, with the stuck op marked', () => {
    const h = [
      op(1, 0, 1, put('x', 'ok'), { revision: 2 }),
      op(1, 2, 3, put('a', '1'), { revision: 3 }),
      op(2, 4, 5, get('a'), got(3)),
      op(3, 10, 11, put('z', 'later'), { revision: 4 }),
    ]
    const r = checkLinearizable(h)
    expect(r.result).to.equal('illegal')
    if (r.result !== 'illegal') return
    expect(r.window).to.match(/\* client 2 .*"range"/)
    expect(r.window).not.to.contain('later')
  })

  it('a search past its bound answers unknown, not ok', () => {
    const h = Array.from({ length: 12 }, (_, i) => op(i, 0, 100, put('k', `v${i}`), { error: 'unknown' }))
    h.push(op(99, 101, 102, get('k'), got(2, kv('k', 'nope', 2, 2, 1))))
    expect(checkLinearizable(h, { maxSteps: 1000 }).result).to.equal('unknown')
  })

  it('by key: each key alone, revisions aside', () => {
    const h = [
      op(1, 0, 1, put('a', '1'), { revision: 2 }),
      op(2, 0, 1, put('b', '1'), { revision: 3 }),
      op(3, 2, 3, get('a'), got(0, kv('a', '1', 0, 0, 1))),
      op(3, 4, 5, get('b'), got(0, kv('b', '1', 0, 0, 1))),
    ]
    expect(checkLinearizable(h, { keyLocal: true }).result).to.equal('ok')
    const lost = [...h.slice(0, 3), op(3, 4, 5, get('b'), got(0))]
    expect(checkLinearizable(lost, { keyLocal: true }).result).to.equal('illegal')
  })
})
