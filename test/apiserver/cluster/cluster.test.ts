/**
 * A kvlog cluster of real processes: three nats-servers, three `kvlog serve --nats-url` members. Writes
 * through every member give identical state and mod revisions everywhere; etcdctl sees three members and
 * one leader; a watch opened on one member resumes on another from its last revision with exactly the
 * remaining events; a member stopped during 10,000 writes catches up.
 */
import { expect } from 'chai'
import { etcdctl } from '../../support/etcdctl.js'
import { jsonLines } from '../../support/json-lines.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { listPrefix, putKey, runConcurrently, startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { sleep } from '../../support/wait.js'

interface WatchLine {
  type: string
  revision: number
  events?: Array<{ type: string; revision: number; kv: { key: string; value?: string; modRevision: number } }>
}

describe('kvlog cluster (3 nats-servers, 3 kvlog serve processes)', function () {
  this.timeout(60_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'it')
    for (const m of cluster.members) await waitReady(m)
  })
  after(async function () {
    this.timeout(60_000)
    await cluster?.cleanup()
    await nats?.stop()
  })

  it('takes writes through every member and shows identical state and mod revisions on all', async () => {
    const { members } = cluster
    await runConcurrently(300, 16, (i) => putKey(members[i % 3], `same/${i % 50}`, `v${i}`))
    const lists = await Promise.all(members.map((m) => listPrefix(m, 'same/')))
    expect(lists[0].kvs).to.have.length(50)
    for (const l of lists.slice(1)) {
      expect(l.revision).to.equal(lists[0].revision)
      expect(l.kvs).to.deep.equal(lists[0].kvs)
    }
    const versions = lists[0].kvs.reduce((n, kv) => n + kv.version, 0)
    expect(versions).to.equal(300)
  })

  it('lists every member to etcdctl, with one leader, its epoch as raft term and the applied sequence as raft index', async () => {
    const { members } = cluster
    // A member whose record is being renewed may be listed for a moment as down (no client URLs).
    type Listed = { members: Array<{ name: string; clientURLs?: string[] }> }
    let parsed: Listed = { members: [] }
    for (let attempt = 0; attempt < 20; attempt++) {
      const list = await etcdctl(members[1].grpc, ['member', 'list', '-w', 'json'])
      expect(list.code, list.stderr).to.equal(0)
      parsed = JSON.parse(list.stdout) as Listed
      if (parsed.members.every((m) => m.clientURLs?.length === 1)) break
      await sleep(500)
    }
    expect(parsed.members.map((m) => m.name).sort()).to.deep.equal(['m0', 'm1', 'm2'])
    for (const m of parsed.members) expect(m.clientURLs, m.name).to.have.length(1)
    const endpoints = members.map((m) => m.grpc).join(',')
    const status = await etcdctl(endpoints, ['endpoint', 'status', '-w', 'json'])
    expect(status.code, status.stderr).to.equal(0)
    const rows = JSON.parse(status.stdout) as Array<{
      Status: { leader: string | number; raftTerm: number; raftIndex: number; header: { member_id: string | number } }
    }>
    expect(rows).to.have.length(3)
    const leaders = new Set(rows.map((r) => String(r.Status.leader)))
    expect(leaders.size).to.equal(1)
    expect(rows.map((r) => String(r.Status.header.member_id))).to.include([...leaders][0])
    for (const r of rows) {
      expect(r.Status.raftTerm).to.be.above(0)
      expect(r.Status.raftIndex).to.be.above(0)
    }
    const s = (await (await fetch(`${members[2].http}/v1/status`)).json()) as {
      cluster: { role: string; leader: string; applied: number; lag: number }
    }
    expect(['leader', 'follower']).to.include(s.cluster.role)
    expect(['m0', 'm1', 'm2']).to.include(s.cluster.leader)
    const leader = members.find((m) => m.name === s.cluster.leader)!
    const metrics = await (await fetch(`${leader.http}/metrics`)).text()
    expect(metrics).to.match(/^kvlog_cluster_leader_changes 1$/m)
    expect(metrics).to.match(/^kvlog_cluster_publish_count [1-9]/m)
    expect(metrics).to.match(/^kvlog_cluster_apply_lag\{unit="messages"\} 0$/m)
    expect(metrics).to.match(/^kvlog_cluster_applier_stopped 0$/m)
    expect(metrics).to.match(/^kvlog_cluster_disk_low 0$/m)
    for (const m of members) expect(metrics).to.match(new RegExp(`^kvlog_cluster_durable_lag\\{member="${m.name}"\\} \\d+$`, 'm'))
    // Where the writes' time went, phase by phase (the leader queued, published, applied and answered them).
    for (const phase of ['queue', 'publish', 'delivery', 'apply', 'majority', 'write']) {
      expect(metrics).to.match(new RegExp(`^kvlog_cluster_phase_seconds_count\\{phase="${phase}"\\} [1-9]`, 'm'))
    }
  })

  it('resumes a watch on another member from its last revision with exactly the remaining events', async () => {
    const { members } = cluster
    const from = (await listPrefix(members[0], 'w/')).revision + 1
    const writes = (async () => {
      for (let i = 0; i < 60; i++) await putKey(members[i % 3], `w/${i % 7}`, `x${i}`)
    })()
    const seen: Array<[number, string, string]> = []
    const take = async (member: number, start: number, stopAfter: number): Promise<number> => {
      const ac = new AbortController()
      const res = await fetch(`${members[member].http}/v1/watch?key=w/&prefix=true&startRevision=${start}`, { signal: ac.signal })
      let last = start - 1
      try {
        for await (const line of jsonLines<WatchLine>(res.body)) {
          for (const e of line.events ?? []) {
            seen.push([e.revision, e.kv.key, e.kv.value ?? ''])
            last = e.revision
          }
          if (seen.length >= stopAfter) break
        }
      } finally {
        ac.abort()
      }
      return last
    }
    const last = await take(0, from, 20)
    await writes
    await take(1, last + 1, 60)
    const history = (await (await fetch(`${members[2].http}/v1/history?key=w/&prefix=true&from=${from}`)).json()) as {
      events: Array<{ revision: number; kv: { key: string; value?: string } }>
    }
    const want = history.events.map((e) => [e.revision, e.kv.key, e.kv.value ?? ''])
    expect(want).to.have.length(60)
    expect(seen).to.deep.equal(want)
  })

  it('catches a member up that was stopped during 10,000 writes', async function () {
    this.timeout(120_000)
    const { members } = cluster
    await cluster.stop(2, 'SIGKILL')
    await runConcurrently(10_000, 64, (i) => putKey(members[i % 2], `many/${i % 500}`, `v${i}`))
    const want = await listPrefix(members[0], 'many/')
    await cluster.start(2)
    await waitReady(members[2], 60_000)
    const got = await listPrefix(members[2], 'many/')
    expect(got.revision).to.be.at.least(want.revision)
    expect(got.kvs).to.deep.equal(want.kvs)
  })

  it('accepts writes again after the leader is SIGKILLed, and loses no acknowledged write', async function () {
    this.timeout(90_000)
    const { members } = cluster
    const status = (await (await fetch(`${members[0].http}/v1/status`)).json()) as { cluster: { leader: string } }
    const li = members.findIndex((m) => m.name === status.cluster.leader)
    expect(li).to.be.at.least(0)
    const others = [0, 1, 2].filter((i) => i !== li)
    const acked: Array<{ key: string; started: number; done: number }> = []
    let stop = false
    // A new write every 50 ms on the two other members, each on its own: a write in flight to the dying
    // leader may end UNAVAILABLE (outcome unknown) after a few seconds without holding the others back.
    const inflight: Array<Promise<void>> = []
    const launcher = (async () => {
      for (let i = 0; !stop; i++) {
        const started = performance.now()
        inflight.push(
          putKey(members[others[i % 2]], `fo/${i}`, `v${i}`).then(
            () => void acked.push({ key: `fo/${i}`, started, done: performance.now() }),
            () => undefined, // UNAVAILABLE while no member leads
          ),
        )
        await sleep(50)
      }
    })()
    const writers = launcher.then(() => Promise.all(inflight))
    await sleep(500)
    const killed = performance.now()
    await cluster.stop(li, 'SIGKILL')
    const deadline = Date.now() + 30_000
    while (!acked.some((a) => a.started > killed) && Date.now() < deadline) await sleep(20)
    stop = true
    await writers
    const first = acked.filter((a) => a.started > killed).sort((x, y) => x.done - y.done)[0]
    expect(first, 'a write accepted after the failover').to.not.equal(undefined)
    // Informational (benchmarks measure; this test only checks that writes come back).
    console.log(
      `      failover: a write started after the leader's SIGKILL was acknowledged ${Math.round(first!.done - killed)} ms after it`,
    )
    await cluster.start(li)
    await waitReady(members[li], 60_000)
    for (const m of members) {
      const { kvs } = await listPrefix(m, 'fo/')
      const have = new Set(kvs.map((kv) => kv.key))
      for (const a of acked) expect(have.has(a.key), `${a.key} on ${m.name}`).to.equal(true)
    }
  })
})
