/**
 * log/level/latest-view.ts: a range of the kv table is read in as few iterator steps (round trips through
 * LevelDB's thread pool) as the step's byte bound allows: a thousand small records in one step, with every
 * record, in key order, and a limited read stopping at its limit.
 */
import { expect } from 'chai'
import { ClassicLevel } from 'classic-level'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { prefixEnd } from '../../../log/keys.js'
import { kvKey } from '../../../log/level/keyspace.js'
import { LatestView, type Db } from '../../../log/level/latest-view.js'
import { encodeKvRecord } from '../../../log/level/records.js'

const PREFIX = '/list/'
const KEYS = 1000

describe('log/level/latest-view: scan', function () {
  let dir = ''
  let db: Db
  /** Iterator steps that returned records, during the test. */
  let steps = 0

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-latest-view-'))
    db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
    await db.open()
    const ops = []
    for (let i = 0; i < KEYS; i++) {
      const key = Buffer.from(`${PREFIX}${String(i).padStart(4, '0')}`)
      const kv = { key, value: Buffer.alloc(256, i % 251), createRevision: i + 2, modRevision: i + 2, version: 1, lease: 0n }
      ops.push({ type: 'put' as const, key: kvKey(key), value: encodeKvRecord(kv) })
    }
    await db.batch(ops)
    steps = 0
    const iterator = db.iterator.bind(db)
    db.iterator = ((options: Parameters<Db['iterator']>[0]) => {
      const it = iterator(options)
      const nextv = it.nextv.bind(it)
      it.nextv = (async (size: number) => {
        const step = await nextv(size)
        if (step.length > 0) steps++
        return step
      }) as typeof it.nextv
      return it
    }) as Db['iterator']
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const bounds = { start: Buffer.from(PREFIX), end: prefixEnd(PREFIX), single: false }

  it('reads a thousand-key range in one iterator step, every key in order', async () => {
    const snapshot = db.snapshot()
    try {
      const kvs = await new LatestView(db, snapshot).scan(bounds)
      expect(kvs.map((kv) => kv.key.toString())).to.deep.equal(
        Array.from({ length: KEYS }, (_, i) => `${PREFIX}${String(i).padStart(4, '0')}`),
      )
      expect(kvs[999].value).to.deep.equal(Buffer.alloc(256, 999 % 251))
      expect(kvs[999].modRevision).to.equal(1001)
      expect(steps).to.equal(1)
    } finally {
      await snapshot.close()
    }
  })

  it('stops a limited read at its limit, in either direction', async () => {
    const snapshot = db.snapshot()
    try {
      const view = new LatestView(db, snapshot)
      const first = await view.scan(bounds, { limit: 11 })
      expect(first.map((kv) => kv.key.toString())).to.deep.equal(
        Array.from({ length: 11 }, (_, i) => `${PREFIX}${String(i).padStart(4, '0')}`),
      )
      const last = await view.scan(bounds, { limit: 3, reverse: true, keysOnly: true })
      expect(last.map((kv) => kv.key.toString())).to.deep.equal([`${PREFIX}0999`, `${PREFIX}0998`, `${PREFIX}0997`])
      expect(last.every((kv) => kv.value.length === 0)).to.equal(true)
      expect(steps).to.equal(2)
    } finally {
      await snapshot.close()
    }
  })
})
