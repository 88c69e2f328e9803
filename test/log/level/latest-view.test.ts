/**
 * log/level/latest-view.ts: a range of the kv table is read in as few iterator steps as the step's byte
 * bound allows: a thousand small records in one step, with every record, in key order, and a limited read
 * stopping at its limit; a range of many steps and its count come out whole. Both ways of stepping: the
 * synchronous step of kvlog's build of classic-level (Iterator#readSync), and the thread-pool nextv that a
 * prebuilt addon has (readSync hidden).
 */
import { expect } from 'chai'
import { ClassicLevel } from '../../../log/level/classic-level.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { prefixEnd } from '../../../log/keys.js'
import { kvKey } from '../../../log/level/keyspace.js'
import { LatestView, type Db } from '../../../log/level/latest-view.js'
import { hasReadSync, SYNC_STEP_BYTES, SYNC_STEP_RECORDS } from '../../../log/level/read-step.js'
import { encodeKvRecord } from '../../../log/level/records.js'

const PREFIX = '/list/'
const KEYS = 1000
/** A second range of more records and bytes than one synchronous step holds. */
const BIG = '/big/'
const BIG_KEYS = SYNC_STEP_RECORDS * 2 + 100
const BIG_VALUE = 300

const pad = (i: number) => String(i).padStart(5, '0')

type Stepping = 'readSync' | 'nextv'

for (const stepping of ['readSync', 'nextv'] as const satisfies readonly Stepping[]) {
  describe(`log/level/latest-view: scan (${stepping})`, function () {
    this.timeout(60_000)
    let dir = ''
    let db: Db
    /** Iterator steps that returned records, during the test. */
    let steps = 0

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kvlog-latest-view-'))
      db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
      await db.open()
      const ops: Array<{ type: 'put'; key: Buffer; value: Buffer }> = []
      const record = (key: Buffer, i: number, bytes: number) => {
        const kv = { key, value: Buffer.alloc(bytes, i % 251), createRevision: i + 2, modRevision: i + 2, version: 1, lease: 0n }
        ops.push({ type: 'put' as const, key: kvKey(key), value: encodeKvRecord(kv) })
      }
      for (let i = 0; i < KEYS; i++) record(Buffer.from(`${PREFIX}${String(i).padStart(4, '0')}`), i, 256)
      for (let i = 0; i < BIG_KEYS; i++) record(Buffer.from(`${BIG}${pad(i)}`), i, BIG_VALUE)
      await db.batch(ops)
      steps = 0
      const iterator = db.iterator.bind(db)
      db.iterator = ((options: Parameters<Db['iterator']>[0]) => {
        const it = iterator(options) as ReturnType<Db['iterator']> & { readSync?: (size: number, bytes: number) => Buffer }
        expect(hasReadSync(it), "kvlog's LevelDB addon was not built: see log/level/native/").to.equal(true)
        if (stepping === 'nextv') {
          Object.defineProperty(it, 'readSync', { value: undefined })
          const nextv = it.nextv.bind(it)
          it.nextv = (async (size: number) => {
            const step = await nextv(size)
            if (step.length > 0) steps++
            return step
          }) as typeof it.nextv
        } else {
          const readSync = it.readSync!.bind(it)
          it.readSync = (size, bytes) => {
            const step = readSync(size, bytes)
            if (step.length > 0) steps++
            return step
          }
        }
        return it
      }) as Db['iterator']
    })
    afterEach(async () => {
      await db.close()
      await rm(dir, { recursive: true, force: true })
    })

    const bounds = { start: Buffer.from(PREFIX), end: prefixEnd(PREFIX), single: false }
    const bigBounds = { start: Buffer.from(BIG), end: prefixEnd(BIG), single: false }

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

    it('reads a range of many steps whole, in key order, and counts it', async () => {
      const snapshot = db.snapshot()
      try {
        const view = new LatestView(db, snapshot)
        let n = 0
        let previous = ''
        let bad = 0
        await view.scanInto(bigBounds, {}, (key, value, createRevision, modRevision) => {
          const name = key.toString()
          const i = Number(name.slice(BIG.length))
          if (
            name <= previous ||
            i !== n ||
            value.length !== BIG_VALUE ||
            value[0] !== i % 251 ||
            modRevision !== i + 2 ||
            createRevision !== i + 2
          )
            bad++
          previous = name
          n++
        })
        expect(bad).to.equal(0)
        expect(n).to.equal(BIG_KEYS)
        expect(steps).to.be.greaterThan(stepping === 'readSync' ? Math.floor((BIG_KEYS * BIG_VALUE) / SYNC_STEP_BYTES) : 1)
        expect(await view.count(bigBounds)).to.equal(BIG_KEYS)
        expect(await view.count(bounds)).to.equal(KEYS)
        const some = { start: Buffer.from(`${BIG}${pad(10)}`), end: Buffer.from(`${BIG}${pad(4110)}`), single: false }
        expect(await view.count(some)).to.equal(4100)
        const page = await view.scan(some, { limit: 5000, keysOnly: true })
        expect(page.length).to.equal(4100)
        expect(page[4099].key.toString()).to.equal(`${BIG}${pad(4109)}`)
        expect(page[4099].modRevision).to.equal(4111)
      } finally {
        await snapshot.close()
      }
    })
  })
}
