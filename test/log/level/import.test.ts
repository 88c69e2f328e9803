/**
 * StoreImport (log/level/import.ts): a store written with revisions assigned elsewhere opens as a LevelLog
 * that has them: the revision and the compact revision, the base state below the floor (reads at the
 * floor), the appended history with prevKv (also of a base version), leases with their keys; and then it
 * behaves like any store (the next write gets head + 1, compaction, reads); entries keep their authors, and
 * meta records put are read back (readMetaRecords lists them). Bad input fails with
 * INVALID_ARGUMENT: a revision gap, a base key newer than the base, a directory that holds a store.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { isKvlogError } from '../../../log/errors.js'
import { readMetaRecords, StoreImport } from '../../../log/level/import.js'
import { openLevelLog, type LevelLog } from '../../../log/level/level-log.js'
import { OP_DELETE, OP_PUT } from '../../../log/ops.js'
import type { KeyValue } from '../../../log/types.js'

const b = (s: string) => Buffer.from(s)
const kv = (key: string, value: string, createRevision: number, modRevision: number, version: number, lease = 0n): KeyValue => ({
  key: b(key),
  value: b(value),
  createRevision,
  modRevision,
  version,
  lease,
})
const plain = (kvs: KeyValue[]) =>
  kvs.map((k) => `${String(k.key)}=${String(k.value)}@${k.createRevision}/${k.modRevision}/v${k.version}/l${k.lease}`)
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  )

describe('log/level StoreImport', () => {
  let tmp: string
  let log: LevelLog | undefined

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kvlog-store-import-'))
  })

  afterEach(async () => {
    await log?.close()
    log = undefined
    await rm(tmp, { recursive: true, force: true })
  })

  it('opens at the imported revision and floor, with the base state, the history and the leases', async () => {
    const dir = join(tmp, 'db')
    const store = await StoreImport.create(dir, { floor: 5, timestamp: 1000 })
    const a = kv('/a', 'a2', 2, 3, 2)
    await store.addBase([a, kv('/b', 'b1', 5, 5, 1)])
    await store.append(6, 2000, [
      { op: { kind: OP_PUT, key: b('/a'), value: b('a3'), createRevision: 2, version: 3, lease: 0n, prevRevision: 3 }, prevKv: a },
    ])
    await store.append(7, 3000, [
      {
        op: { kind: OP_DELETE, key: b('/b'), value: Buffer.alloc(0), createRevision: 0, version: 0, lease: 0n, prevRevision: 5 },
        prevKv: kv('/b', 'b1', 5, 5, 1),
      },
      { op: { kind: OP_PUT, key: b('/c'), value: b('c1'), createRevision: 7, version: 1, lease: 42n, prevRevision: 0 } },
    ])
    expect(
      isKvlogError(
        await failure(
          store.append(9, 4000, [
            { op: { kind: OP_PUT, key: b('/x'), value: b('x'), createRevision: 9, version: 1, lease: 0n, prevRevision: 0 } },
          ]),
        ),
        'INVALID_ARGUMENT',
      ),
    ).to.equal(true)
    await store.finish([{ id: 42n, ttl: 60, deadline: Date.now() + 30_000 }])

    log = await openLevelLog({ dir, leaseMinTtl: 1 })
    expect(log.revision).to.equal(7)
    expect(log.compactRevision).to.equal(5)
    const all = { rangeEnd: Buffer.from([0]) }
    expect(plain((await log.range(b('\0'), { ...all, revision: 5 })).kvs)).to.deep.equal(['/a=a2@2/3/v2/l0', '/b=b1@5/5/v1/l0'])
    expect(plain((await log.range(b('\0'), { ...all, revision: 6 })).kvs)).to.deep.equal(['/a=a3@2/6/v3/l0', '/b=b1@5/5/v1/l0'])
    expect(plain((await log.range(b('\0'), all)).kvs)).to.deep.equal(['/a=a3@2/6/v3/l0', '/c=c1@7/7/v1/l42'])
    expect(isKvlogError(await failure(log.range(b('/a'), { revision: 4 })), 'COMPACTED')).to.equal(true)
    const h = await log.history(b('\0'), { ...all, fromRevision: 6, prevKv: true })
    expect(
      h.entries.map((e) => [
        e.revision,
        e.timestamp,
        e.events.map((ev) => `${ev.type} ${String(ev.kv.key)} prev ${ev.prevKv ? plain([ev.prevKv])[0] : '-'}`),
      ]),
    ).to.deep.equal([
      [6, 2000, ['PUT /a prev /a=a2@2/3/v2/l0']],
      [7, 3000, ['DELETE /b prev /b=b1@5/5/v1/l0', 'PUT /c prev -']],
    ])
    const lease = log.leaseTimeToLive(42n, { keys: true })
    expect(lease?.grantedTtl).to.equal(60)
    expect(lease?.ttl).to.be.within(28, 30)
    expect(lease?.keys?.map(String)).to.deep.equal(['/c'])

    // A store like any other from here.
    expect((await log.put(b('/a'), b('a4'))).revision).to.equal(8)
    await log.compact(7)
    expect(plain((await log.range(b('\0'), { ...all, revision: 7 })).kvs)).to.deep.equal(['/a=a3@2/6/v3/l0', '/c=c1@7/7/v1/l42'])
    expect((await log.leaseRevoke(42n)).revision).to.equal(9)
    expect((await log.range(b('/c'))).kvs).to.deep.equal([])
  })

  it('a never-compacted source starts empty at revision 1; bad base keys and an existing store are refused', async () => {
    const dir = join(tmp, 'db')
    const store = await StoreImport.create(dir, { floor: 0, timestamp: 1 })
    expect(store.revision).to.equal(1)
    expect(isKvlogError(await failure(store.addBase([kv('/a', 'x', 2, 2, 1)])), 'INVALID_ARGUMENT')).to.equal(true)
    await store.append(2, 10, [
      { op: { kind: OP_PUT, key: b('/a'), value: b('x'), createRevision: 2, version: 1, lease: 0n, prevRevision: 0 } },
    ])
    await store.finish([])
    expect(isKvlogError(await failure(StoreImport.create(dir, { floor: 0, timestamp: 1 })), 'INVALID_ARGUMENT')).to.equal(true)
    log = await openLevelLog({ dir })
    expect(log.revision).to.equal(2)
    expect(log.compactRevision).to.equal(0)
    expect(plain((await log.range(b('/a'))).kvs)).to.deep.equal(['/a=x@2/2/v1/l0'])
  })

  it("keeps an appended entry's author and the meta records put; readMetaRecords lists a closed store's", async () => {
    const dir = join(tmp, 'db')
    const store = await StoreImport.create(dir, { floor: 0, timestamp: 1000 })
    const put = { kind: OP_PUT, key: b('/a'), value: b('x'), createRevision: 2, version: 1, lease: 0n, prevRevision: 0 } as const
    await store.append(2, 2000, [{ op: put }], { door: 'etcd', user: 'alice' })
    store.putMeta('cursors', [{ name: 'c', revision: 2, expired: false, updatedAt: 5 }])
    store.putMeta('other', { n: 1 })
    await store.finish([])
    expect(await readMetaRecords(dir)).to.deep.equal([
      ['cursors', [{ name: 'c', revision: 2, expired: false, updatedAt: 5 }]],
      ['other', { n: 1 }],
    ])
    log = await openLevelLog({ dir })
    const h = await log.history(b('/a'))
    expect(h.entries.map((e) => [e.revision, e.timestamp, e.author])).to.deep.equal([[2, 2000, { door: 'etcd', user: 'alice' }]])
    expect(await log.readMeta('other')).to.deep.equal({ n: 1 })
  })
})
