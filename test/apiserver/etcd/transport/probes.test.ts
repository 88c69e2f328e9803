/**
 * /livez and /readyz on the etcd client port (apiserver/etcd/transport/probes.ts): 200 "ok" while a read
 * of the store answers, 503 "<probe> check failed" when it fails or does not answer in time, 405 for
 * other methods; every other path goes on to the gateway.
 */
import { expect } from 'chai'
import { withProbes } from '../../../../apiserver/etcd/transport/probes.js'
import type { ClientPort } from '../../../../apiserver/etcd/transport/client-port.js'
import { listenTestPort } from './test-port.js'

/** The store read the probes make, answering as `get` says. */
function logWith(get: () => Promise<undefined>): () => Promise<unknown> {
  return get
}

async function serve(log: () => Promise<unknown>, timeoutMs = 2000): Promise<ClientPort> {
  return listenTestPort({
    http: withProbes(log, timeoutMs, (exchange) => {
      exchange.body.resume()
      exchange.respond(200, { 'content-type': 'text/plain' })
      exchange.end('gateway')
    }),
  })
}

async function get(port: ClientPort, path: string, method = 'GET'): Promise<[number, string]> {
  const res = await fetch(`${port.url}${path}`, { method })
  return [res.status, await res.text()]
}

describe('apiserver/etcd/transport: /livez and /readyz', function () {
  let port: ClientPort | undefined
  afterEach(async () => {
    await port?.close(100)
    port = undefined
  })

  it('answer 200 ok while the store reads; other paths reach the gateway', async () => {
    port = await serve(logWith(() => Promise.resolve(undefined)))
    expect(await get(port, '/livez')).to.deep.equal([200, 'ok'])
    expect(await get(port, '/readyz?verbose')).to.deep.equal([200, 'ok'])
    expect(await get(port, '/version')).to.deep.equal([200, 'gateway'])
    expect((await get(port, '/livez', 'POST'))[0]).to.equal(405)
  })

  it('answer 503 when the read fails or does not answer in time', async () => {
    port = await serve(logWith(() => Promise.reject(new Error('closed'))))
    expect(await get(port, '/livez')).to.deep.equal([503, 'livez check failed'])
    await port.close(100)
    port = await serve(
      logWith(() => new Promise(() => undefined)),
      50,
    )
    expect(await get(port, '/readyz')).to.deep.equal([503, 'readyz check failed'])
  })
})
