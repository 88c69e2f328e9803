/**
 * The JSON gateway on the etcd client port, against a real etcd 3.4: the same script of requests goes to
 * both (each on a fresh store), and every answer (HTTP status and JSON body) must be the same once ids
 * that differ by nature (cluster and member ids, client URLs, sizes) are normalized. Covers KV, Txn,
 * Compact, Lease (grant, time-to-live, leases, revoke, the keep-alive stream), Watch streams (create with
 * history, progress, cancel, a compacted start revision), Lock, Election (campaign, leader, proclaim,
 * observe, resign), Maintenance (status shape, alarms), Cluster,
 * /version, /health, and error answers (etcd's messages, codes and HTTP statuses; bad JSON; unknown paths).
 */
import { expect } from 'chai'
import { startEtcd } from '../../../support/etcd-process.js'
import { startServerProcess } from '../../../support/server-process.js'
import { post, stream, type Answer } from './gateway-client.js'

const b64 = (s: string) => Buffer.from(s).toString('base64')

type Step = [label: string, status: number, body: unknown]

/** Replaces what legitimately differs between two members of different clusters. */
function normalize(value: unknown, key = ''): unknown {
  if (key === 'members' && Array.isArray(value)) {
    return value.map((m: Record<string, unknown>) => ({ ...(normalize(m) as object), ID: '<id>', name: '<name>' }))
  }
  if (Array.isArray(value)) return value.map((v) => normalize(v, key))
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k === 'peerURLs') continue
      out[k] = normalize(v, k)
    }
    return out
  }
  if (['cluster_id', 'member_id', 'leader', 'memberID'].includes(key)) return '<id>'
  if (key === 'clientURLs') return '<url>'
  return value
}

