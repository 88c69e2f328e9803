/**
 * What makes an object in the snapshot bucket a snapshot of this cluster: its description must be a
 * kvlog snapshot record of the same cluster and format, with a positive sequence, a hash and a revision.
 * Anything else is not a candidate for a restore.
 */
import { expect } from 'chai'
import { parseRecord, SNAPSHOT_FORMAT, snapshotName, type SnapshotRecord } from '../../../log/jetstream/snapshot-store.js'

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
