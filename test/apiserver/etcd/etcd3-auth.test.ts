/**
 * The `etcd3` npm client's auth API against a real etcd 3.4 and kvlog: users and roles management, an
 * auth-enabled connection (its `auth` option) that refreshes its token by itself when the server has
 * let it expire (both servers run with a 1 s token TTL), and refusals mapped to its typed errors.
 */
import { expect } from 'chai'
import {
  Etcd3,
  EtcdAuthenticationFailedError,
  EtcdPermissionDeniedError,
  EtcdRoleExistsError,
  EtcdRoleNotFoundError,
  EtcdRoleNotGrantedError,
  EtcdUserExistsError,
  EtcdUserNotFoundError,
  Range,
} from 'etcd3'
import { startEtcd } from '../../support/etcd-process.js'
import { startServerProcess } from '../../support/server-process.js'
import { sleep } from '../../support/wait.js'

interface Started {
  endpoint: string
  stop(): Promise<void>
}

const servers: Array<{ name: string; start(): Promise<Started> }> = [
  {
    name: 'etcd',
    async start() {
      const etcd = await startEtcd({ args: ['--auth-token-ttl', '1'] })
      return { endpoint: etcd.endpoint, stop: etcd.stop }
    },
  },
  {
    name: 'kvlog',
    async start() {
      const s = await startServerProcess(['--auth-token-ttl', '1s', '--auth-password-hash-cost', '10'])
      return {
        endpoint: s.grpc,
        stop: async () => {
          await s.stop()
          await s.cleanup()
        },
      }
    },
  },
]

/** The class name of what a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p
    return 'resolved'
  } catch (err) {
    return (err as Error).constructor.name
  }
}

for (const server of servers) {
  describe(`etcd3 npm client auth against ${server.name}`, function () {
    this.timeout(30_000)
    let store: Started
    let admin: Etcd3
    const clients: Etcd3[] = []
    const as = (username: string, password: string) => {
      const c = new Etcd3({ hosts: `http://${store.endpoint}`, auth: { username, password } })
      clients.push(c)
      return c
    }

    before(async () => {
      store = await server.start()
      admin = new Etcd3({ hosts: `http://${store.endpoint}` })
      clients.push(admin)
    })

    after(async () => {
      for (const c of clients) c.close()
      await store?.stop()
    })

    it('manages users and roles, with typed errors for duplicates and unknown names', async () => {
      await admin.user('root').create('rootpw')
      await admin.role('root').create()
      await admin.user('root').addRole('root')
      await admin.user('alice').create('alicepw')
      await admin.role('app').create()
      await admin.role('app').grant({ permission: 'Readwrite', range: Range.prefix('app/') })
      await admin.role('app').grant({ permission: 'Read', key: 'cfg' })
      await admin.user('alice').addRole('app')
      expect((await admin.getUsers()).map((u) => u.name)).to.deep.equal(['alice', 'root'])
      expect((await admin.getRoles()).map((r) => r.name)).to.deep.equal(['app', 'root'])
      expect((await admin.user('alice').roles()).map((r) => r.name)).to.deep.equal(['app'])
      const perms = await admin.role('app').permissions()
      expect(perms.map((p) => [p.permission, p.range.start.toString(), p.range.end.toString()])).to.deep.equal([
        ['Readwrite', 'app/', 'app0'],
        ['Read', 'cfg', ''],
      ])
      expect(await rejection(admin.user('alice').create('x'))).to.equal(EtcdUserExistsError.name)
      expect(await rejection(admin.role('app').create())).to.equal(EtcdRoleExistsError.name)
      expect(await rejection(admin.user('alice').addRole('nope'))).to.equal(EtcdRoleNotFoundError.name)
      expect(await rejection(admin.user('nobody').addRole('app'))).to.equal(EtcdUserNotFoundError.name)
      expect(await rejection(admin.user('alice').removeRole('root'))).to.equal(EtcdRoleNotGrantedError.name)
      expect(await rejection(admin.role('nope').permissions())).to.equal(EtcdRoleNotFoundError.name)
      await admin.put('app/x').value('1')
      await admin.put('secret').value('s')
    })

    it('connects with auth, maps refusals to EtcdPermissionDeniedError and bad logins to EtcdAuthenticationFailedError', async () => {
      await admin.auth.authEnable()
      const alice = as('alice', 'alicepw')
      expect(await alice.get('app/x').string()).to.equal('1')
      await alice.put('app/y').value('2')
      expect(await rejection(alice.get('secret').string())).to.equal(EtcdPermissionDeniedError.name)
      expect(await rejection(alice.put('cfg').value('x').exec())).to.equal(EtcdPermissionDeniedError.name)
      expect(await rejection(alice.if('secret', 'Value', '==', 's').then(alice.put('app/z').value('1')).commit())).to.equal(
        EtcdPermissionDeniedError.name,
      )
      expect(await rejection(alice.getUsers())).to.equal(EtcdPermissionDeniedError.name)
      expect(await rejection(as('alice', 'wrong').get('app/x').string())).to.equal(EtcdAuthenticationFailedError.name)
      const root = as('root', 'rootpw')
      expect(await root.get('secret').string()).to.equal('s')
    })

    it('refreshes its token by itself after the server let it expire', async () => {
      const alice = as('alice', 'alicepw')
      expect(await alice.get('app/x').string()).to.equal('1')
      await sleep(2500) // > the 1 s TTL (etcd's simple tokens are swept every second)
      expect(await alice.get('app/y').string()).to.equal('2')
      await as('root', 'rootpw').auth.authDisable()
    })
  })
}
