/**
 * Sessions do not outlive credentials: a running watch (etcd gRPC Watch, native WebSocket, native NDJSON,
 * resource API) is canceled with PERMISSION_DENIED when its user loses READ on the range, changes password or is
 * deleted; a WebSocket opened with a token takes no new watch once that token is no longer valid. A
 * browser's WebSocket offers its token as a subprotocol, which the server takes and never echoes.
 */
import { expect } from 'chai'
import WebSocket from 'ws'
import type { Message } from '../../apiserver/etcd/proto.js'
import { responses } from '../support/etcd-grpc.js'
import { b, login, metadata, nextMessage, openWebSocket, startSecuredServer, stopSecuredServer, type Ctx } from './fixture.js'

interface Running {
  /** Resolves with the code the watch ended with. */
  ended: Promise<string>
  close(): void
}

/** An etcd Watch on app/ as alice: ends with its cancel reason. */
async function etcdWatch(ctx: Ctx): Promise<Running> {
  const stream = ctx.grpc.stream('Watch', 'Watch', metadata(ctx, 'alice'))
  const r = responses(stream)
  stream.write({ create_request: { key: b('app/'), range_end: b('app0') } })
  expect((await r.next()).created).to.equal(true)
  const ended = (async () => {
    for (;;) {
      const m = await r.next(30_000)
      if (m.canceled === true) return /PermissionDenied/.test(String(m.cancel_reason)) ? 'PERMISSION_DENIED' : String(m.cancel_reason)
    }
  })()
  return { ended, close: () => stream.cancel() }
}

/** A native WebSocket watch on app/ as alice: ends with the code of its `canceled` message. */
async function wsWatch(ctx: Ctx): Promise<Running & { ws: WebSocket }> {
  const ws = openWebSocket(ctx, 'alice')
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  const created = nextMessage(ws)
  ws.send(JSON.stringify({ op: 'create', id: 1, key: 'app/', prefix: true }))
  expect((await created).type).to.equal('created')
  const ended = new Promise<string>((resolve) => {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { type: string; id?: number; code?: string }
      if (m.type === 'canceled' && m.id === 1) resolve(m.code ?? '')
    })
  })
  return { ws, ended, close: () => ws.terminate() }
}

/** The JSON lines of a streaming response, as alice. */
async function jsonLines(ctx: Ctx, path: string): Promise<{ lines: AsyncGenerator<Record<string, unknown>>; close(): void }> {
  const ac = new AbortController()
  const res = await fetch(ctx.server.http + path, { headers: { authorization: `Bearer ${ctx.tokens.alice}` }, signal: ac.signal })
  expect(res.status).to.equal(200)
  const reader = res.body!.getReader()
  let text = ''
  const lines = async function* () {
    for (;;) {
      while (!text.includes('\n')) {
        const { value, done } = await reader.read()
        if (done) return
        text += Buffer.from(value).toString()
      }
      const i = text.indexOf('\n')
      yield JSON.parse(text.slice(0, i)) as Record<string, unknown>
      text = text.slice(i + 1)
    }
  }
  return { lines: lines(), close: () => ac.abort() }
}

/** A native NDJSON watch on app/ as alice: ends with the code of its `canceled` line. */
async function ndjsonWatch(ctx: Ctx): Promise<Running> {
  const { lines, close } = await jsonLines(ctx, '/v1/watch?key=app/&prefix=true')
  expect((await lines.next()).value?.type).to.equal('created')
  const ended = (async () => {
    for await (const m of lines) if (m.type === 'canceled') return String(m.code)
    return 'ended without canceled'
  })()
  ended.catch(() => undefined)
  return { ended, close }
}

/** A resource watch on the team namespace's configmaps as alice: ends with its ERROR event's reason. */
async function resourceWatch(ctx: Ctx): Promise<Running> {
  const { lines, close } = await jsonLines(ctx, '/api/v1/namespaces/team/configmaps?watch=1')
  const ended = (async () => {
    for await (const m of lines) {
      const reason = (m.object as { reason?: string } | undefined)?.reason
      if (m.type === 'ERROR') return reason === 'Forbidden' ? 'PERMISSION_DENIED' : String(reason)
    }
    return 'ended without ERROR'
  })()
  ended.catch(() => undefined)
  return { ended, close }
}

