/**
 * The `etcd3` npm client (Microsoft's) against every target: CRUD, txn, watch, lease, lock, election and
 * STM. Each target gets a fresh store and the same sequence, so revisions are asserted exactly.
 */
import { expect } from 'chai'
import { Etcd3, EtcdLockFailedError, type IKeyValue, type Watcher } from 'etcd3'
import { targets, type Started } from './targets.js'
import { sleep, waitFor } from '../../support/wait.js'

interface Seen {
  type: 'put' | 'delete'
  key: string
  value: string
  modRevision: string
  prev: string | undefined
}

function record(watcher: Watcher): Seen[] {
  const seen: Seen[] = []
  const push = (type: Seen['type']) => (kv: IKeyValue, prev?: IKeyValue) =>
    seen.push({ type, key: kv.key.toString(), value: kv.value.toString(), modRevision: kv.mod_revision, prev: prev?.value.toString() })
  watcher.on('put', push('put'))
  watcher.on('delete', push('delete'))
  return seen
}

for (const target of targets) {
  describe(`etcd3 npm client against ${target.name}`, function () {
    this.timeout(30_000)
    let store: Started
    let client: Etcd3

    before(async () => {
      store = await target.start()
      client = new Etcd3({ hosts: `http://${store.endpoint}` })
    })

    after(async () => {
      client?.close()
      await store?.stop()
    })

    it('CRUD: put, get, getAll with prefix/limit/sort, get at a revision, delete with previous', async () => {
      expect((await client.put('crud/a').value('1').exec()).header.revision).to.equal('2')
      await client.put('crud/b').value('2')
      await client.put('crud/c').value('3')
      const prev = await client.put('crud/a').value('4').getPrevious()
      expect(prev.value.toString()).to.equal('1')
      expect(await client.get('crud/a').string()).to.equal('4')
      expect(await client.get('crud/missing').string()).to.equal(null)
      expect(await client.getAll().prefix('crud/').strings()).to.deep.equal({ 'crud/a': '4', 'crud/b': '2', 'crud/c': '3' })
      expect(await client.getAll().prefix('crud/').count()).to.equal(3)
      expect(await client.getAll().prefix('crud/').sort('Value', 'Descend').limit(2).keys()).to.deep.equal(['crud/a', 'crud/c'])
      expect(await client.get('crud/a').revision(2).string()).to.equal('1')
      const kv = (await client.get('crud/a').exec()).kvs[0]!
      expect([kv.create_revision, kv.mod_revision, kv.version]).to.deep.equal(['2', '5', '2'])
      const deleted = await client.delete().key('crud/b').getPrevious()
      expect(deleted.map((d) => d.value.toString())).to.deep.equal(['2'])
      expect((await client.delete().prefix('crud/').exec()).deleted).to.equal('2')
      expect(await client.getAll().prefix('crud/').keys()).to.deep.equal([])
      expect((await client.get('crud/a').exec()).header.revision).to.equal('7')
    })

    it('txn: compares on value, version, mod and create; then and else branches', async () => {
      await client.put('tx/k').value('v') // rev 8
      const ok = await client
        .if('tx/k', 'Value', '==', 'v')
        .and('tx/k', 'Version', '==', 1)
        .and('tx/k', 'Mod', '==', 8)
        .then(client.put('tx/k').value('w'))
        .else(client.put('tx/else').value('1'))
        .commit()
      expect(ok.succeeded).to.equal(true)
      expect(ok.header.revision).to.equal('9')
      const no = await client.if('tx/k', 'Create', '>', 8).then(client.put('tx/k').value('never')).else(client.get('tx/k')).commit()
      expect(no.succeeded).to.equal(false)
      expect(no.header.revision).to.equal('9') // a read-only branch writes nothing
      expect(no.responses[0]!.response_range!.kvs[0]!.value.toString()).to.equal('w')
      const create = await client.if('tx/new', 'Mod', '==', 0).then(client.put('tx/new').value('1')).commit()
      expect([create.succeeded, create.header.revision]).to.deep.equal([true, '10'])
      const again = await client.if('tx/new', 'Mod', '==', 0).then(client.put('tx/new').value('2')).commit()
      expect(again.succeeded).to.equal(false)
      expect(await client.get('tx/new').string()).to.equal('1')
    })

    it('watch: live events with previous values, replay from a start revision, cancel', async () => {
      const live = await client.watch().prefix('w/').withPreviousKV().create()
      const seen = record(live)
      await client.put('w/a').value('1') // 11
      await client.put('w/a').value('2') // 12
      await client.put('other').value('x') // 13
      await client.delete().key('w/a') // 14
      await waitFor('3 events', () => seen.length >= 3)
      expect(seen).to.deep.equal([
        { type: 'put', key: 'w/a', value: '1', modRevision: '11', prev: undefined },
        { type: 'put', key: 'w/a', value: '2', modRevision: '12', prev: '1' },
        { type: 'delete', key: 'w/a', value: '', modRevision: '14', prev: '2' },
      ])
      await live.cancel()
      await client.put('w/b').value('after cancel') // 15
      const replay = await client.watch().key('w/a').startRevision('12').create()
      const replayed = record(replay)
      await waitFor('2 replayed events', () => replayed.length >= 2)
      expect(replayed.map((e) => [e.type, e.modRevision])).to.deep.equal([
        ['put', '12'],
        ['delete', '14'],
      ])
      await replay.cancel()
      expect(seen).to.have.length(3)
    })

    it('lease: grant, attach, keepaliveOnce, automatic keep-alive past the TTL, revoke deletes the keys', async () => {
      const lease = client.lease(2)
      const id = await lease.grant()
      expect(BigInt(id) > 0n).to.equal(true)
      await lease.put('lease/a').value('1') // 16
      await lease.put('lease/b').value('2') // 17
      const kv = (await client.get('lease/a').exec()).kvs[0]!
      expect(kv.lease).to.equal(id)
      expect((await lease.keepaliveOnce()).TTL).to.equal('2')
      await sleep(3000) // past the TTL: the client's keep-alive stream keeps it alive
      expect(await client.getAll().prefix('lease/').keys()).to.deep.equal(['lease/a', 'lease/b'])
      await lease.revoke() // 18
      expect(await client.getAll().prefix('lease/').keys()).to.deep.equal([])
      expect((await client.get('lease/a').exec()).header.revision).to.equal('18')
      expect(lease.revoked()).to.equal(true)
    })

    it('lock: a held lock refuses a second holder until released; critical sections never overlap', async () => {
      const first = await client.lock('locks/one').ttl(5).acquire()
      let refused: unknown
      await client
        .lock('locks/one')
        .ttl(5)
        .acquire()
        .catch((e: unknown) => (refused = e))
      expect(refused).to.be.instanceOf(EtcdLockFailedError)
      await first.release()
      // etcd3's lock is a try-lock: workers retry until they get it.
      let inside = 0
      let maxInside = 0
      let done = 0
      await Promise.all(
        [0, 1, 2, 3].map(async () => {
          while (true) {
            try {
              await client
                .lock('locks/one')
                .ttl(5)
                .do(async () => {
                  inside++
                  maxInside = Math.max(maxInside, inside)
                  await sleep(30)
                  inside--
                })
              done++
              return
            } catch (e) {
              if (!(e instanceof EtcdLockFailedError)) throw e
              await sleep(10)
            }
          }
        }),
      )
      expect([done, maxInside]).to.deep.equal([4, 1])
      expect(await client.getAll().prefix('locks/').keys()).to.deep.equal([])
    })

    it('election: one leader at a time, observed; resign hands over', async () => {
      const election = client.election('elections/e', 5)
      const observer = await election.observe()
      const changes: (string | undefined)[] = []
      observer.on('change', (v) => changes.push(v))
      const a = election.campaign('alice')
      await a.wait()
      // etcd3's observer takes the last put of the first watch response as the leader: let it see alice
      // before bob campaigns, or a late-created watch that catches up both puts at once names bob.
      await waitFor('observer sees alice', () => changes.includes('alice'))
      const b = election.campaign('bob')
      let bobElected = false
      b.on('elected', () => (bobElected = true))
      await sleep(300)
      expect(bobElected).to.equal(false)
      expect(await election.leader()).to.equal('alice')
      await a.proclaim('alice2')
      await waitFor('observer sees alice2', () => changes.includes('alice2'))
      await a.resign()
      await b.wait()
      expect(await election.leader()).to.equal('bob')
      await waitFor('observer sees bob', () => changes.includes('bob'))
      expect(changes.filter((c) => c !== undefined)).to.deep.equal(['alice', 'alice2', 'bob'])
      await b.resign()
      await observer.cancel()
    })

    it('STM: concurrent read-modify-write transactions retry on conflict and lose no update', async () => {
      await client.put('stm/counter').value('0')
      const n = 8
      await Promise.all(
        Array.from({ length: n }, () =>
          client.stm({ retries: 50 }).transact(async (tx) => {
            const v = Number(await tx.get('stm/counter').string())
            await sleep(5)
            await tx.put('stm/counter').value(String(v + 1))
          }),
        ),
      )
      expect(await client.get('stm/counter').string()).to.equal(String(n))
      const kv = (await client.get('stm/counter').exec()).kvs[0]!
      expect(kv.version).to.equal(String(n + 1))
    })
  })
}
