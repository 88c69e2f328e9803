/**
 * Auth in cluster mode, with real processes (three nats-servers, two `kvlog serve` members): the auth
 * record is part of the replicated log, and every member enforces a change as soon as it has applied it,
 * whichever member it was made through. Without that, a member would keep answering with the auth state it
 * read at its start (auth off), and a user's writes forbidden on one member would be applied through another.
 */
import type { Metadata } from '@grpc/grpc-js'
import { expect } from 'chai'
import type { Message } from '../../../apiserver/etcd/proto.js'
import { eventually } from '../../clients/informer/helpers.js'
import { startMembers, waitReady, type ClusterProcesses } from '../../support/cluster-processes.js'
import { etcdGrpc, type EtcdGrpc } from '../../support/etcd-grpc.js'
import { codeOf, tokenMd } from '../../support/grpc-codes.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'

const b = (s: string) => Buffer.from(s)

describe('kvlog cluster: auth changes made through one member are enforced by every member', function () {
  this.timeout(120_000)
  let nats: NatsCluster
  let cluster: ClusterProcesses
  let m0: EtcdGrpc
  let m1: EtcdGrpc

  before(async function () {
    this.timeout(120_000)
    nats = await startNatsCluster()
    cluster = await startMembers(nats, 'authtest', 2)
    for (const m of cluster.members) await waitReady(m)
    m0 = etcdGrpc(cluster.members[0].grpc)
    m1 = etcdGrpc(cluster.members[1].grpc)
  })
  after(async function () {
    this.timeout(60_000)
    m0?.close()
    m1?.close()
    await cluster?.cleanup()
    await nats?.stop()
  })

  it('enables auth through m0; m1 refuses anonymous writes, knows the users, and follows role changes', async () => {
    const auth0 = (method: string, request: Message, md?: Metadata) => m0.call('Auth', method, request, md)
    expect(await codeOf(auth0('UserAdd', { name: 'root', password: 'rootpw' }))).to.equal('ok')
    expect(await codeOf(auth0('UserGrantRole', { user: 'root', role: 'root' }))).to.equal('ok')
    expect(await codeOf(auth0('UserAdd', { name: 'alice', password: 'alicepw' }))).to.equal('ok')
    expect(await codeOf(auth0('RoleAdd', { name: 'app' }))).to.equal('ok')
    expect(await codeOf(auth0('UserGrantRole', { user: 'alice', role: 'app' }))).to.equal('ok')
    expect(await codeOf(auth0('AuthEnable', {}))).to.equal('ok')

    // m1 applies the record and enforces it: no anonymous write, and alice (no permission yet) is denied.
    await eventually(
      'm1 reports auth enabled',
      async () => ((await m1.call('Auth', 'AuthStatus', {})) as { enabled?: boolean }).enabled === true,
      30_000,
    )
    expect(await codeOf(m1.call('KV', 'Put', { key: b('/app/x'), value: b('anon') }))).to.not.equal('ok')
    const alice = String(((await m1.call('Auth', 'Authenticate', { name: 'alice', password: 'alicepw' })) as { token: string }).token)
    expect(await codeOf(m1.call('KV', 'Put', { key: b('/app/x'), value: b('1') }, tokenMd(alice)))).to.equal('PERMISSION_DENIED')

    // A permission granted through m0 takes effect on m1 once applied there.
    const root = String(((await m0.call('Auth', 'Authenticate', { name: 'root', password: 'rootpw' })) as { token: string }).token)
    const grant = { name: 'app', perm: { permType: 2, key: b('/app/'), range_end: b('/app0') } }
    expect(await codeOf(auth0('RoleGrantPermission', grant, tokenMd(root)))).to.equal('ok')
    let code = ''
    await eventually(
      'alice may write through m1',
      async () => {
        code = await codeOf(m1.call('KV', 'Put', { key: b('/app/x'), value: b('2') }, tokenMd(alice)))
        return code === 'ok'
      },
      30_000,
    )
    // Nothing anonymous or denied was applied: only alice's permitted write is there.
    const r0 = await m0.call('KV', 'Range', { key: b('/app/x') }, tokenMd(root))
    expect(((r0 as { kvs: Array<{ value: Buffer }> }).kvs ?? []).map((kv) => kv.value.toString())).to.deep.equal(['2'])

    // A new password for alice, set through m0, ends the token m1 issued to her (once m1 applied it).
    expect(await codeOf(auth0('UserChangePassword', { name: 'alice', password: 'newpw' }, tokenMd(root)))).to.equal('ok')
    await eventually(
      "m1 refuses alice's old token",
      async () => (await codeOf(m1.call('KV', 'Put', { key: b('/app/x'), value: b('3') }, tokenMd(alice)))) === 'UNAUTHENTICATED',
      30_000,
    )
    const alice2 = String(((await m1.call('Auth', 'Authenticate', { name: 'alice', password: 'newpw' })) as { token: string }).token)
    expect(await codeOf(m1.call('KV', 'Put', { key: b('/app/x'), value: b('4') }, tokenMd(alice2)))).to.equal('ok')

    // Disabling through m1 reaches m0.
    const root1 = String(((await m1.call('Auth', 'Authenticate', { name: 'root', password: 'rootpw' })) as { token: string }).token)
    expect(await codeOf(m1.call('Auth', 'AuthDisable', {}, tokenMd(root1)))).to.equal('ok')
    await eventually(
      'm0 reports auth disabled',
      async () => ((await m0.call('Auth', 'AuthStatus', {})) as { enabled?: boolean }).enabled !== true,
      30_000,
    )
    expect(await codeOf(m0.call('KV', 'Put', { key: b('/app/y'), value: b('anon') }))).to.equal('ok')
  })

  it('auth changes made at the same moment through both members all take effect (none overwrites another)', async () => {
    const names = (member: string) => Array.from({ length: 12 }, (_, i) => `concurrent-${member}-${i}`)
    const added = await Promise.all([
      ...names('m0').map((name) => codeOf(m0.call('Auth', 'RoleAdd', { name }))),
      ...names('m1').map((name) => codeOf(m1.call('Auth', 'RoleAdd', { name }))),
    ])
    expect(
      added.every((c) => c === 'ok'),
      added.join(' '),
    ).to.equal(true)
    const want = [...names('m0'), ...names('m1')].sort()
    for (const [member, client] of [
      ['m0', m0],
      ['m1', m1],
    ] as const) {
      let roles: string[] = []
      await eventually(
        `${member} lists every role added through either member`,
        async () => {
          const list = (await client.call('Auth', 'RoleList', {})) as { roles?: string[] }
          roles = (list.roles ?? []).filter((r) => r.startsWith('concurrent-')).sort()
          return roles.length === want.length
        },
        30_000,
      ).catch(() => undefined)
      expect(roles).to.deep.equal(want)
    }
  })
})