describe('security: sessions end when credentials change', function () {
  this.timeout(60_000)
  let ctx: Ctx
  const root = (method: string, request: Message) => ctx.grpc.call('Auth', method, request, metadata(ctx, 'root'))

  before(async () => {
    ctx = await startSecuredServer()
  })

  after(() => stopSecuredServer(ctx))

  const openAll = async () => [await etcdWatch(ctx), await wsWatch(ctx), await ndjsonWatch(ctx), await resourceWatch(ctx)]
  const DENIED = ['PERMISSION_DENIED', 'PERMISSION_DENIED', 'PERMISSION_DENIED', 'PERMISSION_DENIED']
  const endedCodes = async (running: Running[]) => {
    const codes = await Promise.all(running.map((r) => r.ended))
    for (const r of running) r.close()
    return codes
  }

  it("running watches are canceled with PERMISSION_DENIED when the user's role is revoked", async () => {
    const running = await openAll()
    await root('UserRevokeRole', { name: 'alice', role: 'app' })
    expect(await endedCodes(running)).to.deep.equal(DENIED)
    await root('UserGrantRole', { user: 'alice', role: 'app' })
  })

  it("a browser's WebSocket carries the token as a subprotocol: answered with kvlog.watch, never the token", async () => {
    ctx.tokens.alice = await login(ctx, 'alice', 'alicepw')
    const url = ctx.server.http.replace(/^http/, 'ws') + '/v1/watch'
    const tokenProtocol = `base64url.bearer.kvlog.${Buffer.from(ctx.tokens.alice).toString('base64url')}`
    const ws = new WebSocket(url, ['kvlog.watch', tokenProtocol])
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
    expect(ws.protocol).to.equal('kvlog.watch')
    const created = nextMessage(ws)
    ws.send(JSON.stringify({ op: 'create', id: 1, key: 'app/', prefix: true }))
    expect((await created).type).to.equal('created')
    ws.close()
    const bad = new WebSocket(url, ['kvlog.watch', `base64url.bearer.kvlog.${Buffer.from('no-such-token').toString('base64url')}`])
    const status = await new Promise<number>((resolve) => bad.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)))
    expect(status).to.equal(401)
    bad.on('error', () => undefined) // the refused handshake, ended here
    bad.terminate()
  })

  it('an unrelated auth change cancels nothing', async () => {
    ctx.tokens.alice = await login(ctx, 'alice', 'alicepw')
    const ws = await wsWatch(ctx)
    await root('RoleAdd', { name: 'unrelated-2' })
    const event = nextMessage(ws.ws)
    await ctx.grpc.call('KV', 'Put', { key: b('app/after'), value: b('1') }, metadata(ctx, 'root'))
    expect((await event).type).to.equal('events')
    ws.close()
  })

  it('after a password change: running watches end, and the WebSocket takes no new watch', async () => {
    ctx.tokens.alice = await login(ctx, 'alice', 'alicepw')
    const running = await openAll()
    const ws = (running[1] as Running & { ws: WebSocket }).ws
    await root('UserChangePassword', { name: 'alice', password: 'alicepw2' })
    const codes = await Promise.all(running.map((r) => r.ended))
    expect(codes).to.deep.equal(DENIED)
    const answer = nextMessage(ws)
    ws.send(JSON.stringify({ op: 'create', id: 2, key: 'app/', prefix: true }))
    const m = await answer
    expect([m.type, m.code]).to.deep.equal(['error', 'UNAUTHENTICATED'])
    for (const r of running) r.close()
  })

  it('running watches end when the user is deleted', async () => {
    ctx.tokens.alice = await login(ctx, 'alice', 'alicepw2')
    const running = await openAll()
    await root('UserDelete', { name: 'alice' })
    expect(await endedCodes(running)).to.deep.equal(DENIED)
  })
})
