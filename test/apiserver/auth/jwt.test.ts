/**
 * JWT tokens (`--auth-token jwt,...`) against a real etcd 3.4 and kvlog started with the same keys: the
 * token's shape (alg, username, revision, exp), a valid token on the gRPC door (and kvlog's native door),
 * and etcd's answers to a tampered signature, tampered claims, alg "none", an HMAC made with the public
 * key, a token signed by another key, an expired token, and a token issued before the auth state changed
 * ("revision of auth store is old", for key checks only, as etcd). Also etcdctl in jwt mode, ES256, and a
 * kvlog member holding only the public key: it verifies the other's tokens but cannot issue one.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Metadata, type ServiceError } from '@grpc/grpc-js'
import { expect } from 'chai'
import { etcdctl } from '../../support/etcdctl.js'
import type { EtcdGrpc } from '../../support/etcd-grpc.js'
import { startEtcd } from '../../support/etcd-process.js'
import { connectEtcd3 } from '../../support/etcd3-proto.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'

const b = (s: string) => Buffer.from(s)
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')

function md(token: string): Metadata {
  const m = new Metadata()
  m.set('token', token)
  return m
}

/** 'ok', or the gRPC status and etcd's message. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p
    return 'ok'
  } catch (err) {
    const e = err as ServiceError
    return `${e.code} ${e.details}`
  }
}

const INVALID = '16 etcdserver: invalid auth token'
const OLD = '3 etcdserver: revision of auth store is old'

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
}

function headerOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>
}

function rs256(key: KeyObject, header: unknown, claims: unknown): string {
  const input = `${b64(header)}.${b64(claims)}`
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`
}

interface Keys {
  dir: string
  rsaPriv: string
  rsaPub: string
  ecPriv: string
  ecPub: string
  rsa: { privateKey: KeyObject; publicKey: KeyObject }
  other: KeyObject
}

async function makeKeys(): Promise<Keys> {
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-jwt-'))
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const files = {
    rsaPriv: rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }),
    rsaPub: rsa.publicKey.export({ type: 'spki', format: 'pem' }),
    ecPriv: ec.privateKey.export({ type: 'sec1', format: 'pem' }),
    ecPub: ec.publicKey.export({ type: 'spki', format: 'pem' }),
  }
  const paths: Record<string, string> = {}
  for (const [name, pem] of Object.entries(files)) {
    paths[name] = join(dir, `${name}.pem`)
    await writeFile(paths[name], pem)
  }
  return { dir, rsaPriv: paths.rsaPriv!, rsaPub: paths.rsaPub!, ecPriv: paths.ecPriv!, ecPub: paths.ecPub!, rsa, other }
}

interface Target {
  name: string
  endpoint: string
  http?: string
  stop(): Promise<void>
}

async function startTarget(name: 'etcd' | 'kvlog', authToken: string): Promise<Target> {
  if (name === 'etcd') {
    const etcd = await startEtcd({ args: ['--auth-token', authToken] })
    return { name, endpoint: etcd.endpoint, stop: etcd.stop }
  }
  const server: ServerProcess = await startServerProcess(['--auth-token', authToken, '--auth-password-hash-cost', '10'])
  return {
    name,
    endpoint: server.grpc,
    http: server.http,
    stop: async () => {
      await server.stop()
      await server.cleanup()
    },
  }
}

/** root, alice with readwrite on a/ (role r), auth enabled. */
async function setUp(c: EtcdGrpc): Promise<void> {
  await c.call('Auth', 'UserAdd', { name: 'root', password: 'rootpw' })
  await c.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' })
  await c.call('Auth', 'UserAdd', { name: 'alice', password: 'apw' })
  await c.call('Auth', 'RoleAdd', { name: 'r' })
  await c.call('Auth', 'RoleGrantPermission', { name: 'r', perm: { permType: 2, key: b('a/'), range_end: b('a0') } })
  await c.call('Auth', 'UserGrantRole', { user: 'alice', role: 'r' })
  await c.call('Auth', 'AuthEnable', {})
}

async function login(c: EtcdGrpc, name: string, password: string): Promise<string> {
  return String((await c.call('Auth', 'Authenticate', { name, password })).token)
}

