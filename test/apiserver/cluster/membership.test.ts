/**
 * Membership changes on a cluster of real processes (three nats-servers, three `kvlog serve` members),
 * through etcdctl:
 * - a member restarted with its copy keeps its id; one replaced under the same name with an empty data
 *   dir is a new incarnation: a new id, and the old id is not found;
 * - MemberPromote of a voting member is refused as etcd refuses it;
 * - a learner added by its peer URL (etcdctl member add --learner) is listed unstarted, joins with that
 *   id when a member starts with the URL in --advertise-peer-urls, and is promoted once caught up;
 * - etcd's strict reconfiguration check: with one member down, taking a live one off (which would leave
 *   one live member of two) is refused with etcd's "unhealthy cluster", and nothing changes;
 * - one change at a time: while a MemberRemove is not yet durable on a majority (the members that would
 *   hold it are down), a second one is refused with etcd's "unhealthy cluster"; once the cluster holds the
 *   first, the second goes through.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'nats'
import { etcdctl } from '../../support/etcdctl.js'
import { startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { startServerProcess } from '../../support/server-process.js'
import { sleep } from '../../support/wait.js'

describe('kvlog cluster: membership changes (3 nats-servers, 3 kvlog serve processes)', function () {
  this.timeout(300_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'membership', 3, ['--cluster-request-timeout', '4s'])
    for (const m of cluster.members) await waitReady(m)
  })
  after(async function () {
    this.timeout(60_000)
    await cluster?.cleanup()
    await nats?.stop()
  })

  const roster = async (i: number): Promise<string[]> =>
    ((await (await fetch(`${cluster.members[i].http}/v1/status`)).json()) as { cluster: { roster: string[] } }).cluster.roster
  const until = async (what: string, cond: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 60_000
    while (!(await cond())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await sleep(200)
    }
  }
  /** Member name -> id (hex, as etcdctl's simple form prints it), as member i lists them. */
  const ids = async (i: number): Promise<Map<string, string>> => {
    const list = await etcdctl(cluster.members[i].grpc, ['member', 'list'])
    expect(list.code, list.stderr).to.equal(0)
    return new Map(
      list.stdout
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => line.split(',').map((f) => f.trim()))
        .map((f) => [f[2], f[0]]),
    )
  }

  it('gives a member replaced with an empty data dir a new id; a restart keeps the id', async () => {
    const { members } = cluster
    await until('all three on the roster', async () => (await roster(0)).length === 3)
    const before = await ids(0)
    expect([...before.keys()].sort()).to.deep.equal(['m0', 'm1', 'm2'])

    await cluster.stop(1)
    await cluster.start(1)
    await waitReady(members[1])
    expect((await ids(0)).get('m1'), 'm1 restarted with its copy').to.equal(before.get('m1'))

    await cluster.stop(2)
    await rm(members[2].dir, { recursive: true, force: true })
    await cluster.start(2)
    await waitReady(members[2])
    await until('m2 to join again as a new incarnation', async () => (await ids(0)).get('m2') !== before.get('m2'))
    const after = await ids(1)
    expect(after.get('m2'), 'as another member lists it').to.not.equal(before.get('m2'))
    expect(after.get('m0')).to.equal(before.get('m0'))
    const old = await etcdctl(members[0].grpc, ['member', 'remove', before.get('m2')!])
    expect(old.code).to.not.equal(0)
    expect(old.stderr).to.match(/member not found/)
  })

  it('refuses MemberPromote of a voting member as etcd does', async () => {
    const { members } = cluster
    const listed = await ids(0)
    const voter = await etcdctl(members[0].grpc, ['member', 'promote', listed.get('m1')!])
    expect(voter.code).to.not.equal(0)
    expect(voter.stderr).to.match(/etcdserver: can only promote a learner member/)
    const unknown = await etcdctl(members[0].grpc, ['member', 'promote', 'ffff'])
    expect(unknown.code).to.not.equal(0)
    expect(unknown.stderr).to.match(/etcdserver: member not found/)
  })

  it('adds a learner by its peer URL: started, it joins with that id; promoted once caught up', async () => {
    const { members } = cluster
    const url = 'http://127.0.0.1:23800' // names the member only: members talk through NATS
    const added = await etcdctl(members[0].grpc, ['member', 'add', 'm3', `--peer-urls=${url}`, '--learner'])
    expect(added.code, added.stderr).to.equal(0)
    // etcdctl prints the id with %16x: an id of fewer than 16 hex digits comes after more spaces.
    const id = /Member +([0-9a-f]+) added/.exec(added.stdout)?.[1]
    expect(id, added.stdout).to.be.a('string')
    const line = async () =>
      (await etcdctl(members[0].grpc, ['member', 'list'])).stdout.split('\n').find((l) => l.startsWith(`${id},`)) ?? ''
    expect(await line()).to.match(/, unstarted, , http:\/\/127\.0\.0\.1:23800, , true$/)

    const dir = await mkdtemp(join(tmpdir(), 'kvlog-m3-'))
    const m3 = await startServerProcess(
      [
        '--nats-url',
        nats.urls,
        '--cluster-name',
        'membership',
        '--member-name',
        'm3',
        '--cluster-request-timeout',
        '4s',
        '--advertise-peer-urls',
        url,
      ],
      join(dir, 'data'),
      { readyTimeoutMs: 30_000 },
    )
    try {
      await until('m3 to join as the learner added', async () => /, started, m3, http:\/\/127\.0\.0\.1:23800, .+, true$/.test(await line()))
      await until('m3 to be promoted', async () => {
        const r = await etcdctl(members[0].grpc, ['--command-timeout=30s', 'member', 'promote', id!])
        if (r.code === 0) return true
        expect(r.stderr).to.match(/can only promote a learner member which is in sync with leader|unhealthy cluster/)
        return false
      })
      expect(await line()).to.match(/, started, m3, .+, false$/)
      const again = await etcdctl(members[0].grpc, ['member', 'promote', id!])
      expect(again.stderr).to.match(/etcdserver: can only promote a learner member$/m)
      await until(
        'm3 to be removed',
        async () => (await etcdctl(members[0].grpc, ['--command-timeout=30s', 'member', 'remove', id!])).code === 0,
      )
    } finally {
      await m3.cleanup()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('refuses to take a live member off when that leaves too few live members', async () => {
    const { members } = cluster
    const listed = await ids(0)
    await cluster.stop(2)
    // m2's record in the cluster's bucket expires once it stops renewing it: then m2 counts as down.
    const nc = await connect({ servers: nats.urls.split(',') })
    try {
      const kv = await nc.jetstream().views.kv('kvlog_membership', { bindOnly: true })
      await until("m2's record to expire", async () => (await kv.get('member.m2').catch(() => ({ operation: 'PUT' })))?.operation !== 'PUT')
    } finally {
      await nc.close()
    }
    const refused = await etcdctl(members[0].grpc, ['--command-timeout=30s', 'member', 'remove', listed.get('m1')!])
    expect(refused.code).to.not.equal(0)
    expect(refused.stderr).to.match(/etcdserver: unhealthy cluster/)
    expect([...(await roster(0))].sort()).to.deep.equal(['m0', 'm1', 'm2'])
    await cluster.start(2)
    await waitReady(members[2])
  })

  it('refuses a second membership change while the first is not durable on a majority', async () => {
    const { members } = cluster
    const listed = await ids(0)
    await cluster.stop(1)
    await cluster.stop(2)
    // Taking m2 off leaves m0 and m1: the change waits for m1, which is down.
    const first = etcdctl(members[0].grpc, ['--command-timeout=60s', 'member', 'remove', listed.get('m2')!])
    await until('m0 to apply the removal of m2', async () => !(await roster(0)).includes('m2'))
    const second = await etcdctl(members[0].grpc, ['--command-timeout=30s', 'member', 'remove', listed.get('m1')!])
    expect(second.code).to.not.equal(0)
    expect(second.stderr).to.match(/etcdserver: unhealthy cluster/)
    await first
    // m1 back: it applies the removal and reports it durable, which settles it.
    await cluster.start(1)
    await waitReady(members[1])
    await until('the removal of m2 to settle', async () => {
      const r = await etcdctl(members[0].grpc, ['--command-timeout=30s', 'member', 'remove', listed.get('m1')!])
      if (r.code === 0) return true
      expect(r.stderr).to.match(/etcdserver: unhealthy cluster/)
      return false
    })
    expect(await roster(0)).to.deep.equal(['m0'])
  })
})
