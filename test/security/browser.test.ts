/**
 * What a web page can do to a kvlog it can reach (apiserver/browser-policy.ts), on real `kvlog serve`
 * processes listening on loopback with auth off, as a developer runs one: a page of another origin may not
 * open a WebSocket watch or write, a page under a rebound DNS name (a foreign Host) gets nothing, and a
 * text/plain body is not taken as JSON. Clients without an Origin header (curl, etcdctl, kubectl) work as
 * before; an origin listed in cors, and a host in hostWhitelist, are let in.
 */
import { request as httpRequest } from 'node:http'
import { expect } from 'chai'
import WebSocket from 'ws'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { send } from './send.js'

const EVIL = 'http://evil.example'
const APP = 'http://app.example:3000'

/** Opens a WebSocket; resolves 'open' or the refusal's status and code. */
function upgrade(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers })
    ws.on('open', () => {
      ws.terminate()
      resolve('open')
    })
    ws.on('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString()))
      res.on('end', () => {
        ws.terminate()
        resolve(`${res.statusCode} ${(JSON.parse(text) as { error: { code: string } }).error.code}`)
      })
    })
    ws.on('error', reject)
  })
}

const JSON_TYPE = { 'content-type': 'application/json' }
const b64 = (s: string) => Buffer.from(s).toString('base64')

