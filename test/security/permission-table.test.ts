/**
 * The permission table: every etcd gRPC method, every JSON gateway path, every route of the HTTP
 * listener (native API and resource API) and the native WebSocket watch, each asked by an anonymous, an
 * unauthorized and an authorized caller against one real `kvlog serve` with auth enabled (fixture.ts).
 * Each cell asserts the outcome by its stable code. The table must cover exactly what the server serves:
 * the methods of the loaded .proto services, the gateway's route table and fastify's route list; a new
 * method or route fails the completeness test until it has a row.
 *
 * Callers: alice (readwrite app/, read cfg, a namespace's configmaps), carol (read app/, a static token),
 * root, nobody. docs/security.md states the same table in prose.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { credentials, makeGenericClientConstructor, status, type Client, type ServiceError } from '@grpc/grpc-js'
import { expect } from 'chai'
import WebSocket from 'ws'
import { GATEWAY_ROUTES } from '../../apiserver/etcd/gateway/routes.js'
import { messageType, protoServices, serviceDefinition, serviceMethods, type Message } from '../../apiserver/etcd/proto.js'
import { startServer } from '../../apiserver/server.js'
import { DEFAULT_CONFIG } from '../../config/index.js'
import {
  b,
  bearer,
  CALLERS,
  configMap,
  httpCall,
  httpOutcome,
  login,
  metadata,
  PROTO_SERVICE,
  startSecuredServer,
  stopSecuredServer,
  ZERO,
  type Ctx,
  type Outcome,
  type Who,
} from './fixture.js'

type Expect = Record<Who, Outcome | string>
type Run = (ctx: Ctx, who: Who) => Promise<Outcome | string>

const ALL_OK: Expect = { alice: 'ok', carol: 'ok', root: 'ok', nobody: 'UNAUTHENTICATED' }
const ALICE_ONLY: Expect = { alice: 'ok', carol: 'PERMISSION_DENIED', root: 'ok', nobody: 'UNAUTHENTICATED' }
const ANYONE: Expect = { alice: 'ok', carol: 'ok', root: 'ok', nobody: 'ok' }
const ROOT_ONLY: Expect = { alice: 'PERMISSION_DENIED', carol: 'PERMISSION_DENIED', root: 'ok', nobody: 'UNAUTHENTICATED' }
/** Needs role root, and then is not served by a single member. */
const ROOT_THEN_UNIMPLEMENTED: Expect = { ...ROOT_ONLY, root: 'UNIMPLEMENTED' }

/** A gRPC call: [short service name, method, request for the caller]. */
type GrpcSpec = [service: string, method: string, request: (ctx: Ctx, who: Who) => Promise<Message> | Message]

interface Row {
  what: string
  expect: Expect
  /** Run on the gRPC door, and on every gateway path that maps to the same method. */
  grpc?: GrpcSpec
  /** Other doors: `http METHOD /route` (the route as fastify lists it), `ws /v1/watch`. */
  doors?: Record<string, Run>
  /** etcd reports a refused watch create as permission denied, whatever the reason. */
  watchLike?: boolean
}

const fullName = (service: string) => PROTO_SERVICE[service]

/** gRPC status → outcome: kvlog's stable code when it sends one, else the status name. */
function grpcOutcome(err: unknown): string {
  const e = err as ServiceError
  const code = e.metadata?.get('kvlog-code')[0]
  if (code !== undefined) return String(code)
  return status[e.code]
}

const clients = new Map<string, Client & Record<string, unknown>>()
function client(ctx: Ctx, service: string): Client & Record<string, unknown> {
  let c = clients.get(service)
  if (c === undefined) {
    const Ctor = makeGenericClientConstructor(serviceDefinition(fullName(service)), service)
    c = new Ctor(ctx.server.grpc, credentials.createInsecure()) as Client & Record<string, unknown>
    clients.set(service, c)
  }
  return c
}

/** Runs one gRPC method of any kind; a stream is ok once its first message arrives. */
async function grpcRun(ctx: Ctx, who: Who, [service, method, build]: GrpcSpec): Promise<string> {
  const request = await build(ctx, who)
  const m = serviceMethods(fullName(service)).find((x) => x.name === method)!
  const c = client(ctx, service)
  const md = metadata(ctx, who)
  if (!m.requestStream && !m.responseStream) {
    try {
      await ctx.grpc.call(service, method, request, md)
      return 'ok'
    } catch (err) {
      return grpcOutcome(err)
    }
  }
  return new Promise<string>((resolve) => {
    type S = NodeJS.ReadWriteStream & { cancel(): void; write(m: Message): boolean }
    const s = (
      m.requestStream ? (c[method] as (md: unknown) => S).call(c, md) : (c[method] as (r: Message, md: unknown) => S).call(c, request, md)
    ) as S
    let done = false
    const finish = (o: string) => {
      if (done) return
      done = true
      s.cancel()
      resolve(o)
    }
    s.on('data', (msg: Message) => {
      if (msg.canceled === true)
        finish(/PermissionDenied/.test(String(msg.cancel_reason)) ? 'PERMISSION_DENIED' : String(msg.cancel_reason))
      else finish('ok')
    })
    s.on('error', (err) => finish(grpcOutcome(err)))
    if (m.requestStream) s.write(request)
  })
}

/** The request as the gateway takes it: proto field names, bytes in base64, 64-bit integers as strings. */
function gatewayJson(service: string, method: string, request: Message): unknown {
  const m = serviceMethods(fullName(service)).find((x) => x.name === method)!
  const type = messageType(m.request.fullName.replace(/^\./, ''))
  return type.toObject(type.fromObject(request), { bytes: String, longs: String, enums: String, defaults: false })
}

