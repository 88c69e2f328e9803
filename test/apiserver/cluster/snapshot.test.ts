/**
 * Cluster snapshots with real processes: three nats-servers and four `kvlog serve` members that snapshot
 * every 100 stream messages. The leader stores snapshots in the cluster's object store and purges the
 * stream below them; a fresh member (empty data dir) and a member that was down across the purge both
 * restore a snapshot and serve the same state, mod revisions and watches as the others; writes go through
 * the fresh member. A member stopped for less than the purge grace catches up from the stream instead. Objects that are corrupted or not kvlog snapshots are refused, and a member that no
 * usable snapshot can bring back refuses to start.
 */
import { rm } from 'node:fs/promises'
import { expect } from 'chai'
import { connect, type JetStreamManager, type NatsConnection, type ObjectStore } from 'nats'
import { clusterNames } from '../../../log/jetstream/options.js'
import { jsonLines } from '../../support/json-lines.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import {
  listPrefix,
  putKey,
  runConcurrently,
  startMembers,
  waitReady,
  type ClusterProcesses,
  type Member,
} from '../../support/cluster-processes.js'
import { sleep } from '../../support/wait.js'

const CLUSTER = 'snaptest'
const names = clusterNames(CLUSTER)
const SNAPSHOTS = ['--cluster-snapshot-interval', '100', '--cluster-snapshot-keep', '2', '--cluster-snapshot-check-interval', '300ms']
const ARGS = [...SNAPSHOTS, '--cluster-purge-grace', '1s']

interface WatchLine {
  type: string
  code?: string
  events?: Array<{ revision: number; kv: { key: string; value?: string } }>
}

interface Described {
  name: string
  seq: number
  hash: string
  revision: number
}

