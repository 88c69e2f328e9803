/**
 * Every door denies what it must: one real `kvlog serve` with auth enabled, and a table of operations
 * (reads, writes, ranges partly outside a permission, txns whose compare or nested op touches a
 * forbidden key, watches over a partly forbidden range, compaction) run through each door that has
 * them (etcd gRPC, native HTTP, native WebSocket watch, resource API), as each caller: alice (token from
 * Authenticate), carol (a static token from tokenAuthFile), root, and nobody. Each cell asserts the
 * outcome by its stable code: ok, PERMISSION_DENIED or UNAUTHENTICATED.
 *
 * Permissions: alice has readwrite on the prefix app/, read on the key cfg, readwrite on
 * /registry/configmaps/team/ and read on /registry/namespaces/team (creating an object reads its
 * namespace); carol has read on app/.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Metadata, type ServiceError } from '@grpc/grpc-js'
import { expect } from 'chai'
import WebSocket from 'ws'
import type { Message } from '../../../apiserver/etcd/proto.js'
import { etcdGrpc, responses, type EtcdGrpc } from '../../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../../support/server-process.js'

type Outcome = 'ok' | 'PERMISSION_DENIED' | 'UNAUTHENTICATED'
type Who = 'alice' | 'carol' | 'root' | 'nobody'
type Door = 'etcd' | 'http' | 'ws' | 'resources'

const b = (s: string) => Buffer.from(s)
const ZERO = Buffer.from([0])

interface Ctx {
  server: ServerProcess
  grpc: EtcdGrpc
  tokens: Record<Who, string | undefined>
}

/** An operation as one door does it; resolves with the outcome (its stable code, or ok). */
type Run = (ctx: Ctx, who: Who) => Promise<Outcome>

interface Row {
  what: string
  doors: Partial<Record<Door, Run>>
  expect: Record<Who, Outcome>
}

function metadata(ctx: Ctx, who: Who): Metadata {
  const m = new Metadata()
  const t = ctx.tokens[who]
  if (t !== undefined) m.set('token', t)
  return m
}

/** The kvlog code of a gRPC error (trailing metadata kvlog-code). */
function grpcOutcome(err: unknown): Outcome {
  const code = (err as ServiceError).metadata?.get('kvlog-code')[0]
  if (code === 'PERMISSION_DENIED' || code === 'UNAUTHENTICATED') return code
  throw err
}

const etcd =
  (method: string, request: Message, service = 'KV'): Run =>
  async (ctx, who) => {
    try {
      await ctx.grpc.call(service, method, request, metadata(ctx, who))
      return 'ok'
    } catch (err) {
      return grpcOutcome(err)
    }
  }

/** A Watch create on the etcd door: created and not canceled = ok; etcd reports any refusal as permission denied. */
const etcdWatch =
  (key: Buffer, rangeEnd: Buffer): Run =>
  async (ctx, who) => {
    const stream = ctx.grpc.stream('Watch', 'Watch', metadata(ctx, who))
    try {
      const r = responses(stream)
      stream.write({ create_request: { key, range_end: rangeEnd } })
      const first = await r.next()
      if (first.canceled === true) {
        expect(first.cancel_reason).to.match(/PermissionDenied/)
        return 'PERMISSION_DENIED'
      }
      return 'ok'
    } finally {
      stream.cancel()
    }
  }

