/** Unit tests of the watcher index (against brute force) and the ring. */
import { expect } from 'chai'
import { inBounds, prefixEnd, toBounds, type Bounds } from '../../../log/keys.js'
import type { LogEntry } from '../../../log/types.js'
import { Ring } from '../../../log/watch/ring.js'
import { classify, WatcherIndex, type WatchGroup } from '../../../log/watch/watcher-index.js'
import { rng } from './helpers.js'

const ALPHABET = [0x00, 0x01, 0x61, 0x62, 0xfe, 0xff]

function randomBytes(rand: () => number, min: number, max: number): Buffer {
  const n = min + Math.floor(rand() * (max - min + 1))
  return Buffer.from(Array.from({ length: n }, () => ALPHABET[Math.floor(rand() * ALPHABET.length)]))
}

function randomBounds(rand: () => number): Bounds {
  const key = randomBytes(rand, 1, 3)
  const shape = rand()
  if (shape < 0.3) return toBounds(key, undefined)
  if (shape < 0.6) return toBounds(key, prefixEnd(key))
  if (shape < 0.7) return toBounds(key, Buffer.from([0]))
  if (shape < 0.75) return toBounds(Buffer.from([0]), Buffer.from([0]))
  return toBounds(key, randomBytes(rand, 1, 3))
}

describe('watch hub: watcher index', () => {
  it('finds exactly the members whose bounds contain a key, as members come and go', () => {
    const rand = rng(99)
    const index = new WatcherIndex<number>()
    const members = new Map<number, { bounds: Bounds; view: ReturnType<WatcherIndex<number>['add']> }>()
    const check = (): void => {
      for (let i = 0; i < 300; i++) {
        const key = randomBytes(rand, 1, 4)
        const groups: Array<WatchGroup<number>> = []
        index.collect(key, groups)
        expect(new Set(groups).size, 'each group at most once').to.equal(groups.length)
        const found = groups.flatMap((g) => [...g.views.values()].flatMap((v) => [...v.members])).sort((a, b) => a - b)
        const want = [...members]
          .filter(([, m]) => inBounds(m.bounds, key))
          .map(([id]) => id)
          .sort((a, b) => a - b)
        expect(found, `key ${key.toString('hex')}`).to.deep.equal(want)
      }
    }
    let next = 0
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 60; i++) {
        const bounds = randomBounds(rand)
        const id = next++
        const view = index.add(id, bounds, { prevKv: rand() < 0.5, noPut: rand() < 0.2, noDelete: false })
        members.set(id, { bounds, view })
      }
      check()
      for (const [id, m] of [...members]) {
        if (rand() < 0.5) {
          index.remove(id, m.view)
          members.delete(id)
        }
      }
      check()
    }
    expect(index.size).to.equal(members.size)
    for (const [id, m] of members) index.remove(id, m.view)
    expect(index.size).to.equal(0)
    expect(index.groups).to.equal(0)
  })

  it('groups identical bounds and options into one view, and sorts bounds into the right table', () => {
    const index = new WatcherIndex<string>()
    const b = toBounds(Buffer.from('a/'), prefixEnd('a/'))
    const v1 = index.add('x', b, { prevKv: true, noPut: false, noDelete: false })
    const v2 = index.add('y', toBounds(Buffer.from('a/'), prefixEnd('a/')), { prevKv: true, noPut: false, noDelete: false })
    const v3 = index.add('z', b, { prevKv: false, noPut: false, noDelete: false })
    expect(v1).to.equal(v2)
    expect(v3).to.not.equal(v1)
    expect(v3.group).to.equal(v1.group)
    expect(index.groups).to.equal(1)
    expect(classify(toBounds(Buffer.from('k'), undefined)).kind).to.equal('key')
    expect(classify(b).kind).to.equal('prefix')
    expect(classify(toBounds(Buffer.from([0x61, 0xff]), Buffer.from('b'))).kind).to.equal('prefix')
    expect(classify(toBounds(Buffer.from('a'), Buffer.from('c'))).kind).to.equal('range')
    expect(classify(toBounds(Buffer.from([0xff]), prefixEnd(Buffer.from([0xff])))).kind).to.equal('range')
    // A range id never collides with a key id or another range.
    expect(classify(toBounds(Buffer.from('a'), Buffer.from('bc'))).id).to.not.equal(
      classify(toBounds(Buffer.from('ab'), Buffer.from('c'))).id,
    )
  })
})

describe('watch hub: ring', () => {
  const entry = (revision: number): LogEntry => ({ revision, timestamp: revision, events: [] })

  it('holds the last `capacity` revisions in order and evicts the oldest', () => {
    const ring = new Ring(4, 10)
    expect(ring.size).to.equal(0)
    expect(ring.covers(10)).to.equal(false)
    for (let r = 10; r <= 12; r++) ring.push(entry(r))
    expect([ring.first, ring.last, ring.size]).to.deep.equal([10, 12, 3])
    for (let r = 13; r <= 16; r++) ring.push(entry(r))
    expect([ring.first, ring.last, ring.size]).to.deep.equal([13, 16, 4])
    expect(ring.covers(12)).to.equal(false)
    expect(ring.covers(17)).to.equal(false)
    expect([13, 14, 15, 16].map((r) => ring.get(r).revision)).to.deep.equal([13, 14, 15, 16])
    expect(() => ring.get(12)).to.throw(TypeError)
    expect(() => ring.push(entry(18))).to.throw(TypeError)
    ring.reset(30)
    expect(ring.size).to.equal(0)
    ring.push(entry(30))
    expect(ring.get(30).revision).to.equal(30)
  })

  it('with capacity 0 holds nothing but still checks the sequence', () => {
    const ring = new Ring(0, 5)
    ring.push(entry(5))
    ring.push(entry(6))
    expect(ring.size).to.equal(0)
    expect(ring.covers(6)).to.equal(false)
    expect(() => ring.push(entry(8))).to.throw(TypeError)
  })
})
