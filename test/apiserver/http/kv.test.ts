/**
 * GET/PUT/DELETE /v1/kv against a real `kvlog serve` process: revisions, reads at a past revision, prevKv,
 * key selections (single, prefix, fromKey, rangeEnd), range options, and byte round-trips.
 *
 * One server for the whole file; the first test relies on the store being empty, the others use their own
 * key prefixes. Keys of the fromKey test start with '~', above every other key written here.
 */
import { expect } from 'chai'
import { b64, isUtf8, keyOf, keys, ok, prng, randomBytes, useServer, valueOf, type KvJson } from './helpers.js'

describe('native HTTP API: /v1/kv (real process)', function () {
  this.timeout(30_000)
  const server = useServer()
  const api = () => server().api

  it('starts at revision 1, gives the first write revision 2 and every write exactly one more', async () => {
    const empty = await api().mustRange({ key: 'a' })
    expect(empty).to.deep.equal({ header: { revision: 1 }, kvs: [], more: false, count: 0 })
    expect(await api().revision()).to.equal(1)

    expect((await api().mustPut('rev/a', '1')).header.revision).to.equal(2)
    expect((await api().mustPut('rev/b', '1')).header.revision).to.equal(3)
    expect((await api().mustPut('rev/a', '2')).header.revision).to.equal(4)
    const del = ok(await api().delete({ key: 'rev/b' }))
    expect(del).to.deep.equal({ header: { revision: 5 }, deleted: 1 })
    // Deleting nothing writes nothing and gets no revision.
    expect(ok(await api().delete({ key: 'rev/none' }))).to.deep.equal({ header: { revision: 5 }, deleted: 0 })
    expect(ok(await api().delete({ key: 'rev/x', prefix: true }))).to.deep.equal({ header: { revision: 5 }, deleted: 0 })
    expect(await api().revision()).to.equal(5)
    const ready = await api().get<{ ok: boolean; revision: number }>('/readyz')
    expect(ok(ready)).to.deep.equal({ ok: true, revision: 5 })
  })

  it('puts, gets and deletes a single key with its create/mod revision and version; no lease field when 0', async () => {
    const r1 = (await api().mustPut('single/k', 'v1')).header.revision
    const r2 = (await api().mustPut('single/k', 'v2', { lease: '0' })).header.revision
    expect(r2).to.equal(r1 + 1)
    const got = await api().mustRange({ key: 'single/k' })
    expect(got.header.revision).to.equal(r2)
    expect(got.kvs).to.deep.equal([{ key: 'single/k', value: 'v2', createRevision: r1, modRevision: r2, version: 2 }])
    expect(got.kvs[0]).to.not.have.property('lease')
    expect(got).to.include({ more: false, count: 1 })
    // A single-key read does not match other keys sharing the prefix.
    await api().mustPut('single/k2', 'other')
    expect(keys((await api().mustRange({ key: 'single/k' })).kvs)).to.deep.equal(['single/k'])

    const del = ok(await api().delete({ key: 'single/k' }))
    expect(del.deleted).to.equal(1)
    expect(del.header.revision).to.equal(r2 + 2)
    expect((await api().mustRange({ key: 'single/k' })).kvs).to.deep.equal([])
    // Re-created after a delete: version starts again at 1 with a new create revision.
    const r4 = (await api().mustPut('single/k', 'v3')).header.revision
    const again = (await api().mustRange({ key: 'single/k' })).kvs[0]
    expect(again).to.include({ createRevision: r4, modRevision: r4, version: 1, value: 'v3' })
    // An empty value is a value.
    await api().mustPut('single/empty', '')
    expect((await api().mustRange({ key: 'single/empty' })).kvs[0]).to.include({ key: 'single/empty', value: '' })
  })

  it('reads at a past revision', async () => {
    const r1 = (await api().mustPut('past/k', 'v1')).header.revision
    const r2 = (await api().mustPut('past/k', 'v2')).header.revision
    const r3 = (await api().mustPut('past/j', 'j1')).header.revision
    const r4 = ok(await api().delete({ key: 'past/k' })).header.revision

    const at1 = await api().mustRange({ key: 'past/k', revision: r1 })
    expect(at1.header.revision).to.equal(r1)
    expect(at1.kvs).to.deep.equal([{ key: 'past/k', value: 'v1', createRevision: r1, modRevision: r1, version: 1 }])
    const at2 = await api().mustRange({ key: 'past/k', revision: r2 })
    expect(at2.kvs).to.deep.equal([{ key: 'past/k', value: 'v2', createRevision: r1, modRevision: r2, version: 2 }])
    expect((await api().mustRange({ key: 'past/k', revision: r1 - 1 })).kvs).to.deep.equal([])
    expect((await api().mustRange({ key: 'past/k', revision: r4 })).kvs).to.deep.equal([])
    expect((await api().mustRange({ key: 'past/k' })).kvs).to.deep.equal([])
    // A range at a past revision sees the keys that existed then.
    expect(keys((await api().mustRange({ key: 'past/', prefix: true, revision: r2 })).kvs)).to.deep.equal(['past/k'])
    expect(keys((await api().mustRange({ key: 'past/', prefix: true, revision: r3 })).kvs)).to.deep.equal(['past/j', 'past/k'])
    expect(keys((await api().mustRange({ key: 'past/', prefix: true, revision: r4 })).kvs)).to.deep.equal(['past/j'])
    // revision=0 means the latest.
    expect((await api().mustRange({ key: 'past/j', revision: 0 })).header.revision).to.equal(r4)
  })

  it('returns prevKv on put and prevKvs on delete only when asked', async () => {
    const first = await api().mustPut('prev/a', 'one', { prevKv: true })
    expect(first).to.deep.equal({ header: { revision: first.header.revision } })
    const second = await api().mustPut('prev/a', 'two', { prevKv: true })
    expect(second.prevKv).to.deep.equal({
      key: 'prev/a',
      value: 'one',
      createRevision: first.header.revision,
      modRevision: first.header.revision,
      version: 1,
    })
    const third = await api().mustPut('prev/a', 'three')
    expect(third).to.not.have.property('prevKv')

    await api().mustPut('prev/b', 'bee')
    const plain = ok(await api().delete({ key: 'prev/b' }))
    expect(plain).to.not.have.property('prevKvs')
    await api().mustPut('prev/b', 'bee2')
    const del = ok(await api().delete({ key: 'prev/', prefix: true, prevKv: true }))
    expect(del.deleted).to.equal(2)
    expect(del.prevKvs!.map((kv) => [kv.key, kv.value, kv.version])).to.deep.equal([
      ['prev/a', 'three', 3],
      ['prev/b', 'bee2', 1],
    ])
  })

  it('selects keys by prefix, by fromKey and by [key, rangeEnd), for reads and deletes', async () => {
    for (const k of ['sel', 'sel/a', 'sel/b', 'sel/c', 'sel0', 'selz']) await api().mustPut(k, `v-${k}`)
    expect(keys((await api().mustRange({ key: 'sel/', prefix: true })).kvs)).to.deep.equal(['sel/a', 'sel/b', 'sel/c'])
    // An empty prefix flag value is true (?prefix).
    expect(keys((await api().mustRange('key=sel%2F&prefix')).kvs)).to.deep.equal(['sel/a', 'sel/b', 'sel/c'])
    expect(keys((await api().mustRange({ key: 'sel/b', rangeEnd: 'sel0' })).kvs)).to.deep.equal(['sel/b', 'sel/c'])
    expect(keys((await api().mustRange({ key: 'sel/b', rangeEndBase64: b64('sel0') })).kvs)).to.deep.equal(['sel/b', 'sel/c'])
    expect(keys((await api().mustRange({ key: 'sel', prefix: true })).kvs)).to.deep.equal([
      'sel',
      'sel/a',
      'sel/b',
      'sel/c',
      'sel0',
      'selz',
    ])

    for (const k of ['~from/a', '~from/b', '~from/c']) await api().mustPut(k, 'x')
    expect(keys((await api().mustRange({ key: '~from/b', fromKey: true })).kvs)).to.deep.equal(['~from/b', '~from/c'])

    const byRange = ok(await api().delete({ key: 'sel/a', rangeEnd: 'sel/c' }))
    expect(byRange.deleted).to.equal(2)
    expect(keys((await api().mustRange({ key: 'sel', prefix: true })).kvs)).to.deep.equal(['sel', 'sel/c', 'sel0', 'selz'])
    const byFromKey = ok(await api().delete({ key: '~from/b', fromKey: true }))
    expect(byFromKey.deleted).to.equal(2)
    expect(keys((await api().mustRange({ key: '~from/', prefix: true })).kvs)).to.deep.equal(['~from/a'])
    const byPrefix = ok(await api().delete({ key: 'sel/', prefix: true }))
    expect(byPrefix.deleted).to.equal(1)
    expect(keys((await api().mustRange({ key: 'sel', prefix: true })).kvs)).to.deep.equal(['sel', 'sel0', 'selz'])
  })

  it('keysOnly leaves values out; countOnly returns only the count; limit sets more and count', async () => {
    for (const k of ['lim/1', 'lim/2', 'lim/3', 'lim/4', 'lim/5']) await api().mustPut(k, `value-${k}`)
    const keysOnly = await api().mustRange({ key: 'lim/', prefix: true, keysOnly: true })
    expect(keysOnly.kvs).to.have.length(5)
    for (const kv of keysOnly.kvs) {
      expect(kv).to.not.have.property('value')
      expect(kv).to.not.have.property('valueBase64')
      expect(kv.version).to.equal(1)
    }
    const countOnly = await api().mustRange({ key: 'lim/', prefix: true, countOnly: true })
    expect(countOnly.kvs).to.deep.equal([])
    expect(countOnly.count).to.equal(5)

    const two = await api().mustRange({ key: 'lim/', prefix: true, limit: 2 })
    expect(keys(two.kvs)).to.deep.equal(['lim/1', 'lim/2'])
    expect(two).to.include({ more: true, count: 5 })
    const exact = await api().mustRange({ key: 'lim/', prefix: true, limit: 5 })
    expect(exact.kvs).to.have.length(5)
    expect(exact).to.include({ more: false, count: 5 })
    const unlimited = await api().mustRange({ key: 'lim/', prefix: true, limit: 0 })
    expect(unlimited.kvs).to.have.length(5)
    expect(unlimited.more).to.equal(false)
    const countLimited = await api().mustRange({ key: 'lim/', prefix: true, countOnly: true, limit: 1 })
    expect(countLimited.count).to.equal(5)
    expect(countLimited.kvs).to.deep.equal([])
  })

  describe('sorting and revision filters', () => {
    // so/c created first, then so/a, then so/b; versions a=1, c=2, b=3; values b="1" < c="2" < a="3";
    // mod order a < c < b.
    const rev: Record<string, number> = {}
    before(async () => {
      rev.c1 = (await api().mustPut('so/c', '2')).header.revision
      rev.a1 = (await api().mustPut('so/a', '3')).header.revision
      rev.b1 = (await api().mustPut('so/b', '1')).header.revision
      rev.b2 = (await api().mustPut('so/b', '1')).header.revision
      rev.c2 = (await api().mustPut('so/c', '2')).header.revision
      rev.b3 = (await api().mustPut('so/b', '1')).header.revision
    })
    const sorted = async (sortOrder: string | undefined, sortTarget: string | undefined, limit?: number) =>
      keys((await api().mustRange({ key: 'so/', prefix: true, sortOrder, sortTarget, limit })).kvs)

    it('sorts by key, value, version, create and mod revision, ascending and descending', async () => {
      expect(await sorted('ASCEND', 'KEY')).to.deep.equal(['so/a', 'so/b', 'so/c'])
      expect(await sorted('DESCEND', 'KEY')).to.deep.equal(['so/c', 'so/b', 'so/a'])
      expect(await sorted('DESCEND', undefined)).to.deep.equal(['so/c', 'so/b', 'so/a'])
      expect(await sorted('ASCEND', 'VALUE')).to.deep.equal(['so/b', 'so/c', 'so/a'])
      expect(await sorted('DESCEND', 'VALUE')).to.deep.equal(['so/a', 'so/c', 'so/b'])
      expect(await sorted('ASCEND', 'VERSION')).to.deep.equal(['so/a', 'so/c', 'so/b'])
      expect(await sorted('DESCEND', 'VERSION')).to.deep.equal(['so/b', 'so/c', 'so/a'])
      expect(await sorted('ASCEND', 'CREATE')).to.deep.equal(['so/c', 'so/a', 'so/b'])
      expect(await sorted('DESCEND', 'CREATE')).to.deep.equal(['so/b', 'so/a', 'so/c'])
      expect(await sorted('ASCEND', 'MOD')).to.deep.equal(['so/a', 'so/c', 'so/b'])
      expect(await sorted('DESCEND', 'MOD')).to.deep.equal(['so/b', 'so/c', 'so/a'])
      expect(await sorted('NONE', 'KEY')).to.deep.equal(['so/a', 'so/b', 'so/c'])
    })

    it('sorts before applying the limit, and sorts ascending when only a non-key target is given (as etcd)', async () => {
      expect(await sorted('DESCEND', 'KEY', 1)).to.deep.equal(['so/c'])
      expect(await sorted('DESCEND', 'CREATE', 2)).to.deep.equal(['so/b', 'so/a'])
      expect(await sorted('ASCEND', 'VALUE', 1)).to.deep.equal(['so/b'])
      const limited = await api().mustRange({ key: 'so/', prefix: true, sortOrder: 'DESCEND', limit: 2 })
      expect(limited).to.include({ more: true, count: 3 })
      expect(await sorted(undefined, 'VALUE')).to.deep.equal(['so/b', 'so/c', 'so/a'])
      expect(await sorted(undefined, 'CREATE')).to.deep.equal(['so/c', 'so/a', 'so/b'])
    })

    it('filters by min/max mod and create revision (bounds inclusive)', async () => {
      const filtered = async (q: Record<string, number>) => keys((await api().mustRange({ key: 'so/', prefix: true, ...q })).kvs)
      expect(await filtered({ minModRevision: rev.c2 })).to.deep.equal(['so/b', 'so/c'])
      expect(await filtered({ maxModRevision: rev.c2 })).to.deep.equal(['so/a', 'so/c'])
      expect(await filtered({ maxModRevision: rev.a1 })).to.deep.equal(['so/a'])
      expect(await filtered({ minCreateRevision: rev.a1 })).to.deep.equal(['so/a', 'so/b'])
      expect(await filtered({ maxCreateRevision: rev.a1 })).to.deep.equal(['so/a', 'so/c'])
      expect(await filtered({ minCreateRevision: rev.a1, maxCreateRevision: rev.a1 })).to.deep.equal(['so/a'])
      expect(await filtered({ minModRevision: rev.b3 + 1 })).to.deep.equal([])
      // Filters apply to a read at a past revision too: at b2, so/c had mod c1 and so/b mod b2.
      expect(await filtered({ revision: rev.b2, minModRevision: rev.b1 })).to.deep.equal(['so/b'])
    })
  })

  describe('arbitrary bytes', () => {
    const next = prng(0x6b766c6f)
    const special: Buffer[] = [
      Buffer.from([0x00]),
      Buffer.from([0xff]),
      Buffer.from([0x00, 0xff, 0x00]),
      Buffer.from([0xc3, 0x28]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
      Buffer.from([0xff, 0xfe, 0xfd]),
      Buffer.from('ü€😀', 'utf8'),
      Buffer.from([0x80]),
    ]
    const pairs: Array<{ key: Buffer; value: Buffer }> = []
    for (let i = 0; i < special.length; i++)
      pairs.push({ key: Buffer.concat([Buffer.from('bin/'), special[i]]), value: special[special.length - 1 - i] })
    for (let i = 0; i < 40; i++) {
      const key = Buffer.concat([Buffer.from('bin/'), randomBytes(next, 1 + Math.floor(next() * 24))])
      if (pairs.some((p) => p.key.equals(key))) continue
      pairs.push({ key, value: randomBytes(next, Math.floor(next() * 64)) })
    }

    /** The kv in the documented encoding: `key` when the bytes are UTF-8, else `keyBase64` (same for value). */
    const expectEncoding = (kv: KvJson, key: Buffer, value: Buffer) => {
      expect(keyOf(kv).equals(key), `key ${key.toString('hex')}`).to.equal(true)
      expect(valueOf(kv).equals(value), `value of ${key.toString('hex')}`).to.equal(true)
      expect(kv.key !== undefined, `key form for ${key.toString('hex')}`).to.equal(isUtf8(key))
      expect(kv.value !== undefined, `value form for ${value.toString('hex')}`).to.equal(isUtf8(value))
    }

    it('round-trips random keys and values (0x00, 0xff, invalid UTF-8) through keyBase64/valueBase64', async () => {
      for (const { key, value } of pairs) await api().mustTxn({ success: [{ type: 'put', keyBase64: b64(key), valueBase64: b64(value) }] })
      for (const { key, value } of pairs) {
        const got = await api().mustRange({ keyBase64: b64(key) })
        expect(got.kvs, key.toString('hex')).to.have.length(1)
        expectEncoding(got.kvs[0], key, value)
      }
      // The prefix read returns every key exactly once, in byte order.
      const all = await api().mustRange({ key: 'bin/', prefix: true })
      const expected = [...pairs].sort((a, b) => Buffer.compare(a.key, b.key))
      expect(all.kvs.map((kv) => keyOf(kv).toString('hex'))).to.deep.equal(expected.map((p) => p.key.toString('hex')))
      all.kvs.forEach((kv, i) => expectEncoding(kv, expected[i].key, expected[i].value))
    })

    it('answers with `key` for a UTF-8 key given as keyBase64, and reads a UTF-8 string key back by keyBase64', async () => {
      const utf8Key = Buffer.from('bytes/é-ü-😀', 'utf8')
      const put = await api().put({ keyBase64: b64(utf8Key), valueBase64: b64(Buffer.from([0xff, 0x00])), prevKv: true })
      expect(ok(put)).to.not.have.property('prevKv')
      const byString = await api().mustRange({ key: 'bytes/é-ü-😀' })
      expect(byString.kvs[0].key).to.equal('bytes/é-ü-😀')
      expect(byString.kvs[0]).to.not.have.property('keyBase64')
      expect(byString.kvs[0].valueBase64).to.equal(b64(Buffer.from([0xff, 0x00])))
      expect(byString.kvs[0]).to.not.have.property('value')

      await api().mustPut('bytes/plain', 'text')
      const byBase64 = await api().mustRange({ keyBase64: b64('bytes/plain') })
      expect(byBase64.kvs).to.deep.equal([
        { key: 'bytes/plain', value: 'text', createRevision: byBase64.header.revision, modRevision: byBase64.header.revision, version: 1 },
      ])
      // prevKv of a binary key comes back in base64 form too.
      const binKey = Buffer.from([0x62, 0xff, 0x00, 0x01])
      await api().mustTxn({ success: [{ type: 'put', keyBase64: b64(binKey), value: 'v1' }] })
      const again = ok(await api().put({ keyBase64: b64(binKey), value: 'v2', prevKv: true }))
      expect(again.prevKv!.keyBase64).to.equal(b64(binKey))
      expect(again.prevKv!.value).to.equal('v1')
    })

    it('keeps a leading U+FEFF (byte order mark) in keys and values', async () => {
      const bom = Buffer.from([0xef, 0xbb, 0xbf])
      const key = Buffer.concat([bom, Buffer.from('bom-key')])
      const value = Buffer.concat([bom, Buffer.from('bom-value')])
      await api().mustTxn({ success: [{ type: 'put', keyBase64: b64(key), valueBase64: b64(value) }] })
      try {
        const got = await api().mustRange({ keyBase64: b64(key) })
        expect(got.kvs).to.have.length(1)
        expect(keyOf(got.kvs[0]).toString('hex')).to.equal(key.toString('hex'))
        expect(valueOf(got.kvs[0]).toString('hex')).to.equal(value.toString('hex'))
      } finally {
        ok(await api().delete({ keyBase64: b64(key) }))
      }
    })

    it('deletes binary keys given as keyBase64 and rangeEndBase64', async () => {
      const del = ok(await api().delete({ keyBase64: b64(pairs[0].key), prevKv: true }))
      expect(del.deleted).to.equal(1)
      expectEncoding(del.prevKvs![0], pairs[0].key, pairs[0].value)
      const rest = ok(await api().delete({ keyBase64: b64('bin/'), rangeEndBase64: b64(Buffer.from('bin0')) }))
      expect(rest.deleted).to.equal(pairs.length - 1)
      expect((await api().mustRange({ key: 'bin/', prefix: true, countOnly: true })).count).to.equal(0)
    })
  })
})