describe('auth: JWT tokens (etcd 3.4 and kvlog)', function () {
  this.timeout(120_000)
  let keys: Keys

  before(async () => {
    keys = await makeKeys()
  })

  after(async () => {
    if (keys !== undefined) await rm(keys.dir, { recursive: true, force: true })
  })

  for (const name of ['etcd', 'kvlog'] as const) {
    describe(name, () => {
      let t: Target
      let c: EtcdGrpc
      let token: string

      before(async () => {
        t = await startTarget(name, `jwt,pub-key=${keys.rsaPub},priv-key=${keys.rsaPriv},sign-method=RS256,ttl=1m`)
        c = connectEtcd3(t.endpoint)
        await setUp(c)
        token = await login(c, 'alice', 'apw')
      })

      after(async () => {
        c?.close()
        await t?.stop()
      })

      it('issues RS256 tokens carrying username, auth revision and exp', () => {
        expect(headerOf(token).alg).to.equal('RS256')
        const claims = claimsOf(token)
        expect(claims.username).to.equal('alice')
        expect(claims.revision).to.be.a('number')
        const exp = claims.exp as number
        expect(exp).to.be.within(Date.now() / 1000 + 30, Date.now() / 1000 + 90)
      })

      it('a valid token reads and writes what the user may, and nothing else', async () => {
        expect(await outcome(c.call('KV', 'Put', { key: b('a/1'), value: b('v') }, md(token)))).to.equal('ok')
        expect(await outcome(c.call('KV', 'Range', { key: b('a/1') }, md(token)))).to.equal('ok')
        expect(await outcome(c.call('KV', 'Put', { key: b('b'), value: b('v') }, md(token)))).to.equal('7 etcdserver: permission denied')
      })

      it('refuses a tampered signature, tampered claims, alg none, HS256 with the public key, another key', async () => {
        const [h, p, s] = token.split('.') as [string, string, string]
        const flipped = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11)
        const asRoot = b64({ ...claimsOf(token), username: 'root' })
        const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claimsOf(token), username: 'root' })}.`
        const { createHmac } = await import('node:crypto')
        const hsInput = `${b64({ alg: 'HS256', typ: 'JWT' })}.${p}`
        const pubPem = keys.rsa.publicKey.export({ type: 'spki', format: 'pem' })
        const hs = `${hsInput}.${createHmac('sha256', pubPem).update(hsInput).digest('base64url')}`
        const otherKey = rs256(keys.other, headerOf(token), claimsOf(token))
        for (const [what, forged] of [
          ['tampered signature', `${h}.${p}.${flipped}`],
          ['tampered claims', `${h}.${asRoot}.${s}`],
          ['alg none', none],
          ['HS256 keyed with the public key', hs],
          ['signed by another key', otherKey],
          ['not a JWT', 'garbage'],
        ]) {
          expect(await outcome(c.call('KV', 'Range', { key: b('a/1') }, md(forged!))), what!).to.equal(INVALID)
        }
      })

      it('refuses an expired token', async () => {
        const expired = rs256(keys.rsa.privateKey, headerOf(token), { ...claimsOf(token), exp: Math.floor(Date.now() / 1000) - 5 })
        expect(await outcome(c.call('KV', 'Range', { key: b('a/1') }, md(expired)))).to.equal(INVALID)
        const fresh = rs256(keys.rsa.privateKey, headerOf(token), { ...claimsOf(token), exp: Math.floor(Date.now() / 1000) + 60 })
        expect(await outcome(c.call('KV', 'Range', { key: b('a/1') }, md(fresh)))).to.equal('ok')
      })

      it('refuses a token issued before the auth state changed for keys (kvlog: for role root too)', async () => {
        const rootToken = await login(c, 'root', 'rootpw')
        const aliceToken = await login(c, 'alice', 'apw')
        await c.call('Auth', 'RoleAdd', { name: 'r2' }, md(rootToken)) // raises the auth revision
        expect(await outcome(c.call('KV', 'Range', { key: b('a/1') }, md(aliceToken)))).to.equal(OLD)
        expect(await outcome(c.call('KV', 'Put', { key: b('a/1'), value: b('w') }, md(aliceToken)))).to.equal(OLD)
        expect(await outcome(c.call('KV', 'Range', { key: b('a/1') }, md(rootToken)))).to.equal(OLD)
        // etcd's IsAdminPermitted skips the auth revision; kvlog refuses admin calls too, so a changed root
        // password ends every earlier root token (docs/security.md).
        expect(await outcome(c.call('Auth', 'UserList', {}, md(rootToken)))).to.equal(name === 'kvlog' ? OLD : 'ok')
        const again = await login(c, 'alice', 'apw')
        expect(await outcome(c.call('KV', 'Range', { key: b('a/1') }, md(again)))).to.equal('ok')
      })

      it('etcdctl --user works in jwt mode', async () => {
        const put = await etcdctl(t.endpoint, ['--user', 'alice:apw', 'put', 'a/ctl', 'x'])
        expect(put.stdout).to.equal('OK\n')
        const get = await etcdctl(t.endpoint, ['--user', 'alice:apw', 'get', 'a/ctl', '--print-value-only'])
        expect(get.stdout).to.equal('x\n')
        const denied = await etcdctl(t.endpoint, ['--user', 'alice:apw', 'get', 'b'])
        expect(denied.stderr).to.contain('etcdserver: permission denied')
      })

      if (name === 'kvlog') {
        it('a root JWT issued before a root password change is refused for admin calls on every door', async () => {
          const old = await login(c, 'root', 'rootpw')
          await c.call('Auth', 'UserChangePassword', { name: 'root', password: 'rootpw2' }, md(old))
          expect(await outcome(c.call('Auth', 'UserAdd', { name: 'mallory', password: 'x' }, md(old)))).to.equal(OLD)
          expect(await outcome(c.call('Auth', 'UserGrantRole', { user: 'alice', role: 'root' }, md(old)))).to.equal(OLD)
          expect(await outcome(c.call('Maintenance', 'Defragment', {}, md(old)))).to.equal(OLD)
          const bearer = { authorization: `Bearer ${old}` }
          for (const [method, path, body] of [
            ['GET', '/v1/snapshot', undefined],
            ['POST', '/v1/auth/users', { name: 'mallory', password: 'x' }],
            ['PUT', '/v1/auth/users/alice/roles/root', undefined],
          ] as const) {
            const res = await fetch(`${t.http}${path}`, {
              method,
              headers: body === undefined ? bearer : { ...bearer, 'content-type': 'application/json' },
              body: body === undefined ? undefined : JSON.stringify(body),
            })
            expect(res.status, `${method} ${path}`).to.equal(401)
            expect(((await res.json()) as { error?: { code?: string } }).error?.code).to.equal('UNAUTHENTICATED')
          }
          const fresh = await login(c, 'root', 'rootpw2')
          expect(await outcome(c.call('Auth', 'UserList', {}, md(fresh)))).to.equal('ok')
          await c.call('Auth', 'UserChangePassword', { name: 'root', password: 'rootpw' }, md(fresh))
        })

        it('the native door takes the JWT as a bearer token', async () => {
          const jwt = await login(c, 'alice', 'apw')
          const ok = await fetch(`${t.http}/v1/kv?key=a/1`, { headers: { authorization: `Bearer ${jwt}` } })
          expect(ok.status).to.equal(200)
          const [h, p] = jwt.split('.')
          const forged = await fetch(`${t.http}/v1/kv?key=a/1`, { headers: { authorization: `Bearer ${h}.${p}.AAAA` } })
          expect(forged.status).to.equal(401)
          expect(((await forged.json()) as { error?: { code?: string } }).error?.code).to.equal('UNAUTHENTICATED')
        })

        it('a member with only the public key verifies tokens but cannot issue them', async () => {
          const jwt = await login(c, 'alice', 'apw')
          const verifier = await startServerProcess(['--auth-token', `jwt,pub-key=${keys.rsaPub},sign-method=RS256`])
          const v = connectEtcd3(verifier.grpc)
          try {
            await setUp(v)
            expect(await outcome(v.call('Auth', 'Authenticate', { name: 'alice', password: 'apw' }))).to.equal(
              '2 auth: token signing attempted with verify-only key',
            )
            // Its auth state is at a lower revision than the issuer's, so the token is current there.
            expect(await outcome(v.call('KV', 'Range', { key: b('a/1') }, md(jwt)))).to.equal('ok')
          } finally {
            v.close()
            await verifier.stop()
            await verifier.cleanup()
          }
        })
      }
    })
  }

  for (const name of ['etcd', 'kvlog'] as const) {
    it(`${name}: ES256 tokens`, async () => {
      const t = await startTarget(name, `jwt,pub-key=${keys.ecPub},priv-key=${keys.ecPriv},sign-method=ES256`)
      const c = connectEtcd3(t.endpoint)
      try {
        await setUp(c)
        const token = await login(c, 'alice', 'apw')
        expect(headerOf(token).alg).to.equal('ES256')
        expect(Buffer.from(token.split('.')[2]!, 'base64url').length).to.equal(64)
        expect(await outcome(c.call('KV', 'Put', { key: b('a/1'), value: b('v') }, md(token)))).to.equal('ok')
        const rs = rs256(keys.rsa.privateKey, { alg: 'RS256', typ: 'JWT' }, claimsOf(token))
        expect(await outcome(c.call('KV', 'Range', { key: b('a/1') }, md(rs)))).to.equal(INVALID)
      } finally {
        c.close()
        await t.stop()
      }
    })
  }
})
