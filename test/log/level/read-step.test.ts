/**
 * log/level/read-step.ts and the addon's Iterator#readSync under it (kvlog's build of classic-level): a step
 * holds at most its records and no more than one record past its bytes, in the iterator's order and within
 * its limit; a seek moves it; keys-only steps carry no values; a closed iterator refuses with a code.
 */
import { expect } from 'chai'
import { ClassicLevel } from '../../../log/level/classic-level.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Db } from '../../../log/level/latest-view.js'
import { countRecords, eachRecord, hasReadSync, visitStep } from '../../../log/level/read-step.js'

type SyncIterator = ReturnType<Db['iterator']> & { readSync(size: number, maxBytes: number): Buffer }

const key = (i: number) => Buffer.from(`k${String(i).padStart(3, '0')}`)

/** The records of one step, as [key, value] strings. */
function records(step: Buffer): Array<[string, string]> {
  const out: Array<[string, string]> = []
  visitStep(step, (k, v) => out.push([k.toString(), v.toString()]))
  return out
}

describe('log/level/read-step', function () {
  this.timeout(30_000)
  let dir = ''
  let db: Db

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-read-step-'))
    db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
    await db.open()
    await db.batch(Array.from({ length: 100 }, (_, i) => ({ type: 'put' as const, key: key(i), value: Buffer.alloc(i, 'v') })))
  })
  afterEach(async () => {
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const open = (options: Parameters<Db['iterator']>[0] = {}): SyncIterator => {
    const it = db.iterator(options)
    expect(hasReadSync(it), "kvlog's LevelDB addon was not built: see log/level/native/").to.equal(true)
    return it as SyncIterator
  }

  it('bounds a step by records and by bytes, and ends with an empty buffer', async () => {
    const it = open({ gte: key(10) })
    try {
      expect(records(it.readSync(3, 1 << 20))).to.deep.equal([
        ['k010', 'v'.repeat(10)],
        ['k011', 'v'.repeat(11)],
        ['k012', 'v'.repeat(12)],
      ])
      // 13 + 14 + 15 value bytes plus keys and lengths pass 60 bytes at the third record: it is the last.
      expect(records(it.readSync(100, 60)).map(([k]) => k)).to.deep.equal(['k013', 'k014', 'k015'])
      expect(
        records(it.readSync(100, 0)).map(([k]) => k),
        'one record even past the bytes',
      ).to.deep.equal(['k016'])
      const rest = records(it.readSync(1000, 1 << 20))
      expect(rest.map(([k]) => k)).to.deep.equal(Array.from({ length: 83 }, (_, i) => key(17 + i).toString()))
      expect(it.readSync(10, 1 << 20).length).to.equal(0)
      expect(it.readSync(10, 1 << 20).length, 'still ended').to.equal(0)
    } finally {
      await it.close()
    }
  })

  it('keeps to the iterator: reverse, limit, seek, keys only', async () => {
    const reverse = open({ lt: key(50), reverse: true, limit: 4 })
    try {
      expect(records(reverse.readSync(3, 1 << 20)).map(([k]) => k)).to.deep.equal(['k049', 'k048', 'k047'])
      expect(records(reverse.readSync(3, 1 << 20)).map(([k]) => k)).to.deep.equal(['k046'])
      expect(reverse.readSync(3, 1 << 20).length).to.equal(0)
    } finally {
      await reverse.close()
    }
    const sought = open({ gte: key(0), lt: key(90) })
    try {
      records(sought.readSync(2, 1 << 20))
      sought.seek(key(80))
      expect(records(sought.readSync(100, 1 << 20)).map(([k]) => k)).to.deep.equal(
        Array.from({ length: 10 }, (_, i) => key(80 + i).toString()),
      )
      sought.seek(key(88))
      expect(
        records(sought.readSync(100, 1 << 20)).map(([k]) => k),
        'a seek after the end reads again',
      ).to.deep.equal(['k088', 'k089'])
    } finally {
      await sought.close()
    }
    const keys = open({ gte: key(95), values: false })
    try {
      expect(records(keys.readSync(100, 1 << 20))).to.deep.equal(Array.from({ length: 5 }, (_, i) => [key(95 + i).toString(), '']))
    } finally {
      await keys.close()
    }
  })

  it('refuses a closed iterator with LEVEL_ITERATOR_NOT_OPEN', async () => {
    const it = open()
    await it.close()
    expect(() => it.readSync(1, 1))
      .to.throw()
      .with.property('code', 'LEVEL_ITERATOR_NOT_OPEN')
  })

  it('eachRecord and countRecords read to the end', async () => {
    const seen: string[] = []
    const it = open({ gte: key(90) })
    try {
      await eachRecord(it, 2, (k, v) => seen.push(`${k.toString()}=${v.length}`))
    } finally {
      await it.close()
    }
    expect(seen).to.deep.equal(Array.from({ length: 10 }, (_, i) => `${key(90 + i).toString()}=${90 + i}`))
    const all = open({ values: false })
    try {
      expect(await countRecords(all, 7)).to.equal(100)
    } finally {
      await all.close()
    }
  })
})