async function httpOutcome(res: Response): Promise<Outcome> {
  if (res.ok) {
    await res.arrayBuffer()
    return 'ok'
  }
  const body = (await res.json()) as { error?: { code: string }; code?: number; reason?: string; kind?: string }
  // The native door's error body, or a Kubernetes Status (reason Forbidden / Unauthorized).
  const code =
    body.error?.code ?? (body.reason === 'Forbidden' ? 'PERMISSION_DENIED' : body.reason === 'Unauthorized' ? 'UNAUTHENTICATED' : undefined)
  if (code === 'PERMISSION_DENIED' || code === 'UNAUTHENTICATED') return code
  throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`)
}

const http =
  (method: string, path: string, body?: unknown): Run =>
  async (ctx, who) => {
    const headers: Record<string, string> = {}
    const t = ctx.tokens[who]
    if (t !== undefined) headers.authorization = `Bearer ${t}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(ctx.server.http + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    return httpOutcome(res)
  }

/** A native WebSocket watch: the upgrade carries the token; the create is answered created or error. */
const wsWatch =
  (create: Record<string, unknown>): Run =>
  (ctx, who) =>
    new Promise((resolve, reject) => {
      const t = ctx.tokens[who]
      const ws = new WebSocket(ctx.server.http.replace(/^http/, 'ws') + '/v1/watch', {
        headers: t === undefined ? {} : { authorization: `Bearer ${t}` },
      })
      const done = (o: Outcome | Error) => {
        ws.terminate()
        if (o instanceof Error) reject(o)
        else resolve(o)
      }
      ws.on('unexpected-response', (_req, res) =>
        done(res.statusCode === 401 ? 'UNAUTHENTICATED' : new Error(`upgrade answered ${res.statusCode}`)),
      )
      ws.on('error', (err) => done(err))
      ws.on('open', () => ws.send(JSON.stringify({ op: 'create', id: 1, ...create })))
      ws.on('message', (data) => {
        const m = JSON.parse(String(data)) as { type: string; code?: string }
        if (m.type === 'created') done('ok')
        else if (m.code === 'PERMISSION_DENIED' || m.code === 'UNAUTHENTICATED') done(m.code)
        else done(new Error(`unexpected ${String(data)}`))
      })
    })

/** A native NDJSON watch: its first line says created or error. */
const ndjsonWatch =
  (path: string): Run =>
  async (ctx, who) => {
    const t = ctx.tokens[who]
    const ac = new AbortController()
    const res = await fetch(ctx.server.http + path, { headers: t === undefined ? {} : { authorization: `Bearer ${t}` }, signal: ac.signal })
    if (!res.ok) return httpOutcome(res)
    const reader = res.body!.getReader()
    let text = ''
    while (!text.includes('\n')) {
      const { value, done } = await reader.read()
      if (done) break
      text += Buffer.from(value).toString()
    }
    ac.abort()
    const first = JSON.parse(text.split('\n')[0]) as { type: string; code?: string }
    if (first.type === 'created') return 'ok'
    if (first.code === 'PERMISSION_DENIED' || first.code === 'UNAUTHENTICATED') return first.code
    throw new Error(`unexpected ${text}`)
  }

/** A resource watch over HTTP: the response starts streaming (ok) or is a Status. */
const resourceWatch =
  (path: string): Run =>
  async (ctx, who) => {
    const t = ctx.tokens[who]
    const ac = new AbortController()
    const res = await fetch(`${ctx.server.http}${path}?watch=1&timeoutSeconds=1`, {
      headers: t === undefined ? {} : { authorization: `Bearer ${t}` },
      signal: ac.signal,
    })
    if (res.ok) {
      ac.abort()
      return 'ok'
    }
    return httpOutcome(res)
  }

const configMap = (ns: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { a: '1' },
})

const ALL_OK: Record<Who, Outcome> = { alice: 'ok', carol: 'ok', root: 'ok', nobody: 'UNAUTHENTICATED' }
const ALICE_ONLY: Record<Who, Outcome> = { alice: 'ok', carol: 'PERMISSION_DENIED', root: 'ok', nobody: 'UNAUTHENTICATED' }
const ANYONE: Record<Who, Outcome> = { alice: 'ok', carol: 'ok', root: 'ok', nobody: 'ok' }
const ROOT_ONLY: Record<Who, Outcome> = { alice: 'PERMISSION_DENIED', carol: 'PERMISSION_DENIED', root: 'ok', nobody: 'UNAUTHENTICATED' }