/** One gateway request; a stream is read up to its first line. */
async function gatewayRun(ctx: Ctx, who: Who, path: string, [service, method, build]: GrpcSpec): Promise<string> {
  const body = gatewayJson(service, method, await build(ctx, who))
  const t = ctx.tokens[who]
  const ac = new AbortController()
  const res = await fetch(`http://${ctx.server.grpc}/v3/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(t === undefined ? {} : { authorization: t }) },
    body: JSON.stringify(body),
    signal: ac.signal,
  })
  const reader = res.body!.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) break
    text += Buffer.from(value).toString()
  }
  ac.abort()
  const first = text.split('\n')[0]
  const parsed = (first.trim() === '' ? {} : JSON.parse(first)) as {
    code?: number
    error?: { grpc_code?: number } | string
    result?: { canceled?: boolean }
  }
  if (parsed.result?.canceled === true) return 'PERMISSION_DENIED'
  const code = res.ok ? (typeof parsed.error === 'object' ? parsed.error.grpc_code : undefined) : parsed.code
  if (code === undefined) return 'ok'
  // etcd's answer to a call without identity is INVALID_ARGUMENT "user name is empty".
  if (code === status.INVALID_ARGUMENT && /user name is empty/.test(first)) return 'UNAUTHENTICATED'
  return status[code]
}

const http =
  (method: string, path: string, body?: unknown): Run =>
  async (ctx, who) => {
    try {
      return await httpCall(ctx, who, method, path, body)
    } catch (err) {
      const m = /HTTP \d+: (.*)$/.exec((err as Error).message)
      if (m === null) return (err as Error).message
      const parsed = JSON.parse(m[1]) as { error?: { code?: string }; reason?: string }
      return parsed.error?.code ?? parsed.reason ?? m[1]
    }
  }

/** A native WebSocket watch: the upgrade carries the token; the create is answered created or error. */
const wsWatch =
  (create: Record<string, unknown>): Run =>
  (ctx, who) =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(ctx.server.http.replace(/^http/, 'ws') + '/v1/watch', { headers: bearer(ctx, who) })
      const done = (o: string | Error) => {
        ws.terminate()
        if (o instanceof Error) reject(o)
        else resolve(o)
      }
      ws.on('unexpected-response', (_req, res) => done(res.statusCode === 401 ? 'UNAUTHENTICATED' : `HTTP ${res.statusCode}`))
      ws.on('error', (err) => done(err))
      ws.on('open', () => ws.send(JSON.stringify({ op: 'create', id: 1, ...create })))
      ws.on('message', (data) => {
        const m = JSON.parse(String(data)) as { type: string; code?: string }
        done(m.type === 'created' ? 'ok' : (m.code ?? m.type))
      })
    })

/** A native NDJSON watch: its first line says created or error. */
const ndjsonWatch =
  (path: string): Run =>
  async (ctx, who) => {
    const ac = new AbortController()
    const res = await fetch(ctx.server.http + path, { headers: bearer(ctx, who), signal: ac.signal })
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
    return first.type === 'created' ? 'ok' : (first.code ?? first.type)
  }

/** A resource watch over HTTP: the response starts streaming (ok) or is a Status. */
const resourceWatch =
  (path: string): Run =>
  async (ctx, who) => {
    const ac = new AbortController()
    const res = await fetch(`${ctx.server.http}${path}?watch=1&timeoutSeconds=1`, { headers: bearer(ctx, who), signal: ac.signal })
    if (res.ok) {
      ac.abort()
      return 'ok'
    }
    return httpOutcome(res)
  }

/** Runs several requests; they must agree, and that is the outcome. */
const all =
  (...runs: Run[]): Run =>
  async (ctx, who) => {
    const outcomes = new Set<string>()
    for (const r of runs) outcomes.add(await r(ctx, who))
    expect(outcomes.size, `${who}: ${[...outcomes].join(', ')}`).to.equal(1)
    return [...outcomes][0]
  }

const asRoot = (ctx: Ctx, service: string, method: string, request: Message) =>
  ctx.grpc.call(service, method, request, metadata(ctx, 'root'))
/** Root's call that may fail because the state is already there (a user that exists). */
const ensure = (ctx: Ctx, service: string, method: string, request: Message) => asRoot(ctx, service, method, request).catch(() => undefined)

/** A lease with a key under secret/ attached (revoking it deletes that key; reading its keys reads it). */
async function secretLease(ctx: Ctx): Promise<string> {
  const id = String((await asRoot(ctx, 'Lease', 'LeaseGrant', { TTL: 60 })).ID)
  await asRoot(ctx, 'KV', 'Put', { key: b('secret/leased'), value: b('1'), lease: id })
  return id
}

/** A leader on app/pc, campaigned by root once (Proclaim and Resign need a LeaderKey). */
let leader: Message | undefined
async function rootLeader(ctx: Ctx): Promise<Message> {
  leader ??= (await asRoot(ctx, 'Election', 'Campaign', { name: b('app/pc'), value: b('v') })).leader as Message
  return leader
}

/** The store's revision now (requests naming a revision use it: older ones may be compacted by then). */
async function now(ctx: Ctx): Promise<number> {
  return Number(((await asRoot(ctx, 'KV', 'Range', { key: b('x') })).header as Message).revision)
}

/** The revision of a new write by root (of `key`, default app/c). */
async function written(ctx: Ctx, key = 'app/c'): Promise<number> {
  return Number(((await asRoot(ctx, 'KV', 'Put', { key: b(key), value: b(String(Math.random())) })).header as Message).revision)
}

/** A CustomResourceDefinition (cluster-scoped: only root may create one here). */
const crd = (plural: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.example.com` },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural, singular: plural.slice(0, -1), kind: plural[0].toUpperCase() + plural.slice(1, -1) },
    versions: [{ name: 'v1', served: true, storage: true }],
  },
})
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

