/**
 * LevelLog.applyReplicated, the hook the cluster engine applies its stream with: the same writes with the
 * same timestamp give the same revisions, timestamps and lease deadlines on two copies; a failed write
 * leaves no trace; the marker is written in the same batch and read back after a reopen; messages handed
 * over together are written as one batch, each entry with its own message's timestamp.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLevelLog, type LevelLog } from '../../../log/level/level-log.js'
import type { ReplicatedWrite } from '../../../log/replica.js'
import type { TxnResult } from '../../../log/types.js'

describe('LevelLog.applyReplicated', () => {
  let dir: string
  const logs: LevelLog[] = []
  const open = async (name: string) => {
    const log = await openLevelLog({ dir: join(dir, name), leaseCheckInterval: 0, compactionThread: false })
    logs.push(log)
    return log
  }
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-replicated-'))
  })
  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close().catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
  })

  const writes: ReplicatedWrite[] = [
    { type: 'leaseGrant', id: 77n, ttl: 30 },
    { type: 'txn', request: { success: [{ type: 'put', key: 'a', value: '1', lease: 77n }] } },
    { type: 'txn', request: { success: [{ type: 'put', key: 'b', value: '2', lease: 99n }] } }, // LEASE_NOT_FOUND
    {
      type: 'txn',
      request: { compare: [{ key: 'a', target: 'VERSION', result: 'EQUAL', value: 1 }], success: [{ type: 'put', key: 'c', value: '3' }] },
    },
    { type: 'leaseGrant', id: 77n, ttl: 30 }, // LEASE_EXISTS
    { type: 'leaseRevoke', id: 77n },
  ]

  it('gives two copies the same revisions, timestamps, results and marker in one batch each', async () => {
    const ts = 1_700_000_000_000
    const copies = [await open('x'), await open('y')]
    const outcomes = []
    for (const log of copies) outcomes.push(await log.applyReplicated(ts, writes, { name: 'seq', value: { seq: 7 } }))
    for (const out of outcomes) {
      expect(out.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'])
      expect((out[2] as PromiseRejectedResult).reason.code).to.equal('LEASE_NOT_FOUND')
      expect((out[4] as PromiseRejectedResult).reason.code).to.equal('LEASE_EXISTS')
      expect((out[1] as PromiseFulfilledResult<TxnResult>).value.revision).to.equal(2)
      expect((out[5] as PromiseFulfilledResult<TxnResult>).value.revision).to.equal(4)
    }
    for (const log of copies) {
      expect(log.revision).to.equal(4)
      const h = await log.history('\0', { rangeEnd: '\0' })
      expect(h.entries.map((e) => [e.revision, e.timestamp])).to.deep.equal([
        [2, ts],
        [3, ts],
        [4, ts],
      ])
      expect(await log.readMeta('seq')).to.deep.equal({ seq: 7 })
      expect(log.leases()).to.deep.equal([])
    }
  })

  it('takes lease deadlines from the timestamp, and the marker survives a reopen', async () => {
    const log = await open('z')
    const ts = Date.now() - 25_000
    await log.applyReplicated(ts, [{ type: 'leaseGrant', id: 5n, ttl: 30 }], { name: 'seq', value: 1 })
    expect(log.leaseTimeToLive(5n)!.ttl).to.be.within(3, 5)
    expect(log.expiredLeases(ts + 30_000)).to.deep.equal([5n])
    await log.applyReplicated(ts + 1, [{ type: 'leaseKeepAlive', id: 5n }], { name: 'seq', value: 2 })
    await log.close()
    logs.splice(logs.indexOf(log), 1)
    const again = await open('z')
    expect(await again.readMeta('seq')).to.equal(2)
    expect(again.expiredLeases(ts + 30_000)).to.deep.equal([])
    expect(again.expiredLeases(ts + 30_001)).to.deep.equal([5n])
  })

  it('writes messages handed over together as one batch, each entry with its own timestamp and records', async () => {
    const log = await open('run')
    const commits: number[][] = []
    log.subscribe((entries) => commits.push(entries.map((e) => e.timestamp)))
    const ts = 1_700_000_000_000
    const applied = [0, 1, 2, 3, 4].map((i) =>
      log.applyReplicated(
        ts + i,
        [{ type: 'txn', request: { success: [{ type: 'put', key: `k${i}`, value: 'v' }] } }],
        [
          { name: 'marker', value: i },
          { name: `slot.${i}`, value: i },
        ],
      ),
    )
    const outcomes = await Promise.all(applied)
    expect(outcomes.map((o) => (o[0] as PromiseFulfilledResult<TxnResult>).value.revision)).to.deep.equal([2, 3, 4, 5, 6])
    expect(commits).to.deep.equal([[ts, ts + 1, ts + 2, ts + 3, ts + 4]])
    const h = await log.history('\0', { rangeEnd: '\0' })
    expect(h.entries.map((e) => e.timestamp)).to.deep.equal([ts, ts + 1, ts + 2, ts + 3, ts + 4])
    expect(await log.readMeta('marker')).to.equal(4)
    for (const i of [0, 1, 2, 3, 4]) expect(await log.readMeta(`slot.${i}`)).to.equal(i)
  })
})