describe('kvlog cluster snapshots (3 nats-servers, 4 kvlog serve processes)', function () {
  this.timeout(120_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses
  let nc: NatsConnection
  let jsm: JetStreamManager
  let os: ObjectStore

  const streamState = async () => (await jsm.streams.info(names.stream)).state
  const snapshots = async (): Promise<Described[]> =>
    (await os.list())
      .filter((i) => !i.deleted)
      .map((i) => ({ name: i.name, ...(JSON.parse(i.description ?? '{}') as Omit<Described, 'name'>) }))
      .sort((a, b) => a.seq - b.seq)
  const fresh = async (i: number): Promise<void> => {
    await cluster.stop(i, 'SIGKILL')
    await rm(cluster.members[i].dir, { recursive: true, force: true })
  }
  const sameState = async (a: Member, b: Member): Promise<void> => {
    const [x, y] = await Promise.all([listPrefix(a, 'k/'), listPrefix(b, 'k/')])
    expect(y.revision, `${b.name} revision`).to.equal(x.revision)
    expect(y.kvs, `${b.name} keys`).to.deep.equal(x.kvs)
  }

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, CLUSTER, 4, ARGS)
    for (const m of cluster.members) await waitReady(m)
    nc = await connect({ servers: nats.urls.split(',') })
    jsm = await nc.jetstreamManager()
    os = await nc.jetstream().views.os(names.snapshots)
  })
  after(async function () {
    this.timeout(60_000)
    await nc?.close()
    await cluster?.cleanup()
    await nats?.stop()
  })

  it('stores snapshots, purges the stream below them, and brings a fresh member and one that was down back from them', async () => {
    const { members } = cluster
    await runConcurrently(50, 4, (i) => putKey(members[0], `k/a${i}`, `a${i}`))
    // m2 goes down with what it has. (m3 loses its data dir later: with two of the four members down, no
    // write would have a majority of members fsyncing it.)
    const downAt = (await streamState()).last_seq
    await cluster.stop(2, 'SIGKILL')
    const compactAt = (await listPrefix(members[0], 'k/')).revision - 10
    const compacted = await fetch(`${members[0].http}/v1/compact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ revision: compactAt }),
    })
    expect(compacted.status).to.equal(200)
    // Writes until the stream was purged past what m2 had applied (its record lapses a lease after it died).
    let state = await streamState()
    for (let round = 0; state.first_seq <= downAt + 1 && round < 40; round++) {
      await runConcurrently(150, 4, (i) => putKey(members[i % 2], `k/b${(round * 150 + i) % 400}`, `r${round}.${i}`))
      await sleep(400)
      state = await streamState()
    }
    expect(state.first_seq, 'stream purged past the stopped member').to.be.above(downAt + 1)
    const stored = await snapshots()
    expect(stored.length).to.be.within(1, 2)
    expect(stored[0].seq).to.be.at.least(state.first_seq - 1)
    const newest = stored[stored.length - 1]

    const status = (await (await fetch(`${members[0].http}/v1/status`)).json()) as { cluster: { leader: string } }
    const leader = members.find((m) => m.name === status.cluster.leader)!
    const metrics = await (await fetch(`${leader.http}/metrics`)).text()
    expect(metrics).to.match(/^kvlog_cluster_snapshots_total [1-9]/m)
    expect(metrics).to.match(/^kvlog_cluster_last_snapshot_sequence [1-9]/m)
    expect(metrics).to.match(/^kvlog_cluster_last_snapshot_bytes [1-9]/m)
    expect(metrics).to.match(/^kvlog_cluster_stream_purged_below [1-9]/m)

    // The fresh member restores the newest snapshot and serves the same state and mod revisions.
    await fresh(3)
    const starting = performance.now()
    await cluster.start(3)
    await waitReady(members[3])
    // Informational (benchmarks measure; this test checks the outcome).
    const figure = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1])
    console.log(
      `      snapshot at sequence ${newest.seq}: ${figure('kvlog_cluster_last_snapshot_bytes')} bytes, stored in ` +
        `${Math.round(figure('kvlog_cluster_last_snapshot_seconds') * 1000)} ms; a fresh member was ready ` +
        `${Math.round(performance.now() - starting)} ms after its start`,
    )
    expect(members[3].proc!.output()).to.match(/restored snapshot seq-/)
    await sameState(members[0], members[3])

    // Watches from the snapshot's revision work there, including writes through the fresh member.
    const from = newest.revision
    const writes = (async () => {
      for (let i = 0; i < 10; i++) await putKey(members[3], `k/c${i}`, `c${i}`)
    })()
    await writes
    const history = (await (await fetch(`${members[0].http}/v1/history?key=k/&prefix=true&from=${from}`)).json()) as {
      events: Array<{ revision: number; kv: { key: string; value?: string } }>
    }
    const want = history.events.map((e) => [e.revision, e.kv.key, e.kv.value ?? ''])
    expect(want.length).to.be.at.least(10)
    const seen: Array<[number, string, string]> = []
    const ac = new AbortController()
    const res = await fetch(`${members[3].http}/v1/watch?key=k/&prefix=true&startRevision=${from}`, { signal: ac.signal })
    try {
      for await (const line of jsonLines<WatchLine>(res.body)) {
        for (const e of line.events ?? []) seen.push([e.revision, e.kv.key, e.kv.value ?? ''])
        if (seen.length >= want.length) break
      }
    } finally {
      ac.abort()
    }
    expect(seen).to.deep.equal(want)

    // Below the compact revision the restored member answers COMPACTED, as every member does.
    const old = await fetch(`${members[3].http}/v1/watch?key=k/&prefix=true&startRevision=${compactAt - 5}`)
    const lines: WatchLine[] = []
    for await (const line of jsonLines<WatchLine>(old.body)) {
      lines.push(line)
      if (line.type === 'canceled' || line.type === 'error') break
    }
    expect(lines.at(-1)?.code).to.equal('COMPACTED')

    // The member that was down across the purge comes back through a snapshot too.
    await cluster.start(2)
    await waitReady(members[2])
    expect(members[2].proc!.output()).to.match(/restored snapshot seq-/)
    for (const m of [members[1], members[2], members[3]]) await sameState(members[0], m)
  })

  it('refuses corrupted and foreign snapshot objects, and a member no usable snapshot can restore refuses to start', async () => {
    const { members } = cluster
    // A snapshot due after the last writes is taken within a check or two; none comes without writes.
    const settled = async () => {
      let stored = await snapshots()
      for (let same = 0; same < 2;) {
        await sleep(1000)
        const again = await snapshots()
        same = JSON.stringify(again) === JSON.stringify(stored) ? same + 1 : 0
        stored = again
      }
      return stored
    }
    let stored = await settled()
    // The older snapshot is what restores once the newest is corrupted, so two are needed. The first test
    // stops writing as soon as the stream is purged, which can be right after the first snapshot: writes
    // past the snapshot interval bring the second.
    for (let round = 0; stored.length < 2 && round < 5; round++) {
      await runConcurrently(120, 4, (i) => putKey(members[0], `k/d${i}`, `d${round}.${i}`))
      stored = await settled()
    }
    // The foreign object below claims a sequence past the newest snapshot, which the stream must hold for
    // its history check to run. If the last writes ended in a snapshot there is none yet: one put adds it,
    // and brings no snapshot (that takes 100 messages since the newest).
    if ((await streamState()).last_seq === stored.at(-1)?.seq) {
      await putKey(members[0], 'k/after-snapshots', 'x')
      stored = await settled()
    }
    expect(stored.length).to.equal(2)
    const [older, newest] = stored
    // The newest snapshot, one byte flipped in its data, put in its place (replacing it in one put: in
    // between, the leader would take the missing snapshot again).
    const bytes = (await os.getBlob(newest.name))!
    bytes[Math.floor(bytes.length / 2)] ^= 0xff
    const described = (await os.info(newest.name))!.description
    await os.putBlob({ name: newest.name, description: described }, bytes)
    // Something else, named and described like a newer snapshot.
    const last = (await streamState()).last_seq
    expect(last, 'a stream message after the newest snapshot').to.be.greaterThan(newest.seq)
    const foreign = { ...JSON.parse(described ?? '{}'), seq: last, name: undefined }
    await os.putBlob({ name: `seq-${String(last).padStart(16, '0')}`, description: JSON.stringify(foreign) }, Buffer.from('not a snapshot'))

    await fresh(3)
    await cluster.start(3)
    await waitReady(members[3])
    const stderr = members[3].proc!.output()
    expect(stderr).to.match(/refuses snapshot seq-\d+ .*another history/)
    expect(stderr).to.match(new RegExp(`refuses snapshot ${newest.name} from \\S+: restore: `))
    expect(stderr).to.match(new RegExp(`restored snapshot ${older.name}`))
    await sameState(members[0], members[3])

    // Without the older one nothing can bridge the purged stream: the member refuses to start.
    await os.delete(older.name)
    const deadline = Date.now() + 30_000
    while ((await streamState()).first_seq <= newest.seq && Date.now() < deadline) await sleep(200)
    expect((await streamState()).first_seq, 'purged up to the remaining snapshot').to.equal(newest.seq + 1)
    await fresh(3)
    let failure: Error | undefined
    await cluster.start(3).catch((err: Error) => (failure = err))
    expect(failure?.message, members[3].proc?.output()).to.match(/no usable snapshot/)
    await sameState(members[0], members[1])
  })

  it('keeps the stream for a member that was stopped for less than the purge grace: it catches up from the stream', async function () {
    const graceNames = clusterNames('snapgrace')
    const other = await startMembers(nats, 'snapgrace', 3, [...SNAPSHOTS, '--cluster-purge-grace', '10m'])
    try {
      const { members } = other
      for (const m of members) await waitReady(m)
      await runConcurrently(30, 4, (i) => putKey(members[0], `k/a${i}`, `a${i}`))
      const downAt = (await jsm.streams.info(graceNames.stream)).state.last_seq
      await other.stop(2, 'SIGKILL')
      const killedAt = Date.now()
      const graceOs = await nc.jetstream().views.os(graceNames.snapshots)
      const stored = async () => (await graceOs.list()).filter((i) => !i.deleted).length
      for (
        let round = 0;
        round < 40 && ((await stored()) < 2 || (await jsm.streams.info(graceNames.stream)).state.last_seq < downAt + 300);
        round++
      ) {
        await runConcurrently(100, 4, (i) => putKey(members[i % 2], `k/b${i}`, `r${round}.${i}`))
      }
      // By now m2's record has lapsed (a lease after its death) and a purge without the grace would be done.
      await sleep(Math.max(1000, killedAt + 5000 - Date.now()))
      expect(await stored()).to.equal(2)
      expect((await jsm.streams.info(graceNames.stream)).state.first_seq, 'the stream still holds what m2 misses').to.be.at.most(downAt + 1)
      await other.start(2)
      await waitReady(members[2])
      expect(members[2].proc!.output()).to.not.match(/restored snapshot/)
      await sameState(members[0], members[2])
    } finally {
      await other.cleanup()
    }
  })
})