/** Creates an object as root (ignoring that it may exist already). */
async function rootCreate(ctx: Ctx, collection: string, object: unknown): Promise<void> {
  const res = await fetch(ctx.server.http + collection, {
    method: 'POST',
    headers: { ...bearer(ctx, 'root'), 'content-type': 'application/json' },
    body: JSON.stringify(object),
  })
  await res.arrayBuffer()
}

let memberId: string | undefined
async function thisMember(ctx: Ctx): Promise<string> {
  memberId ??= String(((await asRoot(ctx, 'KV', 'Range', { key: b('x') })).header as Message).member_id)
  return memberId
}

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
const req = (m: Message) => () => m

const rows: Row[] = [
  // --- KV
  {
    what: 'read a key in a permitted prefix',
    expect: ALL_OK,
    grpc: ['KV', 'Range', req({ key: b('app/x') })],
    doors: { 'http GET /v1/kv': http('GET', '/v1/kv?key=app/x') },
  },
  {
    what: 'read the permitted prefix',
    expect: ALL_OK,
    grpc: ['KV', 'Range', req({ key: b('app/'), range_end: b('app0') })],
    doors: { 'http GET /v1/kv': http('GET', '/v1/kv?key=app/&prefix=true') },
  },
  {
    what: 'read a range only partly permitted ([a, b))',
    expect: ROOT_ONLY,
    grpc: ['KV', 'Range', req({ key: b('a'), range_end: b('b') })],
    doors: { 'http GET /v1/kv': http('GET', '/v1/kv?key=a&rangeEnd=b') },
  },
  {
    what: 'read every key (--from-key "\\0")',
    expect: ROOT_ONLY,
    grpc: ['KV', 'Range', req({ key: ZERO, range_end: ZERO })],
    doors: { 'http GET /v1/kv': http('GET', '/v1/kv?key=%00&fromKey=true') },
  },
  {
    what: 'read a forbidden key',
    expect: ROOT_ONLY,
    grpc: ['KV', 'Range', req({ key: b('secret/x') })],
    doors: { 'http GET /v1/kv': http('GET', '/v1/kv?key=secret/x') },
  },
  {
    what: 'stream the permitted prefix (RangeStream)',
    expect: ALL_OK,
    grpc: ['KV', 'RangeStream', req({ key: b('app/'), range_end: b('app0') })],
  },
  {
    what: 'stream a forbidden prefix (RangeStream)',
    expect: ROOT_ONLY,
    grpc: ['KV', 'RangeStream', req({ key: b('secret/'), range_end: b('secret0') })],
  },
  {
    what: 'write in the permitted prefix',
    expect: ALICE_ONLY,
    grpc: ['KV', 'Put', req({ key: b('app/w'), value: b('1') })],
    doors: { 'http PUT /v1/kv': http('PUT', '/v1/kv', { key: 'app/w', value: '1' }) },
  },
  {
    what: 'write a key that is only readable',
    expect: ROOT_ONLY,
    grpc: ['KV', 'Put', req({ key: b('cfg'), value: b('1') })],
    doors: { 'http PUT /v1/kv': http('PUT', '/v1/kv', { key: 'cfg', value: '1' }) },
  },
  {
    what: 'delete a range reaching outside the prefix',
    expect: ROOT_ONLY,
    grpc: ['KV', 'DeleteRange', req({ key: b('app/zz'), range_end: b('b') })],
    doors: { 'http DELETE /v1/kv': http('DELETE', '/v1/kv?key=app/zz&rangeEnd=b') },
  },
  {
    what: 'txn: compare and put inside the permissions',
    expect: ALICE_ONLY,
    grpc: ['KV', 'Txn', req(etcdTxn('app/x', [{ request_put: { key: b('app/t'), value: b('1') } }]))],
    doors: { 'http POST /v1/txn': http('POST', '/v1/txn', txnBody('app/x', [{ type: 'put', key: 'app/t', value: '1' }])) },
  },
  {
    what: 'txn: compare on a forbidden key',
    expect: ROOT_ONLY,
    grpc: ['KV', 'Txn', req(etcdTxn('secret/x', [{ request_put: { key: b('app/t'), value: b('2') } }]))],
    doors: { 'http POST /v1/txn': http('POST', '/v1/txn', txnBody('secret/x', [{ type: 'put', key: 'app/t', value: '2' }])) },
  },
  {
    what: 'txn: a nested txn in the failure branch writes a forbidden key',
    expect: ROOT_ONLY,
    grpc: [
      'KV',
      'Txn',
      req(etcdTxn('app/x', [], [{ request_txn: { success: [{ request_put: { key: b('secret/y'), value: b('1') } }] } }])),
    ],
    doors: {
      'http POST /v1/txn': http(
        'POST',
        '/v1/txn',
        txnBody('app/x', [], [{ type: 'txn', success: [{ type: 'put', key: 'secret/y', value: '1' }] }]),
      ),
    },
  },
  {
    what: 'txn: a put attaching a lease with a forbidden key',
    expect: ROOT_ONLY,
    grpc: ['KV', 'Txn', async (ctx) => ({ success: [{ request_put: { key: b('app/l'), value: b('1'), lease: await secretLease(ctx) } }] })],
  },
  {
    what: 'compact (etcd door: no role needed, as etcd 3.4)',
    expect: ANYONE,
    // Each call compacts at a new revision (compacting twice at one revision is an error).
    grpc: ['KV', 'Compact', async (ctx) => ({ revision: await written(ctx) })],
  },
  {
    what: 'compact (native door)',
    expect: ROOT_ONLY,
    doors: { 'http POST /v1/compact': async (ctx, who) => http('POST', '/v1/compact', { revision: await written(ctx) })(ctx, who) },
  },
  // --- history, tree, revert, revision lookups (native)
  {
    what: 'history of the permitted prefix',
    expect: ALL_OK,
    doors: { 'http GET /v1/history': http('GET', '/v1/history?key=app/&prefix=true') },
  },
  { what: 'history of a forbidden key', expect: ROOT_ONLY, doors: { 'http GET /v1/history': http('GET', '/v1/history?key=secret/x') } },
  // Write counts over time and the revision at a time: no key, value or key count is revealed.
  {
    what: 'history buckets (write counts over time)',
    expect: ANYONE,
    doors: { 'http GET /v1/history/buckets': http('GET', '/v1/history/buckets?buckets=2') },
  },
  {
    what: 'key tree of the permitted prefix',
    expect: ALL_OK,
    doors: { 'http GET /v1/keys/tree': http('GET', '/v1/keys/tree?prefix=app/') },
  },
  { what: 'key tree of the whole key space', expect: ROOT_ONLY, doors: { 'http GET /v1/keys/tree': http('GET', '/v1/keys/tree') } },
  {
    what: 'revision at a time',
    expect: ANYONE,
    doors: {
      'http GET /v1/revision-at': (ctx, who) =>
        http('GET', `/v1/revision-at?time=${encodeURIComponent(new Date().toISOString())}`)(ctx, who),
    },
  },
  {
    what: 'revert a key in the permitted prefix',
    expect: ALICE_ONLY,
    doors: {
      'http POST /v1/revert': async (ctx, who) => {
        const revision = await written(ctx, 'app/rv')
        await written(ctx, 'app/rv')
        return http('POST', '/v1/revert', { key: 'app/rv', revision })(ctx, who)
      },
    },
  },
  {
    what: 'revert the permitted prefix (dry run: a read)',
    expect: ALL_OK,
    doors: {
      'http POST /v1/revert': async (ctx, who) =>
        http('POST', '/v1/revert', { key: 'app/', prefix: true, revision: await now(ctx), dryRun: true })(ctx, who),
    },
  },
  {
    what: 'revert a forbidden key',
    expect: ROOT_ONLY,
    doors: {
      'http POST /v1/revert': async (ctx, who) =>
        http('POST', '/v1/revert', { key: 'secret/x', revision: await now(ctx), dryRun: true })(ctx, who),
    },
  },
  // --- watches
  {
    what: 'watch the permitted prefix',
    expect: ALL_OK,
    watchLike: true,
    grpc: ['Watch', 'Watch', req({ create_request: { key: b('app/'), range_end: b('app0') } })],
    doors: { 'ws /v1/watch': wsWatch({ key: 'app/', prefix: true }), 'http GET /v1/watch': ndjsonWatch('/v1/watch?key=app/&prefix=true') },
  },
  {
    what: 'watch a range that is partly forbidden ([a, b))',
    expect: ROOT_ONLY,
    watchLike: true,
    grpc: ['Watch', 'Watch', req({ create_request: { key: b('a'), range_end: b('b') } })],
    doors: { 'ws /v1/watch': wsWatch({ key: 'a', rangeEnd: 'b' }), 'http GET /v1/watch': ndjsonWatch('/v1/watch?key=a&rangeEnd=b') },
  },
  // --- leases
  {
    what: 'lease grant',
    expect: ANYONE,
    grpc: ['Lease', 'LeaseGrant', req({ TTL: 60 })],
    doors: { 'http POST /v1/leases': http('POST', '/v1/leases', { ttl: 60 }) },
  },
  {
    what: 'lease keep-alive, list',
    expect: ANYONE,
    grpc: ['Lease', 'LeaseKeepAlive', async (ctx) => ({ ID: String((await asRoot(ctx, 'Lease', 'LeaseGrant', { TTL: 60 })).ID) })],
    doors: {
      'http POST /v1/leases/:id/keepalive': async (ctx, who) => {
        const id = String((await asRoot(ctx, 'Lease', 'LeaseGrant', { TTL: 60 })).ID)
        return http('POST', `/v1/leases/${id}/keepalive`, {})(ctx, who)
      },
      'http GET /v1/leases': http('GET', '/v1/leases'),
    },
  },
  { what: 'lease list (etcd)', expect: ANYONE, grpc: ['Lease', 'LeaseLeases', req({})] },
  {
    what: 'lease revoke, with a forbidden key attached',
    expect: ROOT_ONLY,
    grpc: ['Lease', 'LeaseRevoke', async (ctx) => ({ ID: await secretLease(ctx) })],
    doors: { 'http DELETE /v1/leases/:id': async (ctx, who) => http('DELETE', `/v1/leases/${await secretLease(ctx)}`)(ctx, who) },
  },
  {
    what: 'lease time-to-live listing a forbidden key',
    expect: ROOT_ONLY,
    grpc: ['Lease', 'LeaseTimeToLive', async (ctx) => ({ ID: await secretLease(ctx), keys: true })],
    doors: { 'http GET /v1/leases/:id': async (ctx, who) => http('GET', `/v1/leases/${await secretLease(ctx)}?keys=true`)(ctx, who) },
  },
  // --- cluster
  { what: 'member list', expect: ANYONE, grpc: ['Cluster', 'MemberList', req({})] },
  { what: 'member add', expect: ROOT_THEN_UNIMPLEMENTED, grpc: ['Cluster', 'MemberAdd', req({ peerURLs: ['http://127.0.0.1:1'] })] },
  { what: 'member remove', expect: ROOT_THEN_UNIMPLEMENTED, grpc: ['Cluster', 'MemberRemove', req({ ID: '1' })] },
  { what: 'member update', expect: ROOT_THEN_UNIMPLEMENTED, grpc: ['Cluster', 'MemberUpdate', req({ ID: '1' })] },
  { what: 'member promote', expect: ROOT_THEN_UNIMPLEMENTED, grpc: ['Cluster', 'MemberPromote', req({ ID: '1' })] },
  // --- maintenance
  { what: 'status (etcd)', expect: ALL_OK, grpc: ['Maintenance', 'Status', req({})] },
  { what: 'list alarms', expect: ALL_OK, grpc: ['Maintenance', 'Alarm', req({ action: 0, alarm: 0 })] },
  { what: 'deactivate an alarm', expect: ROOT_ONLY, grpc: ['Maintenance', 'Alarm', req({ action: 2, alarm: 1, memberID: '0' })] },
  {
    what: 'snapshot, defragment, hash (maintenance)',
    expect: ROOT_ONLY,
    grpc: ['Maintenance', 'Defragment', req({})],
    doors: { 'http GET /v1/snapshot': http('GET', '/v1/snapshot') },
  },
  { what: 'snapshot (etcd)', expect: ROOT_ONLY, grpc: ['Maintenance', 'Snapshot', req({})] },
  { what: 'hash', expect: ROOT_ONLY, grpc: ['Maintenance', 'Hash', req({})] },
  { what: 'hash kv', expect: ROOT_ONLY, grpc: ['Maintenance', 'HashKV', req({ revision: 0 })] },
  {
    what: 'move leader (to this member)',
    expect: ROOT_ONLY,
    grpc: ['Maintenance', 'MoveLeader', async (ctx) => ({ targetID: await thisMember(ctx) })],
  },
  { what: 'downgrade', expect: ROOT_THEN_UNIMPLEMENTED, grpc: ['Maintenance', 'Downgrade', req({ action: 'VALIDATE', version: '3.4.0' })] },
  // --- alarms, cursors, status, health (native)
  { what: 'list alarms (native)', expect: ANYONE, doors: { 'http GET /v1/alarms': http('GET', '/v1/alarms') } },
  {
    what: 'deactivate an alarm (native)',
    expect: ROOT_ONLY,
    doors: { 'http DELETE /v1/alarms/:alarm': http('DELETE', '/v1/alarms/NOSPACE') },
  },
  { what: 'list cursors', expect: ANYONE, doors: { 'http GET /v1/cursors': http('GET', '/v1/cursors') } },
  {
    what: 'commit and delete a cursor',
    expect: ROOT_ONLY,
    doors: {
      'http PUT /v1/cursors/:name': async (ctx, who) => http('PUT', '/v1/cursors/c1', { revision: await now(ctx) })(ctx, who),
      'http DELETE /v1/cursors/:name': async (ctx, who) => {
        await fetch(`${ctx.server.http}/v1/cursors/c2`, {
          method: 'PUT',
          headers: { ...bearer(ctx, 'root'), 'content-type': 'application/json' },
          body: JSON.stringify({ revision: await now(ctx) }),
        })
        return http('DELETE', '/v1/cursors/c2')(ctx, who)
      },
    },
  },
  {
    what: 'status, health, metrics, version, openapi, ui (and /, which redirects to it)',
    expect: ANYONE,
    doors: {
      'http GET /v1/status': http('GET', '/v1/status'),
      'http GET /healthz': http('GET', '/healthz'),
      'http GET /readyz': http('GET', '/readyz'),
      'http GET /metrics': http('GET', '/metrics'),
      'http GET /version': http('GET', '/version'),
      'http GET /openapi/v3': http('GET', '/openapi/v3'),
      'http GET /openapi/v3/*': http('GET', '/openapi/v3/api/v1'),
      'http GET /': http('GET', '/'),
      'http GET /ui': http('GET', '/ui'),
      'http GET /ui/*': http('GET', '/ui/index.html'),
    },
  },
  // --- auth management
  {
    what: 'auth status',
    expect: ANYONE,
    grpc: ['Auth', 'AuthStatus', req({})],
    doors: { 'http GET /v1/auth/status': http('GET', '/v1/auth/status') },
  },
  {
    what: 'authenticate',
    expect: ANYONE,
    grpc: ['Auth', 'Authenticate', req({ name: 'carol', password: 'carolpw' })],
    doors: { 'http POST /v1/auth/authenticate': http('POST', '/v1/auth/authenticate', { name: 'carol', password: 'carolpw' }) },
  },
  {
    what: 'enable auth',
    expect: ROOT_ONLY,
    grpc: ['Auth', 'AuthEnable', req({})],
    doors: { 'http POST /v1/auth/enable': http('POST', '/v1/auth/enable', {}) },
  },
  {
    what: 'disable auth (root enables it again at once)',
    expect: ROOT_ONLY,
    grpc: ['Auth', 'AuthDisable', req({})],
    doors: { 'http POST /v1/auth/disable': http('POST', '/v1/auth/disable', {}) },
  },
  {
    what: 'add a user',
    expect: ROOT_ONLY,
    grpc: ['Auth', 'UserAdd', (_ctx, who) => ({ name: `g-${who}-${Math.random()}`, password: 'x' })],
    doors: {
      'http POST /v1/auth/users': (ctx, who) =>
        http('POST', '/v1/auth/users', { name: `h-${who}-${Math.random()}`, password: 'x' })(ctx, who),
    },
  },
  {
    what: 'get a user (itself, or as root)',
    expect: ALICE_ONLY,
    grpc: ['Auth', 'UserGet', req({ name: 'alice' })],
    doors: { 'http GET /v1/auth/users/:name': http('GET', '/v1/auth/users/alice') },
  },
  {
    what: 'list users',
    expect: ROOT_ONLY,
    grpc: ['Auth', 'UserList', req({})],
    doors: { 'http GET /v1/auth/users': http('GET', '/v1/auth/users') },
  },
  {
    what: 'delete a user',
    expect: ROOT_ONLY,
    grpc: [
      'Auth',
      'UserDelete',
      async (ctx) => (await ensure(ctx, 'Auth', 'UserAdd', { name: 'victim', password: 'x' }), { name: 'victim' }),
    ],
    doors: {
      'http DELETE /v1/auth/users/:name': async (ctx, who) => {
        await ensure(ctx, 'Auth', 'UserAdd', { name: 'victim', password: 'x' })
        return http('DELETE', '/v1/auth/users/victim')(ctx, who)
      },
    },
  },
  {
    what: "change a user's password",
    expect: ROOT_ONLY,
    grpc: [
      'Auth',
      'UserChangePassword',
      async (ctx) => (await ensure(ctx, 'Auth', 'UserAdd', { name: 'victim', password: 'x' }), { name: 'victim', password: 'y' }),
    ],
    doors: {
      'http PUT /v1/auth/users/:name/password': async (ctx, who) => {
        await ensure(ctx, 'Auth', 'UserAdd', { name: 'victim', password: 'x' })
        return http('PUT', '/v1/auth/users/victim/password', { password: 'z' })(ctx, who)
      },
    },
  },
  {
    what: 'grant a role to a user',
    expect: ROOT_ONLY,
    grpc: [
      'Auth',
      'UserGrantRole',
      async (ctx) => (await ensure(ctx, 'Auth', 'UserAdd', { name: 'victim', password: 'x' }), { user: 'victim', role: 'viewer' }),
    ],
    doors: {
      'http PUT /v1/auth/users/:name/roles/:role': async (ctx, who) => {
        await ensure(ctx, 'Auth', 'UserAdd', { name: 'victim', password: 'x' })
        return http('PUT', '/v1/auth/users/victim/roles/viewer')(ctx, who)
      },
    },
  },
  {
    what: 'revoke a role from a user',
    expect: ROOT_ONLY,
    grpc: [
      'Auth',
      'UserRevokeRole',
      async (ctx) => {
        await ensure(ctx, 'Auth', 'UserAdd', { name: 'victim', password: 'x' })
        await ensure(ctx, 'Auth', 'UserGrantRole', { user: 'victim', role: 'viewer' })
        return { name: 'victim', role: 'viewer' }
      },
    ],
    doors: {
      'http DELETE /v1/auth/users/:name/roles/:role': async (ctx, who) => {
        await ensure(ctx, 'Auth', 'UserAdd', { name: 'victim', password: 'x' })
        await ensure(ctx, 'Auth', 'UserGrantRole', { user: 'victim', role: 'viewer' })
        return http('DELETE', '/v1/auth/users/victim/roles/viewer')(ctx, who)
      },
    },
  },
  {
    what: 'add a role',
    expect: ROOT_ONLY,
    grpc: ['Auth', 'RoleAdd', (_ctx, who) => ({ name: `g-${who}-${Math.random()}` })],
    doors: { 'http POST /v1/auth/roles': (ctx, who) => http('POST', '/v1/auth/roles', { name: `h-${who}-${Math.random()}` })(ctx, who) },
  },
  {
    what: 'get a role (held, or as root)',
    expect: ALICE_ONLY,
    grpc: ['Auth', 'RoleGet', req({ role: 'app' })],
    doors: { 'http GET /v1/auth/roles/:name': http('GET', '/v1/auth/roles/app') },
  },
  {
    what: 'list roles',
    expect: ROOT_ONLY,
    grpc: ['Auth', 'RoleList', req({})],
    doors: { 'http GET /v1/auth/roles': http('GET', '/v1/auth/roles') },
  },
  {
    what: 'delete a role',
    expect: ROOT_ONLY,
    grpc: ['Auth', 'RoleDelete', async (ctx) => (await ensure(ctx, 'Auth', 'RoleAdd', { name: 'victim-role' }), { role: 'victim-role' })],
    doors: {
      'http DELETE /v1/auth/roles/:name': async (ctx, who) => {
        await ensure(ctx, 'Auth', 'RoleAdd', { name: 'victim-role' })
        return http('DELETE', '/v1/auth/roles/victim-role')(ctx, who)
      },
    },
  },
  {
    what: 'grant a permission to a role',
    expect: ROOT_ONLY,
    grpc: [
      'Auth',
      'RoleGrantPermission',
      async (ctx) => (
        await ensure(ctx, 'Auth', 'RoleAdd', { name: 'victim-role' }),
        { name: 'victim-role', perm: { permType: 0, key: b('z') } }
      ),
    ],
    doors: {
      'http POST /v1/auth/roles/:name/permissions': async (ctx, who) => {
        await ensure(ctx, 'Auth', 'RoleAdd', { name: 'victim-role' })
        return http('POST', '/v1/auth/roles/victim-role/permissions', { type: 'READ', key: 'z' })(ctx, who)
      },
    },
  },
  {
    what: 'revoke a permission from a role',
    expect: ROOT_ONLY,
    grpc: [
      'Auth',
      'RoleRevokePermission',
      async (ctx) => {
        await ensure(ctx, 'Auth', 'RoleAdd', { name: 'victim-role' })
        await ensure(ctx, 'Auth', 'RoleGrantPermission', { name: 'victim-role', perm: { permType: 0, key: b('z') } })
        return { role: 'victim-role', key: b('z') }
      },
    ],
    doors: {
      'http DELETE /v1/auth/roles/:name/permissions': async (ctx, who) => {
        await ensure(ctx, 'Auth', 'RoleAdd', { name: 'victim-role' })
        await ensure(ctx, 'Auth', 'RoleGrantPermission', { name: 'victim-role', perm: { permType: 0, key: b('z') } })
        return http('DELETE', '/v1/auth/roles/victim-role/permissions?key=z')(ctx, who)
      },
    },
  },
  // --- lock and election
  {
    what: 'lock (and unlock) a name in the permitted prefix',
    expect: ALICE_ONLY,
    grpc: ['Lock', 'Lock', req({ name: b('app/lk') })],
  },
  { what: 'lock a name in a forbidden prefix', expect: ROOT_ONLY, grpc: ['Lock', 'Lock', req({ name: b('secret/lk') })] },
  { what: 'unlock (delete) a key in the permitted prefix', expect: ALICE_ONLY, grpc: ['Lock', 'Unlock', req({ key: b('app/unl') })] },
  { what: 'unlock (delete) a forbidden key', expect: ROOT_ONLY, grpc: ['Lock', 'Unlock', req({ key: b('secret/none') })] },
  {
    what: 'campaign in the permitted prefix',
    expect: ALICE_ONLY,
    grpc: ['Election', 'Campaign', req({ name: b('app/cmp'), value: b('v') })],
  },
  {
    what: 'campaign in a forbidden prefix',
    expect: ROOT_ONLY,
    grpc: ['Election', 'Campaign', req({ name: b('/registry/configmaps/prod'), value: b('v') })],
  },
  {
    what: 'proclaim a leader in the permitted prefix',
    expect: ALICE_ONLY,
    grpc: ['Election', 'Proclaim', async (ctx) => ({ leader: await rootLeader(ctx), value: b('w') })],
  },
  {
    // Root passes authorization; the key does not lead (etcd's "election: not leader").
    what: 'proclaim over a forbidden key',
    expect: { ...ROOT_ONLY, root: 'UNKNOWN' },
    grpc: ['Election', 'Proclaim', req({ leader: { name: b('secret'), key: b('secret/x'), rev: 0, lease: 0 }, value: b('w') })],
  },
  {
    what: 'resign a leader in the permitted prefix',
    expect: ALICE_ONLY,
    grpc: ['Election', 'Resign', req({ leader: { name: b('app/rs'), key: b('app/rs/1'), rev: 1, lease: 0 } })],
  },
  { what: 'leader of the permitted prefix', expect: ALL_OK, grpc: ['Election', 'Leader', req({ name: b('app') })] },
  { what: 'leader of a forbidden prefix', expect: ROOT_ONLY, grpc: ['Election', 'Leader', req({ name: b('secret') })] },
  { what: 'observe the permitted prefix', expect: ALL_OK, grpc: ['Election', 'Observe', req({ name: b('app') })] },
  { what: 'observe a forbidden prefix', expect: ROOT_ONLY, grpc: ['Election', 'Observe', req({ name: b('secret') })] },
  // --- resources
  {
    what: 'resources: discovery',
    expect: ANYONE,
    doors: { 'http GET /api': http('GET', '/api'), 'http GET /apis': http('GET', '/apis') },
  },
  {
    what: 'resources: list and watch configmaps in the permitted namespace',
    expect: ALICE_ONLY,
    doors: {
      'http GET /api/*': all(http('GET', '/api/v1/namespaces/team/configmaps'), resourceWatch('/api/v1/namespaces/team/configmaps')),
    },
  },
  {
    what: 'resources: create, replace, patch, delete a configmap in the permitted namespace',
    expect: ALICE_ONLY,
    doors: {
      'http POST /api/*': (ctx, who) => http('POST', '/api/v1/namespaces/team/configmaps', configMap('team', `cm-${who}`))(ctx, who),
      'http PUT /api/*': async (ctx, who) => {
        await rootCreate(ctx, '/api/v1/namespaces/team/configmaps', configMap('team', 'replaced'))
        return http('PUT', '/api/v1/namespaces/team/configmaps/replaced', configMap('team', 'replaced'))(ctx, who)
      },
      'http PATCH /api/*': async (ctx, who) => {
        await fetch(`${ctx.server.http}/api/v1/namespaces/team/configmaps`, {
          method: 'POST',
          headers: { ...bearer(ctx, 'root'), 'content-type': 'application/json' },
          body: JSON.stringify(configMap('team', 'patched')),
        })
        const res = await fetch(`${ctx.server.http}/api/v1/namespaces/team/configmaps/patched`, {
          method: 'PATCH',
          headers: { ...bearer(ctx, who), 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ data: { b: who } }),
        })
        return httpOutcome(res)
      },
      'http DELETE /api/*': async (ctx, who) => {
        await fetch(`${ctx.server.http}/api/v1/namespaces/team/configmaps`, {
          method: 'POST',
          headers: { ...bearer(ctx, 'root'), 'content-type': 'application/json' },
          body: JSON.stringify(configMap('team', `del-${who}`)),
        })
        return http('DELETE', `/api/v1/namespaces/team/configmaps/del-${who}`)(ctx, who)
      },
    },
  },
  {
    what: 'resources: list, watch or create in another namespace, or across all namespaces (partly forbidden)',
    expect: ROOT_ONLY,
    doors: {
      'http GET /api/*': all(http('GET', '/api/v1/namespaces/other/configmaps'), resourceWatch('/api/v1/configmaps')),
      'http POST /api/*': (ctx, who) => http('POST', '/api/v1/namespaces/other/configmaps', configMap('other', `cm-${who}`))(ctx, who),
    },
  },
  {
    what: 'resources: custom resource definitions (/apis, cluster-scoped)',
    expect: ROOT_ONLY,
    doors: {
      'http GET /apis/*': http('GET', CRDS),
      'http POST /apis/*': (ctx, who) => http('POST', CRDS, crd(`${who}things`))(ctx, who),
      'http PUT /apis/*': async (ctx, who) => {
        await rootCreate(ctx, CRDS, crd('widgets'))
        const current = (await (
          await fetch(`${ctx.server.http}${CRDS}/widgets.example.com`, { headers: bearer(ctx, 'root') })
        ).json()) as Message
        return http('PUT', `${CRDS}/widgets.example.com`, current)(ctx, who)
      },
      'http PATCH /apis/*': async (ctx, who) => {
        await rootCreate(ctx, CRDS, crd('gadgets'))
        const res = await fetch(`${ctx.server.http}${CRDS}/gadgets.example.com`, {
          method: 'PATCH',
          headers: { ...bearer(ctx, who), 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ metadata: { labels: { by: who } } }),
        })
        return httpOutcome(res)
      },
      'http DELETE /apis/*': async (ctx, who) => {
        await rootCreate(ctx, CRDS, crd(`${who}gizmos`))
        return http('DELETE', `${CRDS}/${who}gizmos.example.com`)(ctx, who)
      },
    },
  },
  {
    what: 'resources: writes to the discovery roots (not served)',
    expect: { alice: 'MethodNotAllowed', carol: 'MethodNotAllowed', root: 'MethodNotAllowed', nobody: 'MethodNotAllowed' },
    doors: Object.fromEntries(
      ['POST', 'PUT', 'PATCH', 'DELETE'].flatMap((m) =>
        ['/api', '/apis'].map((p) => [`http ${m} ${p}`, http(m, p, m === 'DELETE' ? undefined : {})]),
      ),
    ),
  },
]