describe('security: browser-facing defaults', function () {
  this.timeout(60_000)

  describe('defaults (loopback, no cors, no hostWhitelist)', () => {
    let server: ServerProcess
    let gw: string
    before(async () => {
      server = await startServerProcess()
      gw = `http://${server.grpc}`
    })
    after(async () => server?.cleanup())

    const revision = async () =>
      ((await (await fetch(`${server.http}/v1/status`)).json()) as { header: { revision: number } }).header.revision
    const ws = (path: string) => server.http.replace(/^http/, 'ws') + path

    it('refuses a cross-origin WebSocket upgrade (native watch and resource watch) with 403 FORBIDDEN_ORIGIN', async () => {
      expect(await upgrade(ws('/v1/watch'), { origin: EVIL })).to.equal('403 FORBIDDEN_ORIGIN')
      expect(await upgrade(ws('/api/v1/configmaps?watch=1'), { origin: EVIL })).to.equal('403 FORBIDDEN_ORIGIN')
      expect(await upgrade(ws('/v1/watch'), { origin: 'null' })).to.equal('403 FORBIDDEN_ORIGIN')
    })

    it('lets a same-origin page and a client without Origin open the WebSocket watch', async () => {
      expect(await upgrade(ws('/v1/watch'), { origin: server.http })).to.equal('open')
      expect(await upgrade(ws('/v1/watch'), {})).to.equal('open')
    })

    it('refuses cross-origin writes on the native API and the gateway with 403 FORBIDDEN_ORIGIN, writing nothing', async () => {
      const before = await revision()
      const put = JSON.stringify({ key: 'x', value: '1' })
      expect(await send(server.http, 'PUT', '/v1/kv', { ...JSON_TYPE, origin: EVIL }, put)).to.include({
        status: 403,
        code: 'FORBIDDEN_ORIGIN',
      })
      const txn = JSON.stringify({ success: [{ type: 'put', key: 'x', value: '1' }] })
      expect(await send(server.http, 'POST', '/v1/txn', { ...JSON_TYPE, origin: EVIL }, txn)).to.include({
        status: 403,
        code: 'FORBIDDEN_ORIGIN',
      })
      const gwPut = JSON.stringify({ key: b64('x'), value: b64('1') })
      expect(await send(gw, 'POST', '/v3/kv/put', { ...JSON_TYPE, origin: EVIL }, gwPut)).to.include({
        status: 403,
        code: 'FORBIDDEN_ORIGIN',
      })
      expect(await revision()).to.equal(before)
    })

    it('refuses text/plain and form bodies as JSON with 415 UNSUPPORTED_MEDIA_TYPE, writing nothing', async () => {
      const before = await revision()
      const gwPut = JSON.stringify({ key: b64('x'), value: b64('1') })
      const plain = { 'content-type': 'text/plain' }
      const plainFromPage = { ...plain, origin: gw }
      expect(await send(gw, 'POST', '/v3/kv/put', plainFromPage, gwPut)).to.include({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' })
      const form = { 'content-type': 'application/x-www-form-urlencoded', origin: gw }
      expect(await send(gw, 'POST', '/v3/kv/put', form, gwPut)).to.include({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' })
      const txn = JSON.stringify({ success: [{ type: 'put', key: 'x', value: '1' }] })
      expect(await send(server.http, 'POST', '/v1/txn', plain, txn)).to.include({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' })
      expect(await revision()).to.equal(before)
    })

    it('refuses a foreign Host on the loopback listeners with 403 FORBIDDEN_HOST, reads included', async () => {
      expect(await send(server.http, 'GET', '/v1/kv?key=a', { host: 'rebound.example' })).to.include({
        status: 403,
        code: 'FORBIDDEN_HOST',
      })
      expect(await send(server.http, 'GET', '/v1/kv?key=a', { host: 'rebound.example:80' })).to.include({ code: 'FORBIDDEN_HOST' })
      const range = JSON.stringify({ key: b64('a') })
      expect(await send(gw, 'POST', '/v3/kv/range', { ...JSON_TYPE, host: 'rebound.example' }, range)).to.include({
        status: 403,
        code: 'FORBIDDEN_HOST',
      })
      expect(await upgrade(ws('/v1/watch'), { host: 'rebound.example' })).to.equal('403 FORBIDDEN_HOST')
      for (const host of ['localhost', '127.0.0.1', '[::1]:2379', 'LOCALHOST:1']) {
        expect((await send(server.http, 'GET', '/v1/kv?key=a', { host })).status, host).to.equal(200)
      }
    })

    it('takes what clients without Origin send: curl -d to the gateway (a form type) and JSON to the native API', async () => {
      const gwPut = JSON.stringify({ key: b64('curl'), value: b64('1') })
      const form = { 'content-type': 'application/x-www-form-urlencoded' }
      expect((await send(gw, 'POST', '/v3/kv/put', form, gwPut)).status).to.equal(200)
      expect((await send(gw, 'POST', '/v3/kv/put', {}, gwPut)).status).to.equal(200)
      const put = JSON.stringify({ key: 'native', value: '1' })
      expect((await send(server.http, 'PUT', '/v1/kv', JSON_TYPE, put)).status).to.equal(200)
      expect((await send(server.http, 'PUT', '/v1/kv', { ...JSON_TYPE, origin: server.http }, put)).status).to.equal(200)
    })
  })

  describe('cors and hostWhitelist set', () => {
    let server: ServerProcess
    before(async () => {
      server = await startServerProcess(['--cors', `${APP},http://other.example`, '--host-whitelist', 'kvlog.internal,localhost'])
    })
    after(async () => server?.cleanup())

    it('lets a listed origin open the WebSocket watch and write, with CORS headers and an answered preflight', async () => {
      expect(await upgrade(server.http.replace(/^http/, 'ws') + '/v1/watch', { origin: APP, host: 'localhost' })).to.equal('open')
      const put = JSON.stringify({ key: 'y', value: '1' })
      const ok = await new Promise<{ status: number; allow: unknown }>((resolve, reject) => {
        const req = httpRequest(
          `${server.http}/v1/kv`,
          { method: 'PUT', headers: { ...JSON_TYPE, origin: APP, host: 'kvlog.internal' } },
          (res) => {
            res.resume()
            resolve({ status: res.statusCode ?? 0, allow: res.headers['access-control-allow-origin'] })
          },
        )
        req.on('error', reject)
        req.end(put)
      })
      expect(ok).to.deep.equal({ status: 200, allow: APP })
      const preflight = await send(server.http, 'OPTIONS', '/v1/kv', {
        origin: APP,
        host: 'localhost',
        'access-control-request-method': 'PUT',
      })
      expect(preflight.status).to.equal(204)
      expect(await send(server.http, 'PUT', '/v1/kv', { ...JSON_TYPE, origin: EVIL, host: 'localhost' }, put)).to.include({
        code: 'FORBIDDEN_ORIGIN',
      })
    })

    it('answers only the listed hosts', async () => {
      expect((await send(server.http, 'GET', '/v1/kv?key=a', { host: 'kvlog.internal:8379' })).status).to.equal(200)
      expect(await send(server.http, 'GET', '/v1/kv?key=a', { host: '127.0.0.1' })).to.include({ code: 'FORBIDDEN_HOST' })
    })
  })
})
