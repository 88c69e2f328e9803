/**
 * What makes an object in the snapshot bucket a snapshot of this cluster: its description must be a
 * kvlog snapshot record of the same cluster and format, with a positive sequence, a hash and a revision.
 * Anything else is not a candidate for a restore. A listing whose lookup of the bucket's stream comes back
 * empty for a moment is retried.
 */
import { expect } from 'chai'
import type { ObjectInfo } from 'nats'
import { listObjects, parseRecord, SNAPSHOT_FORMAT, snapshotName, type SnapshotRecord } from '../../../log/jetstream/snapshot-store.js'

const good: SnapshotRecord = {
  kvlog: 'snapshot',
  format: SNAPSHOT_FORMAT,
  cluster: 'prod',
  seq: 1234,
  hash: 'abcdefghijklmnopqrstuv',
  revision: 5678,
  ts: 1_700_000_000_000,
  member: 'm1',
  takenAt: 1_700_000_000_100,
}

describe('JetStream snapshot records', () => {
  it('names objects so that names sort like sequences', () => {
    expect(snapshotName(9)).to.equal('seq-0000000000000009')
    expect(snapshotName(10) > snapshotName(9)).to.equal(true)
  })

  it('accepts a record of this cluster', () => {
    expect(parseRecord({ description: JSON.stringify(good) }, 'prod')).to.deep.equal(good)
  })

  it('refuses descriptions that are not a snapshot record of this cluster', () => {
    const bad: Array<string | undefined> = [
      undefined,
      '',
      'not json',
      'null',
      '[]',
      JSON.stringify({ ...good, kvlog: 'other' }),
      JSON.stringify({ ...good, format: SNAPSHOT_FORMAT + 1 }),
      JSON.stringify({ ...good, cluster: 'staging' }),
      JSON.stringify({ ...good, seq: 0 }),
      JSON.stringify({ ...good, seq: 1.5 }),
      JSON.stringify({ ...good, seq: '12' }),
      JSON.stringify({ ...good, hash: 42 }),
      JSON.stringify({ ...good, revision: undefined }),
    ]
    for (const description of bad) expect(parseRecord({ description }, 'prod'), String(description)).to.equal(undefined)
  })
})

describe('JetStream snapshot store: listing', function () {
  this.timeout(10_000)
  /** An object store whose listings fail with `errors` in turn, then list nothing. */
  const failing = (errors: unknown[]) => {
    let calls = 0
    return {
      calls: () => calls,
      list: async (): Promise<ObjectInfo[]> => {
        calls++
        if (errors.length > 0) throw errors.shift()
        return []
      },
    }
  }
  const timeout = Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' })

  it('retries a listing whose stream lookup found no stream or timed out, as nats.js reports them', async () => {
    const os = failing([new Error('no stream matches subject'), timeout, new Error('no stream matches subject')])
    expect(await listObjects(os)).to.deep.equal([])
    expect(os.calls()).to.equal(4)
  })

  it('gives up after a bounded number of tries, and at once on any other error', async () => {
    const always = failing(Array.from({ length: 20 }, () => new Error('no stream matches subject')))
    let err: unknown
    await listObjects(always).catch((e: unknown) => (err = e))
    expect(String(err)).to.match(/no stream matches subject/)
    expect(always.calls()).to.be.within(2, 10)
    const other = failing([new Error('permissions violation')])
    err = undefined
    await listObjects(other).catch((e: unknown) => (err = e))
    expect(String(err)).to.match(/permissions violation/)
    expect(other.calls()).to.equal(1)
  })
})
