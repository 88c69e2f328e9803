/**
 * The client with several endpoints, against real `kvlog serve` processes behind TCP proxies: it sticks
 * to a member, moves to the next on a refused connection or a 503 (not on an application error), reports
 * unreachable members with their cause, and its watch resumes on the next member from its last revision,
 * exactly (two proxies to one server stand for two members sharing revisions).
 */
import { expect } from 'chai'
import { KvlogClient, KvlogClientError, OutcomeUnknownError, UnreachableError } from '../../clients/index.js'
import { sleep, waitFor } from '../support/wait.js'
import { closedPort } from './tcp-proxy.js'
import { collect, fullHistory, processFixtures, show, writer } from './watch-helpers.js'

describe('KvlogClient with several endpoints (real servers)', function () {
  this.timeout(40_000)
  const { server, proxyTo, track } = processFixtures()

  it('sticks to the first member, moves on when it refuses connections, and stays on the healthy one', async () => {
    const [a, b] = await Promise.all([server(), server()])
    const [pa, pb] = await Promise.all([proxyTo(a), proxyTo(b)])
    const kv = new KvlogClient({ endpoints: [pa.url, pb.url] })
    await kv.put('/f/1', 'a')
    await kv.get('/f/1')
    expect(kv.endpoint).to.equal(pa.url)
    expect(pb.accepted).to.equal(0)

    const aUrl = pa.url
    await pa.down()
    // Let the client's pooled keep-alive connection see its close: a write sent on a connection that dies
    // under it has an unknown outcome (the next test), and this one is about refused connections.
    await sleep(100)
    // A write whose connection is refused was never sent: it goes to the next member.
    await kv.put('/f/2', 'b')
    expect(kv.endpoint).to.equal(pb.url)
    expect((await new KvlogClient({ endpoint: b.http }).get('/f/2'))?.value.toString()).to.equal('b')
    expect(await new KvlogClient({ endpoint: a.http }).get('/f/2')).to.equal(undefined)

    await pa.up()
    expect(pa.url).to.equal(aUrl)
    const before = pa.accepted
    await kv.put('/f/3', 'c')
    await kv.get('/f/3')
    expect(kv.endpoint).to.equal(pb.url)
    expect(pa.accepted).to.equal(before)
    expect(kv.endpoints.switches).to.equal(1)
  })

  it('a 503 moves to the next member; an application error does not', async () => {
    const b = await server()
    const [pa, pb] = await Promise.all([proxyTo(b), proxyTo(b)])
    pa.declineWith503 = true
    const kv = new KvlogClient({ endpoints: [pa.url, pb.url] })
    const r = await kv.put('/f503/k', 'v')
    expect(r.revision).to.be.greaterThan(1)
    expect(pa.count('PUT /v1/kv')).to.equal(1)
    expect(kv.endpoint).to.equal(pb.url)

    const err = await kv.put('', 'v').catch((e: unknown) => e)
    expect(err).to.be.instanceOf(KvlogClientError)
    expect((err as KvlogClientError).code).to.equal('EMPTY_KEY')
    expect(kv.endpoint).to.equal(pb.url)
    expect(pa.count('PUT /v1/kv')).to.equal(1)

    // Every member declines: the last 503 is the answer.
    pb.declineWith503 = true
    pb.cutAll()
    const all = await kv.get('/f503/k').catch((e: unknown) => e)
    expect((all as KvlogClientError).code).to.equal('UNAVAILABLE')
    expect((all as KvlogClientError).status).to.equal(503)
  })

  it('a 504 OUTCOME_UNKNOWN (a cluster write that may have been applied) is not sent to another member', async () => {
    const s = await server()
    const [pa, pb] = await Promise.all([proxyTo(s), proxyTo(s)])
    pa.declineWith503 = true
    pa.declineStatus = 504
    pa.declineCode = 'OUTCOME_UNKNOWN'
    const kv = new KvlogClient({ endpoints: [pa.url, pb.url] })
    const err = await kv.put('/fou/k', 'v').catch((e: unknown) => e)
    expect(err).to.be.instanceOf(OutcomeUnknownError)
    expect(pb.count('PUT /v1/kv')).to.equal(0)
    // 503 NOT_APPLIED (nothing was written) goes on to the next member.
    pa.declineStatus = 503
    pa.declineCode = 'NOT_APPLIED'
    expect((await kv.put('/fou/k', 'w')).revision).to.be.greaterThan(1)
    expect(pb.count('PUT /v1/kv')).to.equal(1)
  })

  it('a write whose outcome is unknown is not retried on another member, but later requests go there', async () => {
    const s = await server()
    const [pa, pb] = await Promise.all([proxyTo(s), proxyTo(s)])
    const kv = new KvlogClient({ endpoints: [pa.url, pb.url] })
    pa.dropResponses = 1
    const err = await kv.put('/fu/k', 'v').catch((e: unknown) => e)
    expect(err).to.be.instanceOf(OutcomeUnknownError)
    expect(pb.count('PUT /v1/kv')).to.equal(0)
    expect(kv.endpoint).to.equal(pb.url)
    const got = await kv.get('/fu/k')
    expect(got?.version).to.equal(1)
    expect(pb.count('GET /v1/kv')).to.equal(1)
  })

  it('members nobody listens on: UnreachableError naming each member and the cause', async () => {
    const [p1, p2] = await Promise.all([closedPort(), closedPort()])
    const one = await new KvlogClient({ endpoint: `127.0.0.1:${p1}` }).get('/x').catch((e: unknown) => e)
    expect(one).to.be.instanceOf(UnreachableError)
    expect((one as UnreachableError).code).to.equal('UNREACHABLE')
    expect((one as Error).message).to.equal(`cannot reach http://127.0.0.1:${p1}: connect ECONNREFUSED 127.0.0.1:${p1}`)
    const both = await new KvlogClient({ endpoints: [`http://127.0.0.1:${p1}`, `127.0.0.1:${p2}`] }).put('/x', 'y').catch((e: unknown) => e)
    expect(both).to.be.instanceOf(UnreachableError)
    expect((both as Error).message)
      .to.contain(`http://127.0.0.1:${p1}: connect ECONNREFUSED`)
      .and.contain(`http://127.0.0.1:${p2}: connect ECONNREFUSED`)
    // A port fetch refuses to use is reported as such, not as "undefined".
    const blocked = await new KvlogClient({ endpoint: 'http://127.0.0.1:1' }).get('/x').catch((e: unknown) => e)
    expect((blocked as Error).message).to.equal("cannot reach http://127.0.0.1:1: the port is on fetch's list of blocked ports")
  })

  it('a watch resumes on the next member from its last revision: every event exactly once across the switch', async () => {
    const s = await server()
    const [p1, p2] = await Promise.all([proxyTo(s), proxyTo(s)])
    const direct = new KvlogClient({ endpoint: s.http })
    const start = ((await direct.status()).revision as number) + 1
    const client = new KvlogClient({ endpoints: [p1.url, p2.url] })
    const w = track(client.watch('/fw/', { prefix: true, startRevision: start, prevKv: true, minBackoffMs: 20, maxBackoffMs: 200 }))
    const got = collect(w)
    const wr = writer(() => direct, '/fw/k', { pauseMs: 3 })
    await waitFor('events through the first member', () => got.events().length >= 40)
    expect(w.endpoint).to.equal(p1.url)
    expect(p2.accepted).to.equal(0)

    // The first member goes away while writes continue.
    await p1.down()
    const cutAt = wr.last
    await waitFor('writes after the switch', () => wr.last > cutAt + 60)
    await wr.stop()
    await direct.put('/fw/last', 'end')
    const end = (await direct.status()).revision as number
    await waitFor('the watch to catch up on the second member', () => (w.nextRevision ?? 0) > end)
    w.close()
    expect(await got.done).to.equal(undefined)
    expect(w.reconnects).to.be.at.least(1)
    expect(w.endpoint).to.equal(p2.url)
    expect(p2.accepted).to.be.at.least(1)
    const history = await fullHistory(direct, '/fw/', start)
    expect(history.length).to.be.greaterThan(100)
    expect(got.events().map(show)).to.deep.equal(history)
  })

  it('connectTimeoutMs: a watch no member ever answered stops with UNREACHABLE; one that was created resumes past it', async () => {
    const port = await closedPort()
    const never = track(
      new KvlogClient({ endpoint: `127.0.0.1:${port}` }).watch('/w', { connectTimeoutMs: 400, minBackoffMs: 20, maxBackoffMs: 100 }),
    )
    const t0 = Date.now()
    const failed = await collect(never).done
    expect(failed).to.be.instanceOf(UnreachableError)
    expect((failed as UnreachableError).code).to.equal('UNREACHABLE')
    expect(failed!.message).to.contain('ECONNREFUSED')
    expect(Date.now() - t0).to.be.below(5000)

    const s = await server()
    const p = await proxyTo(s)
    const direct = new KvlogClient({ endpoint: s.http })
    const w = track(
      new KvlogClient({ endpoint: p.url }).watch('/wc/', { prefix: true, connectTimeoutMs: 300, minBackoffMs: 20, maxBackoffMs: 100 }),
    )
    const got = collect(w)
    await waitFor('the watch to be created', () => w.nextRevision !== undefined)
    p.refuse = true
    p.cutAll()
    await new Promise((r) => setTimeout(r, 800))
    p.refuse = false
    const { revision } = await direct.put('/wc/a', '1')
    await waitFor('the event after the outage', () => got.events().length === 1)
    expect(got.events()[0].revision).to.equal(revision)
  })
})
