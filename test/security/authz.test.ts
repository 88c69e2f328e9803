/**
 * The doors an intruder found open, each shut: with auth enabled, Lock and Election without credentials
 * (over gRPC and the JSON gateway) can neither read a leader under a forbidden prefix, nor delete a key
 * with Unlock, nor overwrite one with Proclaim, nor create one with Campaign; a user gets only what its
 * KV permissions give, and its lock and election writes carry it as author. Membership changes need role
 * root; a foreign lease cannot be attached inside a Txn.
 */
import { expect } from 'chai'
import type { Message } from '../../apiserver/etcd/proto.js'
import {
  b,
  metadata,
  etcdCall,
  gatewayCall,
  httpCall,
  login,
  startSecuredServer,
  stopSecuredServer,
  type Ctx,
  type Outcome,
  type Who,
} from './fixture.js'

const b64 = (s: string) => Buffer.from(s).toString('base64')

describe('security: lock, election, membership and leases are authorized as the caller', function () {
  this.timeout(60_000)
  let ctx: Ctx
  let secretCreate: number

  before(async () => {
    ctx = await startSecuredServer()
    const r = await ctx.grpc.call('KV', 'Range', { key: b('secret/x') }, meta('root'))
    secretCreate = Number((r.kvs as Message[])[0].create_revision)
  })

  after(() => stopSecuredServer(ctx))

  const meta = (who: Who) => metadata(ctx, who)

  /** The value of a key as root sees it (undefined if it does not exist). */
  const valueOf = async (key: string): Promise<string | undefined> => {
    const r = await ctx.grpc.call('KV', 'Range', { key: b(key) }, meta('root'))
    const kv = (r.kvs as Message[])[0]
    return kv === undefined ? undefined : String(kv.value)
  }
  const countUnder = async (prefix: string): Promise<number> => {
    const r = await ctx.grpc.call(
      'KV',
      'Range',
      { key: b(prefix), range_end: b(prefix.slice(0, -1) + '0'), count_only: true },
      meta('root'),
    )
    return Number(r.count ?? 0)
  }

  /** The outcome of one Lock/Election call for each caller, on gRPC and on the gateway. */
  const both = async (service: string, method: string, path: string, grpc: Message, json: unknown, who: Who[]) => {
    const got: Record<string, Outcome> = {}
    for (const w of who) {
      got[`grpc ${w}`] = await etcdCall(ctx, w, service, method, grpc)
      got[`gateway ${w}`] = await gatewayCall(ctx, w, path, json)
    }
    return got
  }

  it('election/leader of a forbidden prefix: refused to nobody and to a user without READ', async () => {
    const got = await both('Election', 'Leader', 'election/leader', { name: b('secret') }, { name: b64('secret') }, [
      'nobody',
      'alice',
      'root',
    ])
    expect(got).to.deep.equal({
      'grpc nobody': 'UNAUTHENTICATED',
      'gateway nobody': 'UNAUTHENTICATED',
      'grpc alice': 'PERMISSION_DENIED',
      'gateway alice': 'PERMISSION_DENIED',
      'grpc root': 'ok',
      'gateway root': 'ok',
    })
  })

  it('election/observe of a forbidden prefix: refused', async () => {
    for (const who of ['nobody', 'alice'] as Who[]) {
      expect(await gatewayCall(ctx, who, 'election/observe', { name: b64('secret') }), who).to.equal(
        who === 'nobody' ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED',
      )
    }
  })

  it('lock/unlock cannot delete a key the caller may not write', async () => {
    const got = await both('Lock', 'Unlock', 'lock/unlock', { key: b('secret/x') }, { key: b64('secret/x') }, ['nobody', 'alice', 'carol'])
    expect(Object.values(got)).to.not.include('ok')
    expect(await valueOf('secret/x')).to.equal('1')
  })

  it('election/proclaim cannot overwrite a key the caller may not write', async () => {
    const leader = { name: b('secret'), key: b('secret/x'), rev: secretCreate, lease: 0 }
    const json = { leader: { name: b64('secret'), key: b64('secret/x'), rev: String(secretCreate), lease: '0' }, value: b64('pwned') }
    const got = await both('Election', 'Proclaim', 'election/proclaim', { leader, value: b('pwned') }, json, ['nobody', 'alice', 'carol'])
    expect(Object.values(got)).to.not.include('ok')
    expect(await valueOf('secret/x')).to.equal('1')
  })

  it('election/campaign and lock/lock cannot create keys the caller may not write; no lease is left behind', async () => {
    const leasesBefore = (await ctx.grpc.call('Lease', 'LeaseLeases', {}, meta('root'))).leases as Message[]
    const got = {
      ...(await both(
        'Election',
        'Campaign',
        'election/campaign',
        { name: b('/registry/configmaps/prod'), value: b('x') },
        { name: b64('/registry/configmaps/prod'), value: b64('x') },
        ['nobody', 'alice', 'carol'],
      )),
      ...Object.fromEntries(
        Object.entries(await both('Lock', 'Lock', 'lock/lock', { name: b('secret') }, { name: b64('secret') }, ['nobody', 'alice'])).map(
          ([k, v]) => [`lock ${k}`, v],
        ),
      ),
    }
    expect(Object.values(got)).to.not.include('ok')
    expect(await countUnder('/registry/configmaps/prod/')).to.equal(0)
    expect(await countUnder('secret/')).to.equal(1)
    const leasesAfter = (await ctx.grpc.call('Lease', 'LeaseLeases', {}, meta('root'))).leases as Message[]
    expect(leasesAfter.length).to.equal(leasesBefore.length)
  })

  it('a user locks, campaigns and proclaims inside its permissions; the writes carry it as author', async () => {
    const lock = await ctx.grpc.call('Lock', 'Lock', { name: b('app/lk') }, meta('alice'))
    const campaign = await ctx.grpc.call('Election', 'Campaign', { name: b('app/el'), value: b('v1') }, meta('alice'))
    const leader = campaign.leader as Message
    await ctx.grpc.call('Election', 'Proclaim', { leader, value: b('v2') }, meta('alice'))
    expect(
      (((await ctx.grpc.call('Election', 'Leader', { name: b('app/el') }, meta('carol'))).kv as Message).value as Buffer).toString(),
    ).to.equal('v2')
    await ctx.grpc.call('Lock', 'Unlock', { key: lock.key }, meta('alice'))
    // carol reads app/ but may not write it.
    expect(await etcdCall(ctx, 'carol', 'Election', 'Resign', { leader })).to.equal('PERMISSION_DENIED')
    await ctx.grpc.call('Election', 'Resign', { leader }, meta('alice'))
    const res = await fetch(`${ctx.server.http}/v1/history?key=app/&prefix=true`, {
      headers: { authorization: `Bearer ${ctx.tokens.root}` },
    })
    const events = ((await res.json()) as { events: Array<{ kv: { key: string }; author?: { door: string; user?: string } }> }).events
    const ours = events.filter((e) => e.kv.key.startsWith('app/lk/') || e.kv.key.startsWith('app/el/'))
    expect(ours.length).to.equal(5) // lock, unlock, campaign, proclaim, resign
    for (const e of ours) expect(e.author).to.deep.equal({ door: 'etcd', user: 'alice' })
  })

  it('membership changes need role root (gRPC and gateway)', async () => {
    for (const [method, path] of [
      ['MemberRemove', 'cluster/member/remove'],
      ['MemberAdd', 'cluster/member/add'],
      ['MemberUpdate', 'cluster/member/update'],
      ['MemberPromote', 'cluster/member/promote'],
    ]) {
      expect(await etcdCall(ctx, 'nobody', 'Cluster', method, { ID: '1' }), method).to.equal('UNAUTHENTICATED')
      expect(await etcdCall(ctx, 'alice', 'Cluster', method, { ID: '1' }), method).to.equal('PERMISSION_DENIED')
      expect(await gatewayCall(ctx, 'alice', path, { ID: '1' }), path).to.equal('PERMISSION_DENIED')
    }
  })

  it('a foreign lease cannot be attached inside a Txn, as a plain Put cannot', async () => {
    const lease = String((await ctx.grpc.call('Lease', 'LeaseGrant', { TTL: 60 }, meta('root'))).ID)
    await ctx.grpc.call('KV', 'Put', { key: b('secret/leased'), value: b('1'), lease }, meta('root'))
    expect(await etcdCall(ctx, 'alice', 'KV', 'Put', { key: b('app/borrow'), value: b('1'), lease })).to.equal('PERMISSION_DENIED')
    const txn = { success: [{ request_put: { key: b('app/borrow'), value: b('1'), lease } }] }
    expect(await etcdCall(ctx, 'alice', 'KV', 'Txn', txn)).to.equal('PERMISSION_DENIED')
    const nested = { success: [{ request_txn: { failure: [{ request_put: { key: b('app/borrow'), value: b('1'), lease } }] } }] }
    expect(await etcdCall(ctx, 'alice', 'KV', 'Txn', nested)).to.equal('PERMISSION_DENIED')
    expect(await httpCall(ctx, 'alice', 'POST', '/v1/txn', { success: [{ type: 'put', key: 'app/borrow', value: '1', lease }] })).to.equal(
      'PERMISSION_DENIED',
    )
    expect(await valueOf('app/borrow')).to.equal(undefined)
    // Its own lease is fine.
    const own = String((await ctx.grpc.call('Lease', 'LeaseGrant', { TTL: 60 }, meta('alice'))).ID)
    expect(
      await etcdCall(ctx, 'alice', 'KV', 'Txn', { success: [{ request_put: { key: b('app/borrow'), value: b('1'), lease: own } }] }),
    ).to.equal('ok')
  })

  it('the old root token is refused for admin calls after the root password changes', async () => {
    const oldRoot = await login(ctx, 'root', 'rootpw')
    await ctx.grpc.call('Auth', 'UserChangePassword', { name: 'root', password: 'rootpw2' }, meta('root'))
    const old = { ...ctx, tokens: { ...ctx.tokens, root: oldRoot } }
    expect(await etcdCall(old, 'root', 'Auth', 'UserAdd', { name: 'mallory', password: 'x' })).to.equal('UNAUTHENTICATED')
    expect(await httpCall(old, 'root', 'GET', '/v1/snapshot')).to.equal('UNAUTHENTICATED')
    expect(await httpCall(old, 'root', 'POST', '/v1/auth/users', { name: 'mallory', password: 'x' })).to.equal('UNAUTHENTICATED')
    ctx.tokens.root = await login(ctx, 'root', 'rootpw2')
    expect(await etcdCall(ctx, 'root', 'Auth', 'UserList', {})).to.equal('ok')
  })
})