/** Root-only rows whose root call needs undoing: auth disabled is enabled again and everyone logs in. */
async function afterRun(ctx: Ctx, row: Row, who: Who): Promise<void> {
  if (row.what.startsWith('disable auth') && who === 'root') {
    await ctx.grpc.call('Auth', 'AuthEnable', {})
    ctx.tokens.alice = await login(ctx, 'alice', 'alicepw')
    ctx.tokens.root = await login(ctx, 'root', 'rootpw')
  }
  // A lock taken, or a campaign won, is given up again so the next caller is not left waiting.
  if (row.grpc !== undefined && (row.grpc[1] === 'Lock' || row.grpc[1] === 'Campaign')) {
    const prefix = (row.grpc[2](ctx, who) as Message).name as Buffer
    await asRoot(ctx, 'KV', 'DeleteRange', { key: Buffer.concat([prefix, b('/')]), range_end: Buffer.concat([prefix, b('0')]) })
  }
}

/** Every door a row runs on, by name. */
function doorsOf(row: Row): Array<[string, Run]> {
  const out: Array<[string, Run]> = []
  if (row.grpc !== undefined) {
    const spec = row.grpc
    out.push([`grpc ${fullName(spec[0])}/${spec[1]}`, (ctx, who) => grpcRun(ctx, who, spec)])
    for (const [path, [service, method]] of Object.entries(GATEWAY_ROUTES)) {
      if (service === fullName(spec[0]) && method === spec[1])
        out.push([`gateway /v3/${path}`, (ctx, who) => gatewayRun(ctx, who, path, spec)])
    }
  }
  for (const [name, run] of Object.entries(row.doors ?? {})) out.push([name, run])
  return out
}