const txnBody = (compareKey: string, success: unknown[], failure: unknown[] = []) => ({
  compare: [{ key: compareKey, target: 'VERSION', result: 'GREATER', value: 0 }],
  success,
  failure,
})
const etcdTxn = (compareKey: string, success: Message[], failure: Message[] = []) => ({
  compare: [{ key: b(compareKey), target: 'VERSION', result: 'GREATER', version: 0 }],
  success,
  failure,
})

const rows: Row[] = [
  {
    what: 'read a key in a permitted prefix',
    expect: ALL_OK,
    doors: { etcd: etcd('Range', { key: b('app/x') }), http: http('GET', '/v1/kv?key=app/x') },
  },
  {
    what: 'read the permitted prefix',
    expect: ALL_OK,
    doors: { etcd: etcd('Range', { key: b('app/'), range_end: b('app0') }), http: http('GET', '/v1/kv?key=app/&prefix=true') },
  },
  {
    what: 'read a range only partly permitted ([a, b))',
    expect: ROOT_ONLY,
    doors: { etcd: etcd('Range', { key: b('a'), range_end: b('b') }), http: http('GET', '/v1/kv?key=a&rangeEnd=b') },
  },
  {
    what: 'read every key (--from-key "\\0")',
    expect: ROOT_ONLY,
    doors: { etcd: etcd('Range', { key: ZERO, range_end: ZERO }), http: http('GET', '/v1/kv?key=%00&fromKey=true') },
  },
  {
    what: 'read a forbidden key',
    expect: ROOT_ONLY,
    doors: { etcd: etcd('Range', { key: b('secret/x') }), http: http('GET', '/v1/kv?key=secret/x') },
  },
  {
    what: 'history of the permitted prefix',
    expect: ALL_OK,
    doors: { http: http('GET', '/v1/history?key=app/&prefix=true') },
  },
  {
    what: 'write in the permitted prefix',
    expect: ALICE_ONLY,
    doors: { etcd: etcd('Put', { key: b('app/w'), value: b('1') }), http: http('PUT', '/v1/kv', { key: 'app/w', value: '1' }) },
  },
  {
    what: 'write a key that is only readable',
    expect: ROOT_ONLY,
    doors: { etcd: etcd('Put', { key: b('cfg'), value: b('1') }), http: http('PUT', '/v1/kv', { key: 'cfg', value: '1' }) },
  },
  {
    what: 'delete a range reaching outside the prefix',
    expect: ROOT_ONLY,
    doors: { etcd: etcd('DeleteRange', { key: b('app/zz'), range_end: b('b') }), http: http('DELETE', '/v1/kv?key=app/zz&rangeEnd=b') },
  },
  {
    what: 'txn: compare and put inside the permissions',
    expect: ALICE_ONLY,
    doors: {
      etcd: etcd('Txn', etcdTxn('app/x', [{ request_put: { key: b('app/t'), value: b('1') } }])),
      http: http('POST', '/v1/txn', txnBody('app/x', [{ type: 'put', key: 'app/t', value: '1' }])),
    },
  },
  {
    what: 'txn: compare on a forbidden key',
    expect: ROOT_ONLY,
    doors: {
      etcd: etcd('Txn', etcdTxn('secret/x', [{ request_put: { key: b('app/t'), value: b('2') } }])),
      http: http('POST', '/v1/txn', txnBody('secret/x', [{ type: 'put', key: 'app/t', value: '2' }])),
    },
  },
  {
    what: 'txn: a nested txn in the failure branch writes a forbidden key',
    expect: ROOT_ONLY,
    doors: {
      etcd: etcd('Txn', etcdTxn('app/x', [], [{ request_txn: { success: [{ request_put: { key: b('secret/y'), value: b('1') } }] } }])),
      http: http('POST', '/v1/txn', txnBody('app/x', [], [{ type: 'txn', success: [{ type: 'put', key: 'secret/y', value: '1' }] }])),
    },
  },
  {
    what: 'watch the permitted prefix',
    expect: ALL_OK,
    doors: {
      etcd: etcdWatch(b('app/'), b('app0')),
      ws: wsWatch({ key: 'app/', prefix: true }),
      http: ndjsonWatch('/v1/watch?key=app/&prefix=true'),
    },
  },
  {
    what: 'watch a range that is partly forbidden ([a, b))',
    expect: ROOT_ONLY,
    doors: { etcd: etcdWatch(b('a'), b('b')), ws: wsWatch({ key: 'a', rangeEnd: 'b' }), http: ndjsonWatch('/v1/watch?key=a&rangeEnd=b') },
  },
  {
    what: 'compact (native door)',
    expect: ROOT_ONLY,
    doors: { http: http('POST', '/v1/compact', { revision: 3 }) },
  },
  {
    what: 'compact (etcd door: no role needed, as etcd 3.4)',
    expect: ANYONE,
    doors: {
      // Each caller compacts at a new revision (compacting twice at one revision is an error).
      etcd: async (ctx, who) => {
        const put = await ctx.grpc.call('KV', 'Put', { key: b('app/compact'), value: b('x') }, metadata(ctx, 'root'))
        const revision = Number((put.header as { revision: string }).revision)
        return etcd('Compact', { revision })(ctx, who)
      },
    },
  },
  {
    what: 'snapshot, defragment, hash (maintenance)',
    expect: ROOT_ONLY,
    doors: { etcd: etcd('Defragment', {}, 'Maintenance'), http: http('GET', '/v1/snapshot') },
  },
  {
    what: 'resources: list and watch configmaps in the permitted namespace',
    expect: ALICE_ONLY,
    doors: {
      resources: async (ctx, who) => {
        const list = await http('GET', '/api/v1/namespaces/team/configmaps')(ctx, who)
        const watch = await resourceWatch('/api/v1/namespaces/team/configmaps')(ctx, who)
        expect(watch, 'watch').to.equal(list)
        return list
      },
    },
  },
  {
    what: 'resources: create and get a configmap in the permitted namespace',
    expect: ALICE_ONLY,
    doors: {
      resources: async (ctx, who) => {
        const created = await http('POST', '/api/v1/namespaces/team/configmaps', configMap('team', `cm-${who}`))(ctx, who)
        if (created !== 'ok') return created
        return http('GET', `/api/v1/namespaces/team/configmaps/cm-${who}`)(ctx, who)
      },
    },
  },
  {
    what: 'resources: list, watch or create in another namespace, or across all namespaces (partly forbidden)',
    expect: ROOT_ONLY,
    doors: {
      resources: async (ctx, who) => {
        const outcomes = new Set([
          await http('GET', '/api/v1/namespaces/other/configmaps')(ctx, who),
          await resourceWatch('/api/v1/configmaps')(ctx, who),
          await http('POST', '/api/v1/namespaces/other/configmaps', configMap('other', `cm-${who}`))(ctx, who),
        ])
        expect(outcomes.size, [...outcomes].join(',')).to.equal(1)
        return [...outcomes][0]
      },
    },
  },
]

