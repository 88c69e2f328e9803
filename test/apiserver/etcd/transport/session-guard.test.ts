/**
 * Keepalive on the client port's HTTP/2 connections (apiserver/etcd/transport/session-guard.ts): the
 * server pings every interval; a client that answers keeps its connection, one that does not is closed.
 * And the idle timeout: a connection is closed once it has had no open stream for that long.
 */
import { expect } from 'chai'
import { connect, type ServerHttp2Stream } from 'node:http2'
import type { ClientPort } from '../../../../apiserver/etcd/transport/client-port.js'
import { FLAG, FRAME, RawH2 } from '../../../support/raw-h2.js'
import { sleep, waitFor } from '../../../support/wait.js'
import { listenTestPort } from './test-port.js'

describe('apiserver/etcd/transport: keepalive pings and the idle timeout', function () {
  let port: ClientPort | undefined
  afterEach(async () => {
    await port?.close(100)
    port = undefined
  })

  it('a client that does not answer the pings is closed; one that answers stays', async () => {
    port = await listenTestPort({ keepaliveIntervalMs: 100, keepaliveTimeoutMs: 100, grpc: (stream) => stream.close() })
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

  it('a connection whose stream stays open past the idle timeout is kept, and closed once idle that long after', async () => {
    const held: ServerHttp2Stream[] = []
    port = await listenTestPort({ idleTimeoutMs: 100, grpc: (stream) => void held.push(stream) })
    const client = connect(port.url)
    client.on('error', () => undefined)
    let goaway = false
    client.on('goaway', () => (goaway = true))
    const request = client.request({ ':method': 'POST', ':path': '/etcdserverpb.Watch/Watch', 'content-type': 'application/grpc' })
    request.on('error', () => undefined)
    try {
      await waitFor('the stream at the server', () => held.length === 1)
      // Several idle timeouts pass with the stream open: the connection stays.
      await sleep(500)
      expect(goaway, 'GOAWAY while a stream is open').to.equal(false)
      held[0]!.close()
      await waitFor('GOAWAY once idle', () => goaway)
    } finally {
      client.destroy()
    }
  })
})