describe('security: the permission table (door × method or route × caller)', function () {
  this.timeout(120_000)
  let ctx: Ctx

  before(async () => {
    ctx = await startSecuredServer()
  })

  after(async () => {
    for (const c of clients.values()) c.close()
    clients.clear()
    await stopSecuredServer(ctx)
  })

  it('covers exactly every gRPC method, gateway path and HTTP route the server serves', async () => {
    const served = new Set<string>()
    for (const service of protoServices()) for (const m of serviceMethods(service)) served.add(`grpc ${service}/${m.name}`)
    for (const path of Object.keys(GATEWAY_ROUTES)) served.add(`gateway /v3/${path}`)
    // The routes as fastify lists them, from a server started here (auth plays no part in the list).
    const dir = await mkdtemp(join(tmpdir(), 'kvlog-routes-'))
    const server = await startServer({
      ...DEFAULT_CONFIG,
      dataDir: dir,
      listenHttp: '127.0.0.1:0',
      listenGrpc: '127.0.0.1:0',
      logLevel: 'error',
    })
    try {
      for (const r of server.routes()) served.add(`http ${r}`)
    } finally {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    }
    served.add('ws /v1/watch')
    const covered = new Set(rows.flatMap((r) => doorsOf(r).map(([name]) => name)))
    expect([...served].filter((s) => !covered.has(s)).sort(), 'served but not in the table').to.deep.equal([])
    expect([...covered].filter((c) => !served.has(c)).sort(), 'in the table but not served').to.deep.equal([])
  })

  for (const row of rows) {
    for (const [door, run] of doorsOf(row)) {
      it(`${door}: ${row.what}`, async () => {
        const got: Partial<Record<Who, string>> = {}
        for (const who of CALLERS) {
          got[who] = await run(ctx, who)
          await afterRun(ctx, row, who)
        }
        // etcd answers a watch create it refuses for any reason with permission denied (no identity included).
        const etcdWatch = row.watchLike === true && (door.startsWith('grpc') || door.startsWith('gateway'))
        expect(got).to.deep.equal(etcdWatch ? { ...row.expect, nobody: 'PERMISSION_DENIED' } : row.expect)
      })
    }
  }
})