describe('auth: every door denies what it must (door × operation × caller)', function () {
  this.timeout(60_000)
  let dir: string
  const ctx = { tokens: { nobody: undefined } } as Ctx

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvlog-auth-doors-'))
    await writeFile(join(dir, 'tokens.csv'), '# token,user,uid,groups\nstatic-carol-token,carol,1001,"viewers"\n')
    ctx.server = await startServerProcess(['--token-auth-file', join(dir, 'tokens.csv'), '--auth-password-hash-cost', '10'])
    ctx.grpc = etcdGrpc(ctx.server.grpc)
    const auth = (method: string, request: Message) => ctx.grpc.call('Auth', method, request)
    for (const [name, password] of [
      ['root', 'rootpw'],
      ['alice', 'alicepw'],
      ['carol', 'carolpw'],
    ])
      await auth('UserAdd', { name, password })
    await auth('RoleAdd', { name: 'app' })
    await auth('RoleGrantPermission', { name: 'app', perm: { permType: 2, key: b('app/'), range_end: b('app0') } })
    await auth('RoleGrantPermission', { name: 'app', perm: { permType: 0, key: b('cfg') } })
    await auth('RoleGrantPermission', {
      name: 'app',
      perm: { permType: 2, key: b('/registry/configmaps/team/'), range_end: b('/registry/configmaps/team0') },
    })
    await auth('RoleGrantPermission', { name: 'app', perm: { permType: 0, key: b('/registry/namespaces/team') } })
    await auth('RoleAdd', { name: 'viewer' })
    await auth('RoleGrantPermission', { name: 'viewer', perm: { permType: 0, key: b('app/'), range_end: b('app0') } })
    await auth('UserGrantRole', { user: 'alice', role: 'app' })
    await auth('UserGrantRole', { user: 'carol', role: 'viewer' })
    await auth('UserGrantRole', { user: 'root', role: 'root' })
    for (const [k, v] of [
      ['app/x', '1'],
      ['cfg', '1'],
      ['secret/x', '1'],
      ['b', '1'],
    ])
      await ctx.grpc.call('KV', 'Put', { key: b(k), value: b(v) })
    // Namespaces exist before objects are made in them (creating one reads its namespace).
    for (const name of ['team', 'other']) {
      const res = await fetch(`${ctx.server.http}/api/v1/namespaces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
      })
      expect(res.status, `create namespace ${name}`).to.equal(201)
    }
    await auth('AuthEnable', {})
    ctx.tokens.alice = String((await auth('Authenticate', { name: 'alice', password: 'alicepw' })).token)
    ctx.tokens.carol = 'static-carol-token'
    // The native door's login gives a token that works on every door.
    const res = await fetch(`${ctx.server.http}/v1/auth/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'root', password: 'rootpw' }),
    })
    ctx.tokens.root = ((await res.json()) as { token: string }).token
  })

  after(async () => {
    ctx.grpc?.close()
    await ctx.server?.stop()
    await ctx.server?.cleanup()
    await rm(dir, { recursive: true, force: true })
  })

  for (const row of rows) {
    for (const [door, run] of Object.entries(row.doors) as Array<[Door, Run]>) {
      it(`${door}: ${row.what}`, async () => {
        const got: Partial<Record<Who, Outcome>> = {}
        for (const who of ['alice', 'carol', 'nobody', 'root'] as Who[]) got[who] = await run(ctx, who)
        // etcd answers a watch create it refuses for any reason with permission denied (no identity included).
        const want = door === 'etcd' && row.what.startsWith('watch') ? { ...row.expect, nobody: 'PERMISSION_DENIED' } : row.expect
        expect(got).to.deep.equal(want)
      })
    }
  }

  it('the server kept serving, and a wrong token is UNAUTHENTICATED on every door', async () => {
    const bad = { ...ctx, tokens: { ...ctx.tokens, alice: 'not-a-token' } }
    expect(await etcd('Range', { key: b('app/x') })(bad, 'alice')).to.equal('UNAUTHENTICATED')
    expect(await http('GET', '/v1/kv?key=app/x')(bad, 'alice')).to.equal('UNAUTHENTICATED')
    expect(await wsWatch({ key: 'app/x' })(bad, 'alice')).to.equal('UNAUTHENTICATED')
    expect(await http('GET', '/api/v1/namespaces/team/configmaps')(bad, 'alice')).to.equal('UNAUTHENTICATED')
    expect(await http('GET', '/v1/kv?key=app/x')(ctx, 'alice')).to.equal('ok')
  })
})
