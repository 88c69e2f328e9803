/**
 * The etcd client port (apiserver/etcd/transport/client-port.ts): one listener, split by the connection's
 * first bytes and the request's content type — HTTP/1.1 and HTTP/2 requests that are not gRPC reach the
 * gateway's handler (with their bodies), gRPC reaches the gRPC handler — in cleartext and over TLS with
 * ALPN; close() lets an open stream finish.
 */
import { expect } from 'chai'
import { mkdtempSync, readFileSync } from 'node:fs'
import { request as httpRequest, type RequestOptions } from 'node:http'
import { request as httpsRequest, type RequestOptions as HttpsRequestOptions } from 'node:https'
import { connect, type ClientHttp2Session } from 'node:http2'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listenClientPort, type ClientPort } from '../../../../apiserver/etcd/transport/client-port.js'
import type { Exchange } from '../../../../apiserver/etcd/transport/exchange.js'
import { clientPortLimits } from '../../../../apiserver/etcd/server.js'
import { loadConfig } from '../../../../config/load.js'
import { makeTestCerts, type TestCerts } from '../../../support/test-certs.js'

/** The gateway's stand-in: answers with the method, path and body it read. */
function gateway(exchange: Exchange): void {
  let body = ''
  exchange.body.setEncoding('utf8')
  exchange.body.on('data', (chunk: string) => (body += chunk))
  exchange.body.on('end', () => {
    exchange.respond(200, { 'content-type': 'application/json', connection: 'keep-alive' })
    exchange.end(JSON.stringify({ door: 'gateway', method: exchange.method, url: exchange.url, body }))
  })
}

async function listen(tls?: TestCerts): Promise<ClientPort> {
  return listenClientPort({
    host: '127.0.0.1',
    port: 0,
    tls: tls === undefined ? undefined : { cert: readFileSync(tls.serverCert), key: readFileSync(tls.serverKey) },
    ...clientPortLimits(loadConfig({ argv: [], env: {} }).config),
    grpc: (stream) => {
      stream.resume()
      stream.on('end', () => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true })
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }))
        stream.end(Buffer.from('grpc answer'))
      })
    },
    http: gateway,
  })
}

/** An HTTP/1.1 POST (with http's or https's request) and the text of its answer. */
function h1Post(send: typeof httpsRequest, options: RequestOptions & HttpsRequestOptions, body: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const req = send({ ...options, method: 'POST' }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve(text))
    })
    req.on('error', reject)
    req.end(body)
  })
}

function h2Request(session: ClientHttp2Session, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ...headers })
    let status = 0
    let text = ''
    req.on('response', (h) => (status = Number(h[':status'])))
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (text += chunk))
    req.on('end', () => resolve({ status, text }))
    req.on('error', reject)
    req.end(body)
  })
}

describe('apiserver/etcd/transport: the client port', function () {
  let port: ClientPort | undefined
  afterEach(async () => {
    await port?.close(100)
    port = undefined
  })

  it('HTTP/1.1 requests reach the gateway with their bodies', async () => {
    port = await listen()
    const [host, p] = port.address.split(':') as [string, string]
    const answer = await h1Post(httpRequest as typeof httpsRequest, { host, port: Number(p), path: '/v3/kv/range' }, '{"key":"YQ=="}')
    expect(JSON.parse(answer)).to.deep.equal({ door: 'gateway', method: 'POST', url: '/v3/kv/range', body: '{"key":"YQ=="}' })
  })

  it('HTTP/2 with prior knowledge: JSON goes to the gateway, application/grpc to gRPC, on one connection', async () => {
    port = await listen()
    const session = connect(port.url)
    try {
      const json = await h2Request(session, { ':path': '/v3/kv/put', 'content-type': 'application/json' }, '{"key":"Yg=="}')
      expect(json.status).to.equal(200)
      expect(JSON.parse(json.text)).to.deep.equal({ door: 'gateway', method: 'POST', url: '/v3/kv/put', body: '{"key":"Yg=="}' })
      const grpc = await h2Request(session, { ':path': '/etcdserverpb.KV/Range', 'content-type': 'application/grpc' }, 'x')
      expect(grpc.text).to.equal('grpc answer')
    } finally {
      session.close()
    }
  })

  it('TLS with ALPN: h2 and HTTP/1.1 clients both served', async () => {
    const certs = makeTestCerts(mkdtempSync(join(tmpdir(), 'kvlog-client-port-')))
    port = await listen(certs)
    const ca = readFileSync(certs.ca)
    const session = connect(port.url.replace('127.0.0.1', 'localhost'), { ca })
    try {
      const json = await h2Request(session, { ':path': '/v3/lease/grant', 'content-type': 'application/json' }, '{}')
      expect(JSON.parse(json.text).url).to.equal('/v3/lease/grant')
    } finally {
      session.close()
    }
    const [, p] = port.address.split(':') as [string, string]
    const h1 = await h1Post(httpsRequest, { host: 'localhost', port: Number(p), path: '/v3/lease/revoke', ca }, '{}')
    expect(JSON.parse(h1).url).to.equal('/v3/lease/revoke')
  })

  it('close(): an open HTTP/2 stream may finish; the session then ends', async () => {
    port = await listen()
    const session = connect(port.url)
    const req = session.request({ ':method': 'POST', ':path': '/v3/watch', 'content-type': 'application/json' })
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (text += c))
    const ended = new Promise((resolve) => req.on('end', resolve))
    req.write('{"create_request":')
    await new Promise((resolve) => setTimeout(resolve, 50))
    const closing = port.close(5000)
    port = undefined
    req.end('{}}')
    await ended
    expect(JSON.parse(text).body).to.equal('{"create_request":{}}')
    await closing
    session.destroy()
  })
})
