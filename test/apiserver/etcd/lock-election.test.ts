/**
 * The server-side Lock (v3lockpb) and Election (v3electionpb) services over gRPC, against etcd 3.4 and
 * kvlog: mutual exclusion under 20 contenders (each on its own connection), the lock passing on when the
 * holder's lease expires and when a waiting client goes away, and an election's Campaign, Leader,
 * Observe, Proclaim and Resign. (etcdctl's `lock` and `elect`, and the etcd3 npm client's lock and
 * election, use the client-side recipe over KV and Watch: etcdctl-lease-cases.ts, etcd3-client.test.ts.)
 */
import { expect } from 'chai'
import { credentials, makeGenericClientConstructor, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js'
import { serviceDefinition, type Message } from '../../../apiserver/etcd/proto.js'
import { targets, type Started } from './targets.js'

const LockClient = makeGenericClientConstructor(serviceDefinition('v3lockpb.Lock'), 'Lock')
const ElectionClient = makeGenericClientConstructor(serviceDefinition('v3electionpb.Election'), 'Election')
const KVClient = makeGenericClientConstructor(serviceDefinition('etcdserverpb.KV'), 'KV')
const LeaseClient = makeGenericClientConstructor(serviceDefinition('etcdserverpb.Lease'), 'Lease')
/** Each client on its own connection. */
const OWN_CONNECTION = { 'grpc.use_local_subchannel_pool': 1 }

type Unary = (request: Message, callback: (err: ServiceError | null, response: Message) => void) => { cancel(): void }

interface Pending {
  result: Promise<Message>
  cancel(): void
}

function start(client: Client, method: string, request: Message): Pending {
  let cancel = () => undefined as void
  const result = new Promise<Message>((resolve, reject) => {
    const call = (client as unknown as Record<string, Unary>)[method].call(client, request, (err, response) =>
      err ? reject(err) : resolve(response),
    )
    cancel = () => call.cancel()
  })
  result.catch(() => undefined)
  return { result, cancel }
}

const call = (client: Client, method: string, request: Message) => start(client, method, request).result
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

for (const target of targets) {
  describe(`server-side Lock and Election over gRPC against ${target.name}`, function () {
    this.timeout(60_000)
    let store: Started
    const clients: Client[] = []
    const open = <T extends Client>(
      Ctor: new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options: object) => T,
    ): T => {
      const c = new Ctor(store.endpoint, credentials.createInsecure(), OWN_CONNECTION)
      clients.push(c)
      return c
    }
    const grant = async (ttl: number) => String((await call(open(LeaseClient), 'LeaseGrant', { TTL: ttl })).ID)

    before(async () => {
      store = await target.start()
    })

    after(async () => {
      for (const c of clients) c.close()
      await store?.stop()
    })

    it('20 contenders: one holder at a time, every one gets its turn, keys are name/<lease hex>', async () => {
      let inside = 0
      let most = 0
      const order: string[] = []
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const lease = await grant(30)
          const lock = open(LockClient)
          const held = await call(lock, 'Lock', { name: Buffer.from('mutex'), lease })
          const key = (held.key as Buffer).toString()
          expect(key).to.equal(`mutex/${BigInt(lease).toString(16)}`)
          inside++
          most = Math.max(most, inside)
          await sleep(10)
          order.push(key)
          inside--
          await call(lock, 'Unlock', { key: held.key })
        }),
      )
      expect(most).to.equal(1)
      expect(new Set(order).size).to.equal(20)
    })

    it("the lock passes on when the holder's lease expires", async () => {
      const short = await grant(2)
      const long = await grant(30)
      await call(open(LockClient), 'Lock', { name: Buffer.from('expiring'), lease: short })
      const started = Date.now()
      const next = await call(open(LockClient), 'Lock', { name: Buffer.from('expiring'), lease: long })
      expect((next.key as Buffer).toString()).to.equal(`expiring/${BigInt(long).toString(16)}`)
      expect(Date.now() - started).to.be.above(500)
    })

    it('a waiter whose client goes away leaves the line; the next one gets the lock', async () => {
      const [a, b, c] = [await grant(30), await grant(30), await grant(30)]
      const holder = await call(open(LockClient), 'Lock', { name: Buffer.from('gone'), lease: a })
      const leaving = start(open(LockClient), 'Lock', { name: Buffer.from('gone'), lease: b })
      const waiting = start(open(LockClient), 'Lock', { name: Buffer.from('gone'), lease: c })
      const kv = open(KVClient)
      const keys = async () =>
        ((await call(kv, 'Range', { key: Buffer.from('gone/'), range_end: Buffer.from('gone0') })).kvs as Message[]).map((x) =>
          (x.key as Buffer).toString(),
        )
      for (let i = 0; (await keys()).length < 3; i++) {
        if (i > 200) throw new Error(`contenders did not enter: ${String(await keys())}`)
        await sleep(20)
      }
      leaving.cancel()
      const err = await leaving.result.then(
        () => undefined,
        (e: ServiceError) => e,
      )
      expect(err?.code).to.equal(1) // CANCELLED, on the client side
      for (let i = 0; (await keys()).includes(`gone/${BigInt(b).toString(16)}`); i++) {
        if (i > 200) throw new Error("the canceled waiter's key stayed")
        await sleep(20)
      }
      await call(open(LockClient), 'Unlock', { key: holder.key })
      expect(((await waiting.result).key as Buffer).toString()).to.equal(`gone/${BigInt(c).toString(16)}`)
    })

    it('election: campaign, leader, observe, proclaim, resign hands over; a stale leader cannot proclaim', async () => {
      const [la, lb] = [await grant(30), await grant(30)]
      const election = open(ElectionClient)
      const name = Buffer.from('elect')
      const a = (await call(election, 'Campaign', { name, lease: la, value: Buffer.from('a') })).leader as Message
      const b = start(open(ElectionClient), 'Campaign', { name, lease: lb, value: Buffer.from('b') })
      const leader = await call(election, 'Leader', { name })
      expect(((leader.kv as Message).value as Buffer).toString()).to.equal('a')

      const observed: string[] = []
      const observe = (election as unknown as { Observe(r: Message): ClientReadableStream<Message> }).Observe({ name })
      observe.on('data', (r: Message) => observed.push(((r.kv as Message).value as Buffer).toString()))
      observe.on('error', () => undefined)
      const seen = async (value: string) => {
        for (let i = 0; !observed.includes(value); i++) {
          if (i > 250) throw new Error(`Observe did not show ${value}: ${String(observed)}`)
          await sleep(20)
        }
      }
      await seen('a')
      await call(election, 'Proclaim', { leader: a, value: Buffer.from('a2') })
      await seen('a2')
      await call(election, 'Resign', { leader: a })
      const bLeader = (await b.result).leader as Message
      expect((bLeader.key as Buffer).toString()).to.equal(`elect/${BigInt(lb).toString(16)}`)
      await seen('b')
      const stale = await call(election, 'Proclaim', { leader: a, value: Buffer.from('x') }).then(
        () => undefined,
        (e: ServiceError) => e,
      )
      expect([stale?.code, stale?.details]).to.deep.equal([2, 'election: not leader'])
      observe.cancel()
      await call(election, 'Resign', { leader: bLeader })
      const none = await call(election, 'Leader', { name }).then(
        () => undefined,
        (e: ServiceError) => e,
      )
      expect([none?.code, none?.details]).to.deep.equal([2, 'election: no leader'])
    })
  })
}
