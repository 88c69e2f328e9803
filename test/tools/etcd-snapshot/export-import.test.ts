/**
 * exportEtcdSnapshot then importEtcdSnapshot is the identity on what etcd's format carries (fast-check,
 * in-process, no etcd): for random histories of puts, txns of several writes (each key once), range
 * deletes, leases, a lease revoke and a compaction somewhere, the imported store has the same revision and
 * compact revision, the same Range at every revision from the floor, the same history from the floor
 * (events in order, with prevKv) and the same leases with their granted TTLs.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import fc from 'fast-check'
import { exportEtcdSnapshot } from '../../../apiserver/etcd-snapshot/export.js'
import { importEtcdSnapshot } from '../../../tools/import-etcd-snapshot.js'
import { openLog, type Log, type Op } from '../../../log/index.js'

const ALL = Buffer.from([0])
const KEYS = ['a', 'b', 'c', 'd/1', 'd/2', 'e\0x']

type Step =
  | { kind: 'put'; key: number; value: string; leased: boolean }
  | { kind: 'txn'; keys: number[]; value: string }
  | { kind: 'delete'; key: number; range: boolean }
  | { kind: 'revoke' }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), key: fc.nat(KEYS.length - 1), value: fc.string({ maxLength: 20 }), leased: fc.boolean() }),
  fc.record({
    kind: fc.constant('txn' as const),
    keys: fc.uniqueArray(fc.nat(KEYS.length - 1), { minLength: 1, maxLength: 4 }),
    value: fc.string({ maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), key: fc.nat(KEYS.length - 1), range: fc.boolean() }),
  fc.record({ kind: fc.constant('revoke' as const) }),
)

async function run(log: Log, steps: Step[], compactAt: number): Promise<void> {
  let lease = (await log.leaseGrant(600)).id
  const kept = (await log.leaseGrant(300)).id
  for (const [i, s] of steps.entries()) {
    if (s.kind === 'put') await log.put(KEYS[s.key], s.value, s.leased ? { lease: i % 2 === 0 ? lease : kept } : {})
    else if (s.kind === 'txn') await log.txn({ success: s.keys.map((k): Op => ({ type: 'put', key: KEYS[k], value: `${s.value}${k}` })) })
    else if (s.kind === 'delete') await log.delete(KEYS[s.key], s.range ? { rangeEnd: ALL } : {})
    else {
      await log.leaseRevoke(lease)
      lease = (await log.leaseGrant(600)).id
    }
    if (i === compactAt && log.revision > 1) await log.compact(log.revision)
  }
}

async function all(log: Log, revision: number): Promise<unknown> {
  return (await log.range(ALL, { rangeEnd: ALL, revision })).kvs
}

describe('apiserver/etcd-snapshot: export then import', function () {
  this.timeout(120_000)

  it('gives the same store for any history (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), fc.nat(40), async (steps, compactAt) => {
        const dir = await mkdtemp(join(tmpdir(), 'kvlog-exp-imp-'))
        const source = await openLog({ dir: join(dir, 'src'), leaseCheckInterval: 0 })
        let copy: Log | undefined
        try {
          await run(source, steps, compactAt)
          const snap = await exportEtcdSnapshot(source)
          await writeFile(join(dir, 'snap.db'), Buffer.concat(snap.parts))
          const r = await importEtcdSnapshot(join(dir, 'snap.db'), join(dir, 'copy'))
          expect([r.revision, r.compactRevision]).to.deep.equal([source.revision, source.compactRevision])
          copy = await openLog({ dir: join(dir, 'copy'), leaseCheckInterval: 0 })
          expect([copy.revision, copy.compactRevision]).to.deep.equal([source.revision, source.compactRevision])
          const from = Math.max(source.compactRevision, 1)
          for (let rev = from; rev <= source.revision; rev++)
            expect(await all(copy, rev), `Range at ${rev}`).to.deep.equal(await all(source, rev))
          const events = async (log: Log) =>
            (await log.history(ALL, { rangeEnd: ALL, fromRevision: from + 1, prevKv: true })).entries.map((e) => [e.revision, e.events])
          expect(await events(copy)).to.deep.equal(await events(source))
          const leases = (log: Log) => [...log.leases()].sort().map((id) => [id, log.leaseTimeToLive(id)?.grantedTtl])
          expect(leases(copy)).to.deep.equal(leases(source))
        } finally {
          await copy?.close()
          await source.close()
          await rm(dir, { recursive: true, force: true })
        }
      }),
      { numRuns: 15 },
    )
  })

  it('a compaction racing the export makes it start over from the new floor', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-exp-race-'))
    const log = await openLog({ dir, leaseCheckInterval: 0 })
    try {
      for (let i = 0; i < 20; i++) await log.put(KEYS[i % KEYS.length], `v${i}`)
      await log.compact(5)
      let raced = false
      // The first history read finds the store compacted further meanwhile (a real compaction, run just before it).
      const racing = new Proxy(log, {
        get(target, name, receiver) {
          if (name !== 'history') return Reflect.get(target, name, receiver) as unknown
          return async (...args: Parameters<Log['history']>) => {
            if (!raced) {
              raced = true
              await target.compact(15)
            }
            return target.history(...args)
          }
        },
      })
      const snap = await exportEtcdSnapshot(racing)
      expect([raced, snap.compactRevision, snap.revision]).to.deep.equal([true, 15, log.revision])
    } finally {
      await log.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
