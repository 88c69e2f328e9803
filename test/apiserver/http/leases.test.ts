/**
 * The lease routes of the native HTTP API against a real `kvlog serve` process (short minimum TTL and a
 * fast expiry check so expiry is seen in about a second): grant, list, time to live with keys, keep-alive,
 * revoke deleting the keys in one revision, expiry deleting them by itself, 64-bit ids kept exact, and
 * every bad input with its stable code.
 */
import { expect } from 'chai'
import { b64, expectError, ok, useServer, type Reply } from './helpers.js'

interface GrantBody {
  header: { revision: number }
  id: string
  ttl: number
}
interface TtlBody {
  header: { revision: number }
  id: string
  ttl: number
  grantedTtl: number
  keys?: Array<{ key?: string; keyBase64?: string }>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('native HTTP API: /v1/leases (real process)', function () {
  this.timeout(30_000)
  const server = useServer(['--lease-min-ttl', '1', '--lease-check-interval', '50'])
  const api = () => server().api
  const grant = (body: unknown): Promise<Reply<GrantBody>> => api().request<GrantBody>('POST', '/v1/leases', { json: body })
  const ttl = (id: string, query?: Record<string, string>): Promise<Reply<TtlBody>> => api().get<TtlBody>(`/v1/leases/${id}`, query)

  it('grants (server-picked and client-chosen 64-bit ids, exact), lists, reads the TTL and keys, keeps alive and revokes', async () => {
    const picked = ok(await grant({ ttl: 60 }))
    expect(picked.id).to.match(/^[1-9][0-9]*$/)
    expect(picked.ttl).to.equal(60)
    expect(picked.header.revision).to.be.a('number')
    // Above 2^53: a JSON number would round it; the decimal string keeps every digit.
    const big = '9223372036854775807'
    expect(ok(await grant({ ttl: 30, id: big }))).to.include({ id: big, ttl: 30 })
    // Below the minimum TTL: raised to it.
    const short = ok(await grant({ ttl: 0, id: '77' }))
    expect(short).to.include({ id: '77', ttl: 1 })

    const list = ok(await api().get<{ leases: Array<{ id: string }> }>('/v1/leases'))
    expect(list.leases.map((l) => l.id)).to.include.members([picked.id, big])

    const binary = Buffer.from([...Buffer.from('/lease/'), 0xff])
    const r1 = ok(await api().put({ key: '/lease/a', value: '1', lease: big })).header.revision
    ok(await api().put({ keyBase64: b64(binary), value: '2', lease: big }))
    const kv = ok(await api().range({ key: '/lease/a' })).kvs[0]
    expect(kv.lease).to.equal(big)

    const t = ok(await ttl(big, { keys: 'true' }))
    expect(t).to.include({ id: big, grantedTtl: 30 })
    expect(t.ttl).to.be.within(25, 30)
    expect(t.keys).to.deep.equal([{ key: '/lease/a' }, { keyBase64: b64(binary) }])
    expect(ok(await ttl(big))).to.not.have.property('keys')

    const k = ok(await api().request<GrantBody>('POST', `/v1/leases/${big}/keepalive`))
    expect(k).to.include({ id: big, ttl: 30 })

    // Revoke: both keys go in one new revision.
    const revoked = ok(await api().request<{ header: { revision: number } }>('DELETE', `/v1/leases/${big}`))
    expect(revoked).to.deep.equal({ header: { revision: r1 + 2 } })
    expect(ok(await api().range({ key: '/lease/', prefix: true })).count).to.equal(0)
    const history = ok(await api().history({ key: '/lease/', prefix: true }))
    expect(history.events.filter((e) => e.type === 'DELETE').map((e) => e.revision)).to.deep.equal([r1 + 2, r1 + 2])
    expectError(await ttl(big), 404, 'LEASE_NOT_FOUND')

    // A lease without keys: revoking it writes nothing.
    const before = await api().revision()
    expect(ok(await api().request('DELETE', `/v1/leases/${picked.id}`))).to.deep.equal({ header: { revision: before } })
    const after = ok(await api().get<{ leases: Array<{ id: string }> }>('/v1/leases')).leases.map((l) => l.id)
    expect(after).to.not.include(picked.id)
    expect(after).to.not.include(big)
  })

  it('an expired lease deletes its keys by itself, in one revision', async () => {
    const { id } = ok(await grant({ ttl: 1 }))
    ok(await api().put({ key: '/exp/a', value: 'x', lease: id }))
    const r = ok(await api().put({ key: '/exp/b', value: 'y', lease: id })).header.revision
    ok(await api().put({ key: '/exp/keep', value: 'no lease' }))
    const deadline = Date.now() + 8_000
    while (ok(await api().range({ key: '/exp/', prefix: true })).count > 1) {
      expect(Date.now(), 'the lease did not expire in time').to.be.below(deadline)
      await sleep(100)
    }
    expect(ok(await api().range({ key: '/exp/', prefix: true })).kvs.map((x) => x.key)).to.deep.equal(['/exp/keep'])
    expectError(await ttl(id), 404, 'LEASE_NOT_FOUND')
    const deletes = ok(await api().history({ key: '/exp/', prefix: true })).events.filter((e) => e.type === 'DELETE')
    expect(deletes.map((e) => e.kv.key)).to.deep.equal(['/exp/a', '/exp/b'])
    expect(deletes[0].revision).to.equal(deletes[1].revision)
    expect(deletes[0].revision).to.be.above(r + 1)
  })

  it('rejects bad grants: missing or non-integer ttl, too large a ttl, a bad or taken id, unknown fields', async () => {
    ok(await grant({ ttl: 60, id: '4242' }))
    const cases: Array<[unknown, number, string]> = [
      [{}, 400, 'INVALID_ARGUMENT'],
      [{ ttl: '10' }, 400, 'INVALID_ARGUMENT'],
      [{ ttl: 1.5 }, 400, 'INVALID_ARGUMENT'],
      [{ ttl: -1 }, 400, 'INVALID_ARGUMENT'],
      [{ ttl: 9_000_000_001 }, 400, 'LEASE_TTL_TOO_LARGE'],
      [{ ttl: 10, id: 'abc' }, 400, 'INVALID_ARGUMENT'],
      [{ ttl: 10, id: '-5' }, 400, 'INVALID_ARGUMENT'],
      [{ ttl: 10, id: '18446744073709551616' }, 400, 'INVALID_ARGUMENT'],
      [{ ttl: 10, id: '9223372036854775808' }, 400, 'INVALID_ARGUMENT'],
      [{ ttl: 10, id: '4242' }, 409, 'LEASE_EXISTS'],
      [{ ttl: 10, extra: true }, 400, 'INVALID_ARGUMENT'],
      [[10], 400, 'INVALID_ARGUMENT'],
    ]
    const replies = await Promise.all(cases.map(([body]) => grant(body)))
    replies.forEach((reply, i) => expectError(reply, cases[i][1], cases[i][2]))
    expect(expectError(replies[0], 400, 'INVALID_ARGUMENT').details).to.deep.include({ field: 'ttl' })
    expect(expectError(replies[5], 400, 'INVALID_ARGUMENT').details).to.deep.include({ field: 'id' })
  })

  it('rejects bad ids in the path and answers 404 LEASE_NOT_FOUND for leases that do not exist', async () => {
    const missing = '123456789'
    const [badGet, negGet, hugeGet, badKeys, unknownQuery, badDelete, badKeep, missGet, missDelete, missKeep, missPut] = await Promise.all([
      ttl('abc'),
      ttl('-1'),
      ttl('18446744073709551616'),
      ttl(missing, { keys: 'maybe' }),
      ttl(missing, { foo: '1' }),
      api().request('DELETE', '/v1/leases/1x'),
      api().request('POST', '/v1/leases/abc/keepalive'),
      ttl(missing),
      api().request('DELETE', `/v1/leases/${missing}`),
      api().request('POST', `/v1/leases/${missing}/keepalive`),
      api().put({ key: '/nolease', value: 'v', lease: missing }),
    ])
    for (const r of [badGet, negGet, hugeGet, badKeys, unknownQuery, badDelete, badKeep]) expectError(r, 400, 'INVALID_ARGUMENT')
    expect(expectError(badGet, 400, 'INVALID_ARGUMENT').details).to.deep.include({ field: 'id' })
    for (const r of [missGet, missDelete, missKeep, missPut]) expectError(r, 404, 'LEASE_NOT_FOUND')
    expect(ok(await api().range({ key: '/nolease' })).count).to.equal(0)
  })
})
