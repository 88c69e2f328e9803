/**
 * Failed logins are throttled per client address and per user (apiserver/auth/login-throttle.ts) without
 * locking anyone else out. One real `kvlog serve` with auth on; the loopback network gives each client an
 * address of its own (127.0.0.2 floods, 127.0.0.3 guesses once, the test itself is 127.0.0.1). While
 * 127.0.0.2 floods wrong passwords for root and unknown users, root logs in from 127.0.0.1 every time;
 * the flooder gets TOO_MANY_ATTEMPTS on the native route and on etcd's gateway, and no password check
 * queue ever fills (no UNAVAILABLE). Then the same address limit on etcd gRPC.
 */
import { request as httpRequest } from 'node:http'
import { Metadata, type ServiceError } from '@grpc/grpc-js'
import { expect } from 'chai'
import { etcdGrpc, type EtcdGrpc } from '../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

const PER_SOURCE = 5
const PER_USER = 3
const PENDING = 2

interface Answer {
  status: number
  /** The native error code, or the gateway's gRPC code as "grpc N". */
  code: string
}

/** POST a login from a given local address. */
function login(base: string, path: string, from: string, name: string, password: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      { method: 'POST', localAddress: from, headers: { 'content-type': 'application/json' }, agent: false },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (text += c))
        res.on('end', () => {
          const body = JSON.parse(text) as { token?: string; error?: { code: string } | string; code?: number }
          const code = body.token !== undefined ? 'ok' : typeof body.error === 'object' ? body.error.code : `grpc ${body.code}`
          resolve({ status: res.statusCode ?? 0, code })
        })
      },
    )
    req.on('error', reject)
    req.end(JSON.stringify({ name, password }))
  })
}

function count(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const a of answers) out[a.code] = (out[a.code] ?? 0) + 1
  return out
}

describe('security: login throttling', function () {
  this.timeout(120_000)
  let server: ServerProcess
  let grpc: EtcdGrpc
  const native = (from: string, name: string, password: string) => login(server.http, '/v1/auth/authenticate', from, name, password)

  before(async () => {
    server = await startServerProcess([
      '--auth-password-hash-cost',
      '12',
      '--login-max-failures-per-source',
      String(PER_SOURCE),
      '--login-max-failures-per-user',
      String(PER_USER),
      '--login-max-pending-per-source',
      String(PENDING),
    ])
    grpc = etcdGrpc(server.grpc)
    await grpc.call('Auth', 'UserAdd', { name: 'root', password: 'rootpw' })
    await grpc.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' })
    await grpc.call('Auth', 'AuthEnable', {})
  })
  after(async () => {
    grpc?.close()
    await server?.cleanup()
  })

  it('a flood of wrong logins from one address is cut off while root logs in from another every time', async () => {
    const flood: Array<Promise<Answer>> = []
    const legit: Answer[] = []
    for (let burst = 0; burst < 10; burst++) {
      for (let i = 0; i < 30; i++) flood.push(native('127.0.0.2', i % 2 === 0 ? 'root' : `ghost${burst}-${i}`, 'wrong'))
      // A login from elsewhere in the middle of each burst.
      legit.push(await native('127.0.0.1', 'root', 'rootpw'))
    }
    const answers = await Promise.all(flood)
    expect(count(legit)).to.deep.equal({ ok: 10 })
    const counts = count(answers)
    expect(Object.keys(counts).sort()).to.deep.equal(['TOO_MANY_ATTEMPTS', 'UNAUTHENTICATED'])
    // Each failure after the limit is refused unchecked: at most the limit, plus checks already under way.
    expect(counts.UNAUTHENTICATED).to.be.within(PER_SOURCE, PER_SOURCE + PENDING - 1)
    expect(answers.filter((a) => a.code === 'TOO_MANY_ATTEMPTS').every((a) => a.status === 429)).to.equal(true)
  })

  it('the flooding address is refused even with the right password, and on etcd’s gateway too', async () => {
    expect(await native('127.0.0.2', 'root', 'rootpw')).to.deep.equal({ status: 429, code: 'TOO_MANY_ATTEMPTS' })
    // etcd's JSON error: RESOURCE_EXHAUSTED.
    expect(await login(`http://${server.grpc}`, '/v3/auth/authenticate', '127.0.0.2', 'root', 'rootpw')).to.deep.equal({
      status: 429,
      code: 'grpc 8',
    })
  })

  it('root, over its own failure limit, logs in only from addresses that have not failed', async () => {
    // root has failed more than PER_USER times (from 127.0.0.2); 127.0.0.3 fails once, then knows better.
    expect((await native('127.0.0.3', 'root', 'guess')).code).to.equal('UNAUTHENTICATED')
    expect(await native('127.0.0.3', 'root', 'rootpw')).to.deep.equal({ status: 429, code: 'TOO_MANY_ATTEMPTS' })
    expect((await native('127.0.0.1', 'root', 'rootpw')).code).to.equal('ok')
  })

  it('etcd gRPC Authenticate counts failures per address the same way', async () => {
    const codes: string[] = []
    for (let i = 0; i < PER_SOURCE + 2; i++) {
      try {
        await grpc.call('Auth', 'Authenticate', { name: `nobody${i}`, password: 'x' }, new Metadata())
        codes.push('ok')
      } catch (err) {
        codes.push(String((err as ServiceError).metadata.get('kvlog-code')[0]))
      }
    }
    expect(codes).to.deep.equal([...Array(PER_SOURCE).fill('UNAUTHENTICATED'), 'TOO_MANY_ATTEMPTS', 'TOO_MANY_ATTEMPTS'])
  })
})
