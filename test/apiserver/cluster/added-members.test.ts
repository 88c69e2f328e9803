/**
 * Members added and not started, and MemberUpdate, on a cluster of real processes (three nats-servers,
 * two `kvlog serve` members), through etcdctl and the etcd gRPC door:
 * - etcd's strict reconfiguration check: a voting member added that has not started counts toward the
 *   majority with nothing, so a second one added before it starts (two started of four) is refused with
 *   etcd's "not enough started members"; on a member started with the check off, it is accepted, and then
 *   a member that checks refuses to take a started member off (one started of three would be left);
 * - MemberUpdate needs role root; it gives an added member new peer URLs (the member that starts with one
 *   of them takes its id) and a started one new ones (every member lists them); a peer URL another member
 *   has is refused, and an unknown id is etcd's "member not found".
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { etcdctl, type EtcdctlRun } from '../../support/etcdctl.js'
import { startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { etcdGrpc } from '../../support/etcd-grpc.js'
import { codeOf, tokenMd } from '../../support/grpc-codes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { startServerProcess } from '../../support/server-process.js'
import { waitUntil } from '../../support/wait.js'

/** etcd's message for a membership change asked while the previous one is not settled (kvlog: MEMBERSHIP_UNSETTLED). */
const UNSETTLED = /etcdserver: unhealthy cluster/

