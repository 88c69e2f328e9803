/**
 * log/level/hist-view.ts: a range at a past revision finds each key's newest version at or below it
 * (absent when that is a delete), whether the key has few versions or many above and below the revision,
 * and reads a thousand keys in a few iterator steps rather than a round trip per key.
 */
import { expect } from 'chai'
import { ClassicLevel } from '../../../log/level/classic-level.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { prefixEnd } from '../../../log/keys.js'
import { HistView } from '../../../log/level/hist-view.js'
import { histKey } from '../../../log/level/keyspace.js'
import type { Db } from '../../../log/level/latest-view.js'
import { encodeMaterialized, HIST_TOMBSTONE_RECORD } from '../../../log/level/records.js'

/** Iterator calls that go to LevelDB's thread pool (next and nextv), during a test. */
let trips = 0

function countTrips(db: Db): void {
  const iterator = db.iterator.bind(db)
  db.iterator = ((options: Parameters<Db['iterator']>[0]) => {
    const it = iterator(options)
    const [next, nextv] = [it.next.bind(it), it.nextv.bind(it)]
    it.next = (() => (trips++, next())) as typeof it.next
    it.nextv = ((size: number) => (trips++, nextv(size))) as typeof it.nextv
    return it
  }) as Db['iterator']
}

describe('log/level/hist-view: range at a past revision', function () {
  let dir = ''
  let db: Db
  /** key → its versions: [rev, value or null for a delete], oldest first. */
  const model = new Map<string, Array<[number, string | null]>>()

  async function write(key: string, rev: number, value: string | null): Promise<void> {
    const k = Buffer.from(key)
    const versions = model.get(key) ?? []
    const live = versions.filter(([, v]) => v !== null)
    const record =
      value === null
        ? HIST_TOMBSTONE_RECORD
        : encodeMaterialized({
            key: k,
            value: Buffer.from(value),
            createRevision: rev,
            modRevision: rev,
            version: live.length + 1,
            lease: 0n,
          })
    await db.put(histKey(k, rev), record)
    versions.push([rev, value])
    model.set(key, versions)
  }

  function expected(prefix: string, at: number): Array<[string, string]> {
    const out: Array<[string, string]> = []
    for (const [key, versions] of [...model].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (!key.startsWith(prefix)) continue
      const v = versions.filter(([rev]) => rev <= at).at(-1)
      if (v !== undefined && v[1] !== null) out.push([key, v[1]])
    }
    return out
  }

  async function read(prefix: string, at: number, limit = 0): Promise<Array<[string, string]>> {
    const snapshot = db.snapshot()
    try {
      const bounds = { start: Buffer.from(prefix), end: prefixEnd(prefix), single: false }
      const kvs = await new HistView(db, snapshot, at).scan(bounds, { limit })
      return kvs.map((kv) => [kv.key.toString(), kv.value.toString()])
    } finally {
      await snapshot.close()
    }
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-hist-view-'))
    db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
    await db.open()
    model.clear()
    trips = 0
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('finds each key as it was, with many versions above and below the revision, and deletes', async () => {
    let rev = 1
    await write('m/a', ++rev, 'a1')
    for (let i = 0; i < 40; i++) await write('m/many', ++rev, `many${i}`)
    await write('m/b', ++rev, 'b1')
    await write('m/gone', ++rev, 'g1')
    await write('m/gone', ++rev, null)
    for (let i = 0; i < 40; i++) await write('m/more', ++rev, `more${i}`)
    await write('m/gone', ++rev, 'g2')
    await write('m/z', ++rev, 'z1')
    for (let at = 1; at <= rev; at++) {
      expect(await read('m/', at), `at ${at}`).to.deep.equal(expected('m/', at))
      expect(await read('m/', at, 2), `at ${at}, limit 2`).to.deep.equal(expected('m/', at).slice(0, 2))
    }
  })

  it('reads a thousand keys in a few iterator steps', async () => {
    for (let i = 0; i < 1000; i++) {
      const key = `k/${String(i).padStart(4, '0')}`
      await write(key, 2 * i + 2, `${key}-1`)
      await write(key, 2 * i + 3, `${key}-2`)
    }
    countTrips(db)
    const at = 1001
    expect(await read('k/', at)).to.deep.equal(expected('k/', at))
    expect(trips).to.be.at.most(4)
  })
})