async function script(base: string): Promise<Step[]> {
  const steps: Step[] = []
  const call = async (label: string, path: string, body: unknown, method = 'POST'): Promise<Answer> => {
    const a = await post(base, path, body, method)
    steps.push([label, a.status, normalize(a.body)])
    return a
  }
  const record = (label: string, body: unknown) => steps.push([label, 200, normalize(body)])

  await call('version', '/version', '', 'GET')
  await call('health', '/health', '', 'GET')

  // KV
  await call('put a', '/v3/kv/put', { key: b64('a'), value: b64('1') })
  await call('put a again, prev_kv', '/v3/kv/put', { key: b64('a'), value: b64('2'), prev_kv: true })
  await call('put b (camelCase input)', '/v3/kv/put', { key: b64('b'), value: b64('1'), prevKv: true })
  await call('put c', '/v3/kv/put', { key: b64('c'), value: b64('1') })
  await call('range a', '/v3/kv/range', { key: b64('a') })
  await call('range [a, c)', '/v3/kv/range', { key: b64('a'), range_end: b64('c') })
  await call('range all, limit 1', '/v3/kv/range', { key: 'AA==', range_end: 'AA==', limit: 1 })
  await call('range count_only', '/v3/kv/range', { key: 'AA==', range_end: 'AA==', count_only: true })
  await call('range keys_only, descending by key', '/v3/kv/range', {
    key: 'AA==',
    range_end: 'AA==',
    keys_only: true,
    sort_order: 'DESCEND',
    sort_target: 'KEY',
  })
  await call('range at revision 2', '/v3/kv/range', { key: b64('a'), revision: '2' })
  await call('range with an unknown field', '/v3/kv/range', { key: b64('a'), no_such_field: 1 })
  await call('range under /v3beta/', '/v3beta/kv/range', { key: b64('a') })
  await call('deleterange b, prev_kv', '/v3/kv/deleterange', { key: b64('b'), prev_kv: true })
  await call('deleterange absent', '/v3/kv/deleterange', { key: b64('zz') })
  await call('txn succeeds', '/v3/kv/txn', {
    compare: [{ key: b64('a'), target: 'VALUE', result: 'EQUAL', value: b64('2') }],
    success: [{ request_put: { key: b64('d'), value: b64('1') } }, { request_range: { key: b64('a') } }],
    failure: [{ request_range: { key: b64('a') } }],
  })
  await call('txn fails', '/v3/kv/txn', {
    compare: [{ key: b64('d'), target: 'VERSION', result: 'GREATER', version: '5' }],
    success: [{ request_delete_range: { key: b64('d') } }],
    failure: [{ request_range: { key: b64('d') } }],
  })
  await call('txn on mod revision 0 (create)', '/v3/kv/txn', {
    compare: [{ key: b64('e'), target: 'MOD', mod_revision: '0' }],
    success: [{ request_put: { key: b64('e'), value: b64('1') } }],
  })

  // errors
  await call('empty key', '/v3/kv/range', { key: '' })
  await call('future revision', '/v3/kv/range', { key: b64('a'), revision: '1000' })
  await call('duplicate key in txn', '/v3/kv/txn', {
    success: [{ request_put: { key: b64('x'), value: 'MQ==' } }, { request_put: { key: b64('x'), value: 'Mg==' } }],
  })
  await call('too many txn ops', '/v3/kv/txn', {
    success: Array.from({ length: 129 }, (_, i) => ({ request_put: { key: b64(`t${i}`), value: 'MQ==' } })),
  })
  await call('put with an unknown lease', '/v3/kv/put', { key: b64('l'), value: 'MQ==', lease: '12345' })
  await call('revoke an unknown lease', '/v3/lease/revoke', { ID: '12345' })
  await call('wrong JSON type', '/v3/kv/range', { key: 5 })
  await call('unknown path', '/v3/kv/nothing', {})
  await call('GET on a POST path', '/v3/kv/range', '', 'GET')
  const malformed = await post(base, '/v3/kv/range', '{"key":')
  steps.push(['malformed JSON', malformed.status, (malformed.body as { code: number }).code])

  // leases
  await call('grant', '/v3/lease/grant', { ID: '1000', TTL: '60' })
  await call('grant an existing id', '/v3/lease/grant', { ID: '1000', TTL: '60' })
  await call('put with the lease', '/v3/kv/put', { key: b64('leased'), value: 'MQ==', lease: '1000' })
  const ttl = await post(base, '/v3/lease/timetolive', { ID: '1000', keys: true })
  const t = ttl.body as { TTL: string; grantedTTL: string }
  expect(Number(t.TTL)).to.be.within(50, 60)
  steps.push(['timetolive', ttl.status, normalize({ ...t, TTL: '<ttl>' })])
  await call('leases', '/v3/lease/leases', {})
  await call('leases (older path)', '/v3/kv/lease/leases', {})
  const keepalive = stream(base, '/v3/lease/keepalive', [{ ID: '1000' }])
  const kept = await keepalive.next()
  keepalive.close()
  record('keepalive stream', kept)
  const gone = stream(base, '/v3/lease/keepalive', [{ ID: '999' }])
  record('keepalive of an unknown lease', await gone.next())
  // One keep-alive in a complete body: the answer ends after its one message (etcd3gw's Lease.refresh).
  await call('keepalive as a plain POST', '/v3/lease/keepalive', { ID: '1000' })
  gone.close()
  await call('revoke', '/v3/lease/revoke', { ID: '1000' })
  await call('the leased key is gone', '/v3/kv/range', { key: b64('leased') })
  await call('timetolive of a revoked lease', '/v3/lease/timetolive', { ID: '1000' })

  // watch: history from revision 2 and a progress request in one body (etcd 3.4 may answer the progress
  // request before the history: compared apart); then a create and a cancel; then a live event.
  const watch = stream(base, '/v3/watch', [
    { create_request: { key: b64('a'), range_end: b64('e'), start_revision: '2', prev_kv: true } },
    { progress_request: {} },
  ])
  const result = (l: Record<string, unknown>) => l.result as Record<string, unknown>
  const events: unknown[] = []
  let progress: unknown
  while (events.length < 6 || progress === undefined) {
    const line = await watch.next()
    if (result(line).watch_id === '-1') progress = line
    else events.push(...((result(line).events as unknown[]) ?? []))
  }
  record(
    'watch created',
    watch.seen.find((l) => result(l).created === true),
  )
  record('watch history events', events)
  record('progress', progress)
  watch.close()
  const canceled = stream(base, '/v3/watch', [
    { create_request: { key: b64('a'), start_revision: '2' } },
    { cancel_request: { watch_id: '0' } },
  ])
  record('cancel', await canceled.next((l) => result(l).canceled === true))
  canceled.close()
  const live = stream(base, '/v3/watch', [{ create_request: { key: b64('a') } }])
  record('live watch created', await live.next())
  await call('a put seen by the watch', '/v3/kv/put', { key: b64('a'), value: b64('3') })
  record('live event', await live.next())
  live.close()

  // compaction
  await call('compact at 4', '/v3/kv/compaction', { revision: '4', physical: true })
  await call('range below the compact revision', '/v3/kv/range', { key: b64('a'), revision: '3' })
  const old = stream(base, '/v3/watch', [{ create_request: { key: b64('a'), start_revision: '2' } }])
  record('watch from a compacted revision: created', await old.next())
  record('watch from a compacted revision: canceled', await old.next())
  old.close()

  // lock and election
  await call('grant for lock and election', '/v3/lease/grant', { ID: '3000', TTL: '60' })
  const lock = await call('lock', '/v3/lock/lock', { name: b64('lk'), lease: '3000' })
  await call('unlock', '/v3/lock/unlock', { key: (lock.body as { key: string }).key })
  const campaign = await call('campaign', '/v3/election/campaign', { name: b64('el'), lease: '3000', value: b64('v1') })
  const leader = (campaign.body as { leader: unknown }).leader
  await call('leader', '/v3/election/leader', { name: b64('el') })
  await call('proclaim', '/v3/election/proclaim', { leader, value: b64('v2') })
  const observe = stream(base, '/v3/election/observe', [{ name: b64('el') }])
  record('observe', await observe.next())
  observe.close()
  await call('resign', '/v3/election/resign', { leader })
  await call('no leader', '/v3/election/leader', { name: b64('el') })
  await call('proclaim after resigning', '/v3/election/proclaim', { leader, value: b64('v3') })

  // maintenance, cluster
  const status = await post(base, '/v3/maintenance/status', {})
  steps.push(['status fields', status.status, Object.keys(status.body as object).sort()])
  await call('alarm list (none)', '/v3/maintenance/alarm', { action: 'GET' })
  await call('alarm activate NOSPACE for member 0', '/v3/maintenance/alarm', { action: 'ACTIVATE', memberID: '0', alarm: 'NOSPACE' })
  await call('alarm list', '/v3/maintenance/alarm', { action: 'GET' })
  await call('health under NOSPACE', '/health', '', 'GET')
  await call('put under NOSPACE', '/v3/kv/put', { key: b64('n'), value: 'MQ==' })
  await call('delete under NOSPACE', '/v3/kv/deleterange', { key: b64('c') })
  await call('alarm deactivate', '/v3/maintenance/alarm', { action: 'DEACTIVATE', memberID: '0', alarm: 'NOSPACE' })
  await call('alarm list after', '/v3/maintenance/alarm', { action: 'GET' })
  await call('member list', '/v3/cluster/member/list', {})
  return steps
}