describe('kvlog cluster: members added and not started, and MemberUpdate (3 nats-servers, 2 kvlog serve processes)', function () {
  this.timeout(300_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses
  /** The ids MemberAdd answered, in order. */
  const added: string[] = []

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'added', 2, ['--cluster-request-timeout', '4s'])
    for (const m of cluster.members) await waitReady(m)
  })
  after(async function () {
    this.timeout(60_000)
    await cluster?.cleanup()
    await nats?.stop()
  })

  /** Waits for an asynchronous condition (a deadline only a hang reaches). */
  const until = (what: string, cond: () => Promise<boolean>): Promise<void> => waitUntil(what, cond, 60_000)
  /** Runs etcdctl against member i, again while the previous membership change is not settled. */
  const settled = async (i: number, args: string[]): Promise<EtcdctlRun> => {
    let run: EtcdctlRun | undefined
    await until(`etcdctl ${args.join(' ')} to be answered`, async () => {
      run = await etcdctl(cluster.members[i].grpc, ['--command-timeout=30s', ...args])
      return run.code === 0 || !UNSETTLED.test(run.stderr)
    })
    return run!
  }
  /** member i's `member list` lines, by id (hex): [status, name, peer URLs, client URLs, learner]. */
  const list = async (i: number): Promise<Map<string, string[]>> => {
    const r = await etcdctl(cluster.members[i].grpc, ['member', 'list'])
    expect(r.code, r.stderr).to.equal(0)
    return new Map(
      r.stdout
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => line.split(',').map((f) => f.trim()))
        .map((f): [string, string[]] => [f[0], f.slice(1)]),
    )
  }
  const idOf = async (name: string): Promise<string> => [...(await list(0))].find(([, f]) => f[1] === name)![0]
  const addedId = (run: EtcdctlRun): string => {
    expect(run.code, run.stderr).to.equal(0)
    const id = /Member +([0-9a-f]+) added/.exec(run.stdout)?.[1]
    expect(id, run.stdout).to.be.a('string')
    return id!
  }

  it('refuses a second voting member added before the first starts; accepts it with the check off; then refuses a removal', async () => {
    added.push(addedId(await settled(0, ['member', 'add', 'p1', '--peer-urls=http://127.0.0.1:23901'])))
    const refused = await settled(0, ['member', 'add', 'p2', '--peer-urls=http://127.0.0.1:23902'])
    expect(refused.code).to.not.equal(0)
    expect(refused.stderr).to.match(/etcdserver: re-configuration failed due to not enough started members/)
    const m0 = etcdGrpc(cluster.members[0].grpc)
    try {
      expect(await codeOf(m0.call('Cluster', 'MemberAdd', { peerURLs: ['http://127.0.0.1:23902'] }))).to.equal('NOT_ENOUGH_STARTED_MEMBERS')
    } finally {
      m0.close()
    }
    expect([...(await list(0)).values()].filter((f) => f[0] === 'unstarted')).to.have.length(1)

    cluster.members[0].args.push('--cluster-strict-reconfig-check=false')
    await cluster.stop(0)
    await cluster.start(0)
    await waitReady(cluster.members[0])
    added.push(addedId(await settled(0, ['member', 'add', 'p2', '--peer-urls=http://127.0.0.1:23902'])))
    const unstarted = [...(await list(0))].filter(([, f]) => f[0] === 'unstarted').map(([id]) => id)
    expect(unstarted.sort()).to.deep.equal([...added].sort())

    // m1 checks strictly: taking m0 off would leave one started member of three.
    const removal = await settled(1, ['member', 'remove', await idOf('m0')])
    expect(removal.code).to.not.equal(0)
    expect(removal.stderr).to.match(/etcdserver: re-configuration failed due to not enough started members/)
  })

  it('updates peer URLs for root only: an added member is taken by the URL, a started one is listed with it', async () => {
    const m1 = await idOf('m1')
    // Another member's URL (an added one's), and an id no member has.
    const taken = await settled(0, ['member', 'update', m1, '--peer-urls=http://127.0.0.1:23902'])
    expect(taken.code).to.not.equal(0)
    expect(taken.stderr).to.match(/etcdserver: Peer URLs already exists/)
    const unknown = await settled(0, ['member', 'update', 'ffff', '--peer-urls=http://127.0.0.1:23999'])
    expect(unknown.code).to.not.equal(0)
    expect(unknown.stderr).to.match(/etcdserver: member not found/)

    // A started member: every member lists its new URL.
    const updated = await settled(0, ['member', 'update', m1, '--peer-urls=http://127.0.0.1:23912'])
    expect(updated.code, updated.stderr).to.equal(0)
    for (const i of [0, 1])
      await until(`m${i} to list m1's new peer URL`, async () => (await list(i)).get(m1)?.[2] === 'http://127.0.0.1:23912')

    // An added member: the member started with its new URL joins with the id MemberAdd gave.
    const moved = await settled(0, ['member', 'update', added[0], '--peer-urls=http://127.0.0.1:23911'])
    expect(moved.code, moved.stderr).to.equal(0)
    expect((await list(0)).get(added[0])).to.deep.equal(['unstarted', '', 'http://127.0.0.1:23911', '', 'false'])
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-m2-'))
    const args = [
      '--nats-url',
      nats.urls,
      '--cluster-name',
      'added',
      '--member-name',
      'm2',
      '--advertise-peer-urls',
      'http://127.0.0.1:23911',
    ]
    const m2 = await startServerProcess(args, join(dir, 'data'), { readyTimeoutMs: 30_000 })
    try {
      await until(
        'm2 to join with the id added',
        async () => (await list(0)).get(added[0])?.slice(0, 3).join() === 'started,m2,http://127.0.0.1:23911',
      )

      // With auth on, MemberUpdate needs role root.
      const g = etcdGrpc(cluster.members[1].grpc)
      try {
        expect(await codeOf(g.call('Auth', 'UserAdd', { name: 'root', password: 'rootpw' }))).to.equal('ok')
        expect(await codeOf(g.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' }))).to.equal('ok')
        expect(await codeOf(g.call('Auth', 'UserAdd', { name: 'alice', password: 'alicepw' }))).to.equal('ok')
        expect(await codeOf(g.call('Auth', 'AuthEnable', {}))).to.equal('ok')
        const token = async (name: string, password: string) =>
          String(((await g.call('Auth', 'Authenticate', { name, password })) as { token: string }).token)
        const update = { ID: BigInt(`0x${m1}`).toString(), peerURLs: ['http://127.0.0.1:23913'] }
        expect(await codeOf(g.call('Cluster', 'MemberUpdate', update))).to.equal('UNAUTHENTICATED')
        expect(await codeOf(g.call('Cluster', 'MemberUpdate', update, tokenMd(await token('alice', 'alicepw'))))).to.equal(
          'PERMISSION_DENIED',
        )
        expect(
          await codeOf(g.call('Cluster', 'MemberUpdate', { ...update, ID: '65535' }, tokenMd(await token('root', 'rootpw')))),
        ).to.equal('MEMBER_NOT_FOUND')
        let code = ''
        await until('root to update m1', async () => {
          code = await codeOf(g.call('Cluster', 'MemberUpdate', update, tokenMd(await token('root', 'rootpw'))))
          return code !== 'MEMBERSHIP_UNSETTLED'
        })
        expect(code).to.equal('ok')
      } finally {
        g.close()
      }
      await until("m0 to list m1's peer URL set by root", async () => (await list(0)).get(m1)?.[2] === 'http://127.0.0.1:23913')
    } finally {
      await m2.cleanup()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
