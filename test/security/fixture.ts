/**
 * One real `kvlog serve` with auth enabled, and the callers the security suites ask as: alice (a simple
 * token from Authenticate), carol (a static token from tokenAuthFile), root (a token from the native
 * door's login), and nobody. Each helper runs one request on one door and resolves with its outcome: ok,
 * or the stable code of the refusal (PERMISSION_DENIED, UNAUTHENTICATED).
 *
 * Permissions: alice has readwrite on the prefix app/, read on the key cfg, readwrite on
 * /registry/configmaps/team/ and read on /registry/namespaces/team (creating an object reads its
 * namespace); carol has read on app/. Keys app/x, cfg, secret/x and b exist; namespaces team and other too.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Metadata, type ServiceError } from '@grpc/grpc-js'
import WebSocket from 'ws'
import { serviceDefinition, type Message } from '../../apiserver/etcd/proto.js'
import { etcdGrpc, type EtcdGrpc } from '../support/etcd-grpc.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

export type Outcome = 'ok' | 'PERMISSION_DENIED' | 'UNAUTHENTICATED'
export type Who = 'alice' | 'carol' | 'root' | 'nobody'
export const CALLERS: Who[] = ['alice', 'carol', 'nobody', 'root']

export const b = (s: string) => Buffer.from(s)
export const ZERO = Buffer.from([0])

export interface Ctx {
  server: ServerProcess
  grpc: EtcdGrpc
  tokens: Record<Who, string | undefined>
  dir: string
}

/** The proto package of each service the etcd door serves. */
export const PROTO_SERVICE: Record<string, string> = {
  KV: 'etcdserverpb.KV',
  Watch: 'etcdserverpb.Watch',
  Lease: 'etcdserverpb.Lease',
  Cluster: 'etcdserverpb.Cluster',
  Maintenance: 'etcdserverpb.Maintenance',
  Auth: 'etcdserverpb.Auth',
  Lock: 'v3lockpb.Lock',
  Election: 'v3electionpb.Election',
}

export function metadata(ctx: Ctx, who: Who): Metadata {
  const m = new Metadata()
  const t = ctx.tokens[who]
  if (t !== undefined) m.set('token', t)
  return m
}

/** The kvlog code of a gRPC error (trailing metadata kvlog-code). */
export function grpcOutcome(err: unknown): Outcome {
  const code = (err as ServiceError).metadata?.get('kvlog-code')[0]
  if (code === 'PERMISSION_DENIED' || code === 'UNAUTHENTICATED') return code
  throw err
}

/** A unary etcd call. */
export async function etcdCall(ctx: Ctx, who: Who, service: string, method: string, request: Message): Promise<Outcome> {
  try {
    await ctx.grpc.call(service, method, request, metadata(ctx, who))
    return 'ok'
  } catch (err) {
    return grpcOutcome(err)
  }
}

/**
 * A call through the etcd JSON gateway (bytes in base64; the token in `authorization`). The gateway's
 * error carries the gRPC code: 7 permission denied, 16 unauthenticated; etcd answers a call without
 * identity with 3 ("user name is empty"), which these requests (all well-formed) get for no other reason.
 */
export async function gatewayCall(ctx: Ctx, who: Who, path: string, body: unknown): Promise<Outcome> {
  const t = ctx.tokens[who]
  const res = await fetch(`http://${ctx.server.grpc}/v3/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(t === undefined ? {} : { authorization: t }) },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  // A stream answers 200 with its messages, or with an error object as the first line.
  const first = text.split('\n')[0]
  const parsed = (first === '' ? {} : JSON.parse(first)) as { code?: number; error?: { grpc_code?: number } | string }
  const code = res.ok ? (typeof parsed.error === 'object' ? parsed.error.grpc_code : undefined) : parsed.code
  if (code === undefined) return 'ok'
  if (code === 7) return 'PERMISSION_DENIED'
  if (code === 16 || code === 3) return 'UNAUTHENTICATED'
  throw new Error(`gateway ${path}: HTTP ${res.status} ${text}`)
}

export async function httpOutcome(res: Response): Promise<Outcome> {
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

export function bearer(ctx: Ctx, who: Who): Record<string, string> {
  const t = ctx.tokens[who]
  return t === undefined ? {} : { authorization: `Bearer ${t}` }
}

/** A request on the native or resource door. */
export async function httpCall(ctx: Ctx, who: Who, method: string, path: string, body?: unknown): Promise<Outcome> {
  const headers: Record<string, string> = bearer(ctx, who)
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(ctx.server.http + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  return httpOutcome(res)
}

/** A native WebSocket opened as `who` (the upgrade carries the token). */
export function openWebSocket(ctx: Ctx, who: Who, path = '/v1/watch'): WebSocket {
  return new WebSocket(ctx.server.http.replace(/^http/, 'ws') + path, { headers: bearer(ctx, who) })
}

/** The next JSON message of a WebSocket. */
export function nextMessage(ws: WebSocket): Promise<{ type: string; id?: number; code?: string }> {
  return new Promise((resolve, reject) => {
    ws.once('message', (data) => resolve(JSON.parse(String(data)) as { type: string; code?: string }))
    ws.once('error', reject)
  })
}

export const configMap = (ns: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { a: '1' },
})

/** Starts the server, makes the users, roles and keys, enables auth and logs everyone in. */
export async function startSecuredServer(): Promise<Ctx> {
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-security-'))
  await writeFile(join(dir, 'tokens.csv'), '# token,user,uid,groups\nstatic-carol-token,carol,1001,"viewers"\n')
  const server = await startServerProcess(['--token-auth-file', join(dir, 'tokens.csv'), '--auth-password-hash-cost', '10'])
  const grpc = etcdGrpc(server.grpc, undefined, (service) => serviceDefinition(PROTO_SERVICE[service] ?? `etcdserverpb.${service}`))
  const ctx: Ctx = { server, grpc, dir, tokens: { nobody: undefined, alice: undefined, carol: undefined, root: undefined } }
  const auth = (method: string, request: Message) => grpc.call('Auth', method, request)
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
    await grpc.call('KV', 'Put', { key: b(k), value: b(v) })
  // Namespaces exist before objects are made in them (creating one reads its namespace).
  for (const name of ['team', 'other']) {
    const res = await fetch(`${server.http}/api/v1/namespaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    })
    if (res.status !== 201) throw new Error(`create namespace ${name}: HTTP ${res.status}`)
  }
  await auth('AuthEnable', {})
  ctx.tokens.alice = await login(ctx, 'alice', 'alicepw')
  ctx.tokens.carol = 'static-carol-token'
  // The native door's login gives a token that works on every door.
  const res = await fetch(`${server.http}/v1/auth/authenticate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'root', password: 'rootpw' }),
  })
  ctx.tokens.root = ((await res.json()) as { token: string }).token
  return ctx
}

/** A fresh token from etcd's Authenticate. */
export async function login(ctx: Ctx, name: string, password: string): Promise<string> {
  return String((await ctx.grpc.call('Auth', 'Authenticate', { name, password })).token)
}

export async function stopSecuredServer(ctx: Ctx | undefined): Promise<void> {
  ctx?.grpc.close()
  await ctx?.server.stop()
  await ctx?.server.cleanup()
  if (ctx !== undefined) await rm(ctx.dir, { recursive: true, force: true })
}
