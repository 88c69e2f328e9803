/**
 * Leadership with in-process members over three real nats-servers:
 * - a leader whose lease entry someone else overwrote (its compare-and-set fails at once, on every
 *   renewal) steps down while that entry is still alive, leaves the forward subjects, and a write
 *   through it is refused (NOT_APPLIED) without anything reaching the stream;
 * - the leader takes forwarded writes on its epoch's own subject (and on the shared one members of the
 *   previous version use); an older epoch's subject has no responders;
 * - the space check's NOSPACE verdict counts only on the leader: a follower's neither raises nor clears it;
 * - etcd's alarm entries activated or deactivated through one member are what every member lists.
 */
import { expect } from 'chai'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, headers, type NatsConnection } from 'nats'
import { Alarms } from '../../../apiserver/etcd/alarms.js'
import { openJetStreamLog, type JetStreamLog } from '../../../log/jetstream/jetstream-log.js'
import { decode, encode } from '../../../log/jetstream/messages.js'
import { clusterNames, type JetStreamLogOptions } from '../../../log/jetstream/options.js'
import { memberOptions } from '../../support/cluster-members.js'
import { startNatsCluster, type NatsCluster } from '../../support/nats-cluster.js'
import { waitFor } from '../../support/wait.js'

describe('JetStreamLog: leadership', function () {
  this.timeout(90_000)
  let nats: NatsCluster
  let nc: NatsConnection
  let dir: string
  const open = new Set<JetStreamLog>()
  before(async () => {
    nats = await startNatsCluster()
    nc = await connect({ servers: nats.urls.split(',') })
    dir = await mkdtemp(join(tmpdir(), 'kvlog-js-election-'))
  })
  after(async () => {
    for (const log of open) await log.close().catch(() => undefined)
    await nc?.close()
    await nats?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  const start = async (cluster: string, name: string, extra: Partial<JetStreamLogOptions> = {}) => {
    const log = await openJetStreamLog(
      memberOptions(nats.urls, cluster, name, join(dir, cluster, name), { natsReplicas: 1, clusterRequestTimeout: 1000, ...extra }),
    )
    open.add(log)
    return log
  }
  const code = (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'resolved',
      (err: { code?: string }) => err.code ?? 'none',
    )

  it('a leader whose lease entry was taken steps down while that entry lives, and takes no writes', async () => {
    const names = clusterNames('deposed')
    const a = await start('deposed', 'a')
    await waitFor('a to lead and be on the roster', () => a.isLeading && a.roster.includes('a'), 20_000)
    await a.put('k', 'v1')
    const epoch = (await a.status()).cluster!.epoch
    const jsm = await nc.jetstreamManager()
    const lastBefore = (await jsm.streams.info(names.stream)).state.last_seq

    // Someone else holds the lease: its member is alive (so a waits its entry out instead of ending it)
    // and renews it, so the entry never expires while this test looks.
    const alive = nc.subscribe(`${names.alive}.x`, { callback: (err, msg) => void (err === null && msg.respond()) })
    const kv = await nc.jetstream().views.kv(names.bucket)
    let held = await kv.put('leader', encode({ member: 'x', epoch: 1_000_000 }))
    const renewing = setInterval(() => {
      void kv.put('leader', encode({ member: 'x', epoch: 1_000_000 })).then((r) => (held = r))
    }, 300)
    try {
      await waitFor('a to step down', () => !a.isLeading, 30_000)
      const entry = await kv.get('leader')
      expect(entry?.revision, 'the entry that replaced a').to.be.at.least(held)
      // Nobody serves a's epoch any more, nor the shared subject of members from before epochs: a
      // forwarded write finds no responders.
      for (const subject of [`${names.forward}.${epoch}`, names.forward]) {
        const forwarded = await nc.request(subject, Buffer.from('{}'), { timeout: 2000 }).then(
          () => 'answered',
          (err: { code?: string }) => err.code,
        )
        expect(forwarded, subject).to.equal('503')
      }
      expect(await code(a.put('k', 'v2'))).to.equal('NOT_APPLIED')
      expect((await jsm.streams.info(names.stream)).state.last_seq).to.equal(lastBefore)
      expect(a.isLeading).to.equal(false)
    } finally {
      clearInterval(renewing)
      alive.unsubscribe()
    }
    // Once the foreign entry expires, a leads again and writes.
    await waitFor('a to lead again', () => a.isLeading, 30_000)
    await a.put('k', 'v3')
  })

  it("the leader takes forwarded writes on its epoch's subject and the shared one", async () => {
    const names = clusterNames('forward')
    const a = await start('forward', 'a')
    await waitFor('a to lead and be on the roster', () => a.isLeading && a.roster.includes('a'), 20_000)
    const epoch = (await a.status()).cluster!.epoch
    const send = async (subject: string, rid: string, within?: number) => {
      const h = headers()
      if (within !== undefined) h.set('Kvlog-Within', String(within))
      const tagged = { rid, cmd: { type: 'txn', request: { success: [{ type: 'put', key: rid, value: 'v' }] } } }
      return nc.request(subject, encode(tagged), { timeout: 5000, headers: h }).then(
        (m) => decode<{ seq?: number; error?: { code: string } }>(m.data),
        (err: { code?: string }) => ({ nats: err.code }),
      )
    }
    expect(await send(`${names.forward}.${epoch}`, 't.1'))
      .to.have.property('seq')
      .that.is.a('number')
    // Members of the previous version know no epochs and use the shared subject.
    expect(await send(names.forward, 't.2'))
      .to.have.property('seq')
      .that.is.a('number')
    // An older epoch's subject has no leader behind it.
    expect(await send(`${names.forward}.${epoch - 1}`, 't.3')).to.deep.equal({ nats: '503' })
    await waitFor('a to apply both', () => a.revision >= 3, 20_000)
  })

  it('the space check raises and clears NOSPACE only on the leader', async () => {
    const a = await start('space', 'a')
    await waitFor('a to lead', () => a.isLeading, 20_000)
    const b = await start('space', 'b')
    await a.put('k', 'v')
    await b.setAlarm('NOSPACE', true, { automatic: true })
    await b.get('k')
    expect(a.alarms()).to.deep.equal([])
    expect(b.alarms()).to.deep.equal([])
    await a.setAlarm('NOSPACE', true, { automatic: true })
    await waitFor('b to apply the alarm', () => b.alarms().includes('NOSPACE'), 20_000)
    await b.setAlarm('NOSPACE', false, { automatic: true })
    await a.get('k')
    expect(a.alarms()).to.deep.equal(['NOSPACE'])
    // An operator's clear goes through any member.
    await b.setAlarm('NOSPACE', false)
    await waitFor('a to apply the clear', () => a.alarms().length === 0, 20_000)
  })

  it('every member lists the etcd alarms activated through another one', async () => {
    const a = await start('alarms', 'a')
    await waitFor('a to lead', () => a.isLeading, 20_000)
    const b = await start('alarms', 'b')
    const [viaA, viaB] = [new Alarms('1', (l) => a.onMeta(l)), new Alarms('2', (l) => b.onMeta(l))]
    expect(await viaB.list(b)).to.deep.equal([])
    await viaA.activate(a, '1', 'CORRUPT')
    await waitFor('b to apply the alarm record', () => b.revision >= a.revision, 20_000)
    await b.get('k')
    expect(await viaB.list(b)).to.deep.equal([{ memberID: '1', alarm: 'CORRUPT' }])
    await viaB.deactivate(b, '1', 'CORRUPT')
    await a.get('k')
    expect(await viaA.list(a)).to.deep.equal([])
  })
})
