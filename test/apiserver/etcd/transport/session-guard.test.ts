/**
 * Keepalive on the client port's HTTP/2 connections (apiserver/etcd/transport/session-guard.ts): the
 * server pings every interval; a client that answers keeps its connection, one that does not is closed.
 */
import { expect } from 'chai'
import { connect } from 'node:http2'
import { listenClientPort, type ClientPort } from '../../../../apiserver/etcd/transport/client-port.js'
import { clientPortLimits } from '../../../../apiserver/etcd/server.js'
import { loadConfig } from '../../../../config/load.js'
import { FLAG, FRAME, RawH2 } from '../../../support/raw-h2.js'

describe('apiserver/etcd/transport: keepalive pings', function () {
  let port: ClientPort | undefined
  afterEach(async () => {
    await port?.close(100)
    port = undefined
  })

  it('a client that does not answer the pings is closed; one that answers stays', async () => {
    port = await listenClientPort({
      host: '127.0.0.1',
      port: 0,
      tls: undefined,
      ...clientPortLimits(loadConfig({ argv: [], env: {} }).config),
      keepaliveIntervalMs: 100,
      keepaliveTimeoutMs: 100,
      grpc: (stream) => stream.close(),
      http: (exchange) => exchange.end(),
    })
    const answering = connect(port.url)
    answering.on('error', () => undefined)
    let pings = 0
    answering.on('ping', () => pings++)
    const silent = await RawH2.open(port.address)
    try {
      await silent.until(() => silent.closed, 10_000)
      expect(silent.frames.some((f) => f.type === FRAME.PING && (f.flags & FLAG.ACK) === 0)).to.equal(true)
      await new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (pings >= 3) {
            clearInterval(check)
            resolve()
          }
        }, 20)
      })
      expect(answering.closed || answering.destroyed).to.equal(false)
    } finally {
      silent.close()
      answering.destroy()
    }
  })
})
