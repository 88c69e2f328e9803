/**
 * The stream loses acknowledged messages, as a correlated power loss of the nats-servers would leave it
 * (nats-server 2.9 fsyncs on a timer): kvlog acknowledged those writes only once a majority of its
 * members had them fsynced, so a new leader republishes them from the members' copies before it accepts
 * writes, and a member behind a hole fills it from its peers. Real processes: three nats-servers, three
 * `kvlog serve` members.
 *
 * - Tail loss: the servers' store dirs are copied (a consistent snapshot of the stream), more writes are
 *   acknowledged, everything stops, the older store dirs come back, everything starts: every
 *   acknowledged write is there, with the same revisions on every member, and writes go on.
 * - Holes: the newest messages are deleted from the stream while a member is down; it comes back and
 *   applies them from its peers' copies.
 */
import { expect } from 'chai'
import { cp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { connect } from 'nats'
import { clusterNames } from '../../../log/jetstream/options.js'
import { listPrefix, putKey, runConcurrently, startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { sleep } from '../../support/wait.js'

const CLUSTER = 'tail'

describe('kvlog cluster: the stream loses acknowledged messages', function () {
  this.timeout(180_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, CLUSTER)
    for (const m of cluster.members) await waitReady(m)
  })
  after(async function () {
    this.timeout(60_000)
    await cluster?.cleanup()
    await nats?.stop()
  })

  const stopServers = async () => {
    for (let i = 0; i < nats.servers.length; i++) await nats.kill(i, 'SIGTERM')
  }
  /** Starts the stopped nats-servers; done once the stream answers (its replicas may take a while to elect). */
  const startServers = async () => {
    // restart() gives up waiting after 20 s while the servers, started, go on electing: wait longer here.
    await Promise.allSettled(nats.servers.map((_, i) => nats.restart(i)))
    try {
      await streamLast()
    } catch (err) {
      throw new Error(`${String(err)}\n${nats.servers.map((s) => s.log().slice(-3000)).join('\n')}`, { cause: err })
    }
  }

  /**
   * A put through member `i`, retried while no leader takes writes (right after the nats-servers come
   * back the leadership may move); resolves with the revision of the acknowledged put.
   */
  const putEventually = async (key: string, value: string, i = 0, timeoutMs = 60_000): Promise<number> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      try {
        return await putKey(cluster.members[i], key, value)
      } catch (err) {
        if (Date.now() > deadline || !/UNAVAILABLE|NOT_APPLIED|OUTCOME_UNKNOWN|fetch failed/.test(String(err))) throw err
        await sleep(250)
      }
    }
  }

  /** The stream's last sequence (its replicas elect a leader first after the servers restart). */
  const streamLast = async (): Promise<number> => {
    const deadline = Date.now() + 90_000
    const nc = await connect({ servers: nats.urls.split(','), maxReconnectAttempts: -1 })
    try {
      for (;;) {
        try {
          // jetstreamManager() asks for the account's JetStream info first: it fails too until a meta leader is up.
          const jsm = await nc.jetstreamManager()
          return (await jsm.streams.info(clusterNames(CLUSTER).stream)).state.last_seq
        } catch (err) {
          if (Date.now() > deadline) throw err
          await sleep(250)
        }
      }
    } finally {
      await nc.close()
    }
  }

  /** Every member shows the same keys with the same revisions; returns them. */
  const sameEverywhere = async (prefix: string) => {
    const lists = await Promise.all(cluster.members.map((m) => listPrefix(m, prefix)))
    for (const l of lists.slice(1)) expect(l.kvs).to.deep.equal(lists[0].kvs)
    return lists[0].kvs
  }

  it('republishes an acknowledged tail the stream lost, at the same sequences, and no revision forks', async () => {
    const { members } = cluster
    await runConcurrently(150, 8, (i) => putKey(members[i % 3], `before/${i}`, `v${i}`))

    // A consistent copy of the stream as it is now: the servers stop cleanly, their store dirs are copied.
    const lastSaved = await streamLast()
    await stopServers()
    const saved = join(nats.dir, 'saved')
    for (const s of nats.servers) await cp(join(nats.dir, s.name), join(saved, s.name), { recursive: true })
    await startServers()
    await putEventually('before/again', 'x')
    for (const m of members) await waitReady(m)
    const lastBefore = await streamLast()

    // Acknowledged after the copy: the stream will lose these.
    const acked = new Map<string, number>()
    await runConcurrently(300, 8, async (i) => {
      const key = `after/${i}`
      acked.set(key, await putEventually(key, `w${i}`, i % 3))
    })
    const expected = await sameEverywhere('after/')
    expect(expected).to.have.length(300)
    const lastAcked = await streamLast()
    expect(lastAcked).to.be.above(lastBefore)

    // Power loss: everything stops; the nats-servers come back with the older stream.
    for (let i = 0; i < members.length; i++) await cluster.stop(i)
    await stopServers()
    for (const s of nats.servers) {
      await rm(join(nats.dir, s.name), { recursive: true, force: true })
      await cp(join(saved, s.name), join(nats.dir, s.name), { recursive: true })
    }
    await startServers()
    const lastRestored = await streamLast()
    expect(lastRestored).to.be.at.least(lastSaved).and.below(lastBefore)
    await Promise.all(members.map((_, i) => cluster.start(i)))

    const revision = await putEventually('after/next', 'n')
    expect(await streamLast()).to.be.above(lastAcked)
    for (const m of members) await waitReady(m)
    const kvs = await sameEverywhere('after/')
    expect(kvs).to.have.length(301)
    expect(kvs.filter((kv) => kv.key !== 'after/next')).to.deep.equal(expected)
    for (const kv of expected) expect(kv.modRevision).to.equal(acked.get(kv.key))
    expect(revision).to.be.above(Math.max(...acked.values()))
    const logs = members.map((m) => m.proc!.output()).join('\n')
    expect(logs).to.not.match(/stopped applying the log/)
    const metrics = await Promise.all(members.map(async (m) => (await fetch(`${m.http}/metrics`)).text()))
    const refilled = metrics.map((t) => Number(/^kvlog_cluster_refilled_messages (\d+)$/m.exec(t)?.[1] ?? 0))
    expect(refilled.reduce((a, b) => a + b, 0)).to.be.at.least(lastAcked - lastRestored)
  })

  it('fills holes made by deleting the newest messages from the members that applied them', async () => {
    const { members } = cluster
    // Whatever the test before left behind: every server and member up, and a leader taking writes.
    if (nats.servers.some((s) => s.child === undefined)) await startServers()
    for (let i = 0; i < members.length; i++) if (members[i].proc === undefined) await cluster.start(i)
    await putEventually('ready/holes', 'r')
    await cluster.stop(2)
    const acked = new Map<string, number>()
    await runConcurrently(40, 4, async (i) => {
      const key = `holes/${i}`
      acked.set(key, await putEventually(key, `h${i}`, i % 2))
    })
    const last = await streamLast()
    const nc = await connect({ servers: nats.urls.split(',') })
    try {
      const jsm = await nc.jetstreamManager()
      for (let seq = last; seq > last - 5; seq--) expect(await jsm.streams.deleteMessage(clusterNames(CLUSTER).stream, seq)).to.equal(true)
    } finally {
      await nc.close()
    }
    // The member comes back behind the hole; the next message shows it the gap, which it fills from peers.
    const started = cluster.start(2)
    await sleep(1000)
    await putEventually('holes/next', 'n')
    await started
    await waitReady(members[2])
    const kvs = await sameEverywhere('holes/')
    expect(kvs).to.have.length(41)
    for (const kv of kvs) if (kv.key !== 'holes/next') expect(kv.modRevision).to.equal(acked.get(kv.key))
    expect(members[2].proc!.output()).to.match(/missing; applied from other members' copies/)
  })
})
