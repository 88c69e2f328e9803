/**
 * Faults around a kvlog cluster of real processes (three nats-servers, three `kvlog serve` members):
 * - one nats-server of three SIGKILLed while writes go on: writes keep being acknowledged and every
 *   acknowledged write is on every member;
 * - a lease outlives a leader failover (its TTL starts again on the new leader, as etcd's does) and still
 *   expires afterwards, deleting its key on every member.
 */
import { expect } from 'chai'
import { etcdctl } from '../../support/etcdctl.js'
import { listPrefix, putKey, startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { sleep } from '../../support/wait.js'

describe('kvlog cluster: faults (3 nats-servers, 3 kvlog serve processes)', function () {
  this.timeout(240_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'faults')
    for (const m of cluster.members) await waitReady(m)
  })
  after(async function () {
    this.timeout(60_000)
    await cluster?.cleanup()
    await nats?.stop()
  })

  /** What each member says of itself (readiness, revision, apply lag) and what it logged: for a failure's message. */
  const clusterState = async (): Promise<string> => {
    const parts = await Promise.all(
      cluster.members.map(async (m) => {
        if (m.proc === undefined) return `${m.name}: not running`
        const ready = await fetch(`${m.http}/readyz`).then((r) => r.text(), String)
        const metrics = await fetch(`${m.http}/metrics`).then((r) => r.text(), String)
        const figures = metrics
          .split('\n')
          .filter((l) => /^kvlog_(revision|cluster_(apply_lag|leader_changes|publish_count|forward_count))/.test(l))
        return `${m.name}: ${ready}\n  ${figures.join('\n  ')}\n  output: ${m.proc.output().slice(-4000)}`
      }),
    )
    return parts.join('\n')
  }

  const leaderIndex = async (): Promise<number> => {
    const running = cluster.members.find((m) => m.proc !== undefined)!
    const s = (await (await fetch(`${running.http}/v1/status`)).json()) as { cluster: { leader: string } }
    return cluster.members.findIndex((m) => m.name === s.cluster.leader)
  }

  it('keeps a lease across a leader failover, and expires it afterwards on every member', async function () {
    this.timeout(120_000)
    const { members } = cluster
    const li = await leaderIndex()
    const follower = [0, 1, 2].find((i) => i !== li)!
    const ttl = 8
    const grant = await etcdctl(members[follower].grpc, ['--command-timeout=30s', 'lease', 'grant', String(ttl)])
    expect(grant.code, grant.stderr).to.equal(0)
    const id = /lease ([0-9a-f]+) granted/.exec(grant.stdout)?.[1]
    expect(id, grant.stdout).to.not.equal(undefined)
    const put = await etcdctl(members[follower].grpc, ['--command-timeout=30s', 'put', '--lease', id!, 'leased/k', 'v'])
    expect(put.code, put.stderr).to.equal(0)

    await cluster.stop(li, 'SIGKILL')
    const killed = Date.now()
    // A new leader takes over within a few seconds; the lease is still there (its TTL starts again).
    let newLeader = -1
    while (Date.now() - killed < 30_000) {
      newLeader = await leaderIndex().catch(() => -1)
      if (newLeader >= 0 && newLeader !== li) break
      await sleep(200)
    }
    expect(newLeader).to.not.equal(li)
    const alive = await etcdctl(members[follower].grpc, ['lease', 'timetolive', id!])
    expect(alive.code, alive.stderr).to.equal(0)
    expect(alive.stdout).to.match(/remaining\(\d+s\)/)
    expect((await listPrefix(members[follower], 'leased/')).kvs).to.have.length(1)

    // No keep-alive: it expires at most TTL after the new leader took over (plus the expiry check).
    const deadline = Date.now() + (ttl + 20) * 1000
    let kvs = 1
    while (kvs > 0 && Date.now() < deadline) {
      await sleep(500)
      kvs = (await listPrefix(members[follower], 'leased/')).kvs.length
    }
    expect(kvs, 'the leased key after the TTL').to.equal(0)
    expect(Date.now() - killed).to.be.at.least(ttl * 1000 - 2000)
    await cluster.start(li)
    await waitReady(members[li], 60_000)
    for (const m of members) expect((await listPrefix(m, 'leased/')).kvs).to.have.length(0)
    const gone = await etcdctl(members[li].grpc, ['lease', 'timetolive', id!])
    expect(gone.stdout + gone.stderr).to.match(/already expired|not found/)
  })

  it('lists a member that is down and takes it off the roster with etcdctl member remove', async function () {
    this.timeout(120_000)
    const { members } = cluster
    const roster = async (i: number) =>
      ((await (await fetch(`${members[i].http}/v1/status`)).json()) as { cluster: { roster: string[] } }).cluster.roster
    for (let i = 0; i < members.length; i++) if (members[i].proc === undefined) await cluster.start(i)
    expect(await roster(0)).to.have.members(['m0', 'm1', 'm2'])
    const address = members[2].grpc
    await cluster.stop(2)
    await sleep(4000) // its record expires (leaderLease)
    // The simple form prints ids in hex (JSON numbers would lose digits): id, status, name, peer URLs, client URLs.
    const list = await etcdctl(members[0].grpc, ['member', 'list'])
    expect(list.code, list.stderr).to.equal(0)
    const down = list.stdout
      .split('\n')
      .map((line) => line.split(',').map((f) => f.trim()))
      .find((f) => f[2] === 'm2')
    expect(down, list.stdout).to.not.equal(undefined)
    // The client URLs last seen for it, so etcdctl endpoint status --cluster reports it unreachable.
    expect(down![4], 'client URLs of a member that is down').to.equal(address)
    const hex = down![0]
    const removed = await etcdctl(members[0].grpc, ['--command-timeout=30s', 'member', 'remove', hex])
    expect(removed.code, removed.stderr).to.equal(0)
    expect(await roster(1)).to.have.members(['m0', 'm1'])
    await putKey(members[1], 'after-remove', 'x')
    const unknown = await etcdctl(members[0].grpc, ['member', 'remove', 'abcdef'])
    expect(unknown.code).to.not.equal(0)
    expect(unknown.stderr).to.match(/member not found/)
    // Started again, it joins again.
    await cluster.start(2)
    const deadline = Date.now() + 30_000
    while (!(await roster(0)).includes('m2') && Date.now() < deadline) await sleep(200)
    expect(await roster(0)).to.have.members(['m0', 'm1', 'm2'])
  })

  it('keeps acknowledging writes while one nats-server of three is SIGKILLed, and loses none', async () => {
    const { members } = cluster
    const acked: string[] = []
    let failed = 0
    let stop = false
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const key = `ns/${w}/${i}`
        try {
          await putKey(members[(w + i) % 3], key, `v${i}`)
          acked.push(key)
        } catch {
          failed++ // UNAVAILABLE while the stream elects a new leader: not acknowledged
        }
      }
    }
    const writers = Promise.all([0, 1, 2, 3].map(writer))
    await sleep(1000)
    const before = acked.length
    await nats.kill(1, 'SIGKILL')
    const killedAt = acked.length
    const killed = Date.now()
    // Writes go on with two servers of three (generous: the machine may be loaded, and the stream, the
    // bucket and the members' consumers may each elect a new leader among the two servers left).
    const deadline = killed + 120_000
    while (acked.length < killedAt + 200 && Date.now() < deadline) await sleep(100)
    console.log(`      200 writes acknowledged ${Date.now() - killed} ms after the nats-server's SIGKILL (${failed} failed)`)
    stop = true
    await writers
    expect(before).to.be.above(0)
    const why = acked.length >= killedAt + 200 ? '' : await clusterState()
    expect(acked.length, `acknowledged after the kill (${failed} failed)\n${why}`).to.be.at.least(killedAt + 200)
    await nats.restart(1)
    for (const m of members) {
      const have = new Set((await listPrefix(m, 'ns/')).kvs.map((kv) => kv.key))
      for (const key of acked) expect(have.has(key), `${key} on ${m.name}`).to.equal(true)
    }
  })
})