describe('apiserver/etcd/gateway: the JSON gateway, kvlog against etcd 3.4', function () {
  this.timeout(120_000)
  let etcdSteps: Step[]
  let kvlogSteps: Step[]
  let kvlogBase: string
  let stopKvlog: (() => Promise<void>) | undefined

  before(async () => {
    const etcd = await startEtcd()
    try {
      etcdSteps = await script(`http://${etcd.endpoint}`)
    } finally {
      await etcd.stop()
    }
    const kvlog = await startServerProcess(['--etcd-version', '3.4.23'])
    stopKvlog = async () => {
      await kvlog.stop()
      await kvlog.cleanup()
    }
    kvlogBase = `http://${kvlog.grpc}`
    kvlogSteps = await script(kvlogBase)
  })

  after(async () => {
    await stopKvlog?.()
  })

  it('answers every request of the script as etcd does (status and body)', () => {
    expect(kvlogSteps.map((s) => s[0])).to.deep.equal(etcdSteps.map((s) => s[0]))
    for (let i = 0; i < etcdSteps.length; i++) {
      expect(kvlogSteps[i], `${etcdSteps[i][0]}: etcd said ${JSON.stringify(etcdSteps[i])}`).to.deep.equal(etcdSteps[i])
    }
  })

  it('reads a 64-bit lease ID sent as a bare JSON number without losing digits (as etcd3gw sends it)', async () => {
    const grant = await post(kvlogBase, '/v3/lease/grant', { TTL: 60 })
    const id = (grant.body as { ID: string }).ID
    expect(Number.isSafeInteger(Number(id)), `lease ID ${id} is beyond 2^53`).to.equal(false)
    const put = await post(kvlogBase, '/v3/kv/put', `{"key": "${b64('big-lease')}", "value": "${b64('v')}", "lease": ${id}}`)
    expect(put.status).to.equal(200)
    const ttl = await post(kvlogBase, '/v3/kv/lease/timetolive', `{"ID": ${id}, "keys": true}`)
    expect(ttl.status).to.equal(200)
    expect((ttl.body as { ID: string; keys: string[] }).ID).to.equal(id)
    expect((ttl.body as { keys: string[] }).keys).to.deep.equal([b64('big-lease')])
  })

  it('names the client port (host:port, as etcdctl 3.4 can dial it) in MemberList clientURLs, and keeps serving', async () => {
    const a = await post(kvlogBase, '/v3/cluster/member/list', {})
    expect((a.body as { members: Array<{ clientURLs: string[] }> }).members[0].clientURLs).to.deep.equal([new URL(kvlogBase).host])
  })
})
