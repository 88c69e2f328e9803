/**
 * kvlog's HTTP/2 server connection (apiserver/etcd/transport/h2/connection.ts, stream.ts) against Node's
 * HTTP/2 client (nghttp2: Huffman-coded headers with a dynamic table, its own flow control), and against
 * raw bytes for what no well-behaved client sends.
 */
import { expect } from 'chai'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { connect as connectH2, constants, type ClientHttp2Session } from 'node:http2'
import { connect as connectTcp, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { H2Connection } from '../../../../../apiserver/etcd/transport/h2/connection.js'
import { CLIENT_PREFACE, FRAME, H2_ERROR, frame } from '../../../../../apiserver/etcd/transport/h2/frames.js'
import { encodeHeaders } from '../../../../../apiserver/etcd/transport/h2/hpack.js'
import type { H2Stream } from '../../../../../apiserver/etcd/transport/h2/stream.js'

interface Harness {
  url: string
  port: number
  connections: H2Connection[]
  /** Whether a server write returned false, and whether 'drain' followed, per /big stream. */
  backpressure: Array<{ refused: boolean; drained: boolean }>
  held: H2Stream[]
  close(): Promise<void>
}

/**
 * Serves /echo (the body back, then trailers), /big?bytes=N (N bytes in 16 KiB writes), /parts?n=N (N
 * writes of 10 bytes, written together) and /hold (no answer).
 */
async function serve(keepaliveIntervalMs = 0, keepaliveTimeoutMs = 0): Promise<Harness> {
  const connections: H2Connection[] = []
  const backpressure: Harness['backpressure'] = []
  const held: H2Stream[] = []
  const server: Server = createServer((socket: Socket) => {
    const c = new H2Connection(socket, {
      keepaliveIntervalMs,
      keepaliveTimeoutMs,
      onStream: (stream, headers) => {
        const url = new URL(String(headers[':path']), 'http://x')
        if (url.pathname === '/echo') {
          const parts: Buffer[] = []
          stream.on('data', (b: Buffer) => parts.push(Buffer.from(b)))
          stream.on('end', () => {
            stream.respond([
              [':status', '200'],
              ['x-echo-of', String(headers['x-sent'] ?? '')],
            ])
            stream.write(Buffer.concat(parts))
            stream.end(encodeHeaders([['x-bytes', String(parts.reduce((n, p) => n + p.length, 0))]]))
          })
        } else if (url.pathname === '/big') {
          let left = Number(url.searchParams.get('bytes'))
          const seen = { refused: false, drained: false }
          backpressure.push(seen)
          stream.respond([[':status', '200']])
          const pump = () => {
            while (left > 0) {
              const n = Math.min(16_384, left)
              left -= n
              if (!stream.write(Buffer.alloc(n, 7))) {
                seen.refused = true
                stream.once('drain', () => {
                  seen.drained = true
                  pump()
                })
                return
              }
            }
            stream.end()
          }
          pump()
        } else if (url.pathname === '/parts') {
          stream.respond([[':status', '200']])
          const n = Number(url.searchParams.get('n'))
          for (let i = 0; i < n; i++) stream.write(Buffer.from(String(i).padStart(10, '.')))
          stream.end()
        } else {
          held.push(stream)
        }
      },
    })
    connections.push(c)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections,
    backpressure,
    held,
    close: async () => {
      for (const c of connections) c.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

function request(
  client: ClientHttp2Session,
  path: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer; trailers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = client.request({ ':method': 'POST', ':path': path, ...headers })
    const parts: Buffer[] = []
    let status = 0
    let responseHeaders: Record<string, unknown> = {}
    let trailers: Record<string, unknown> = {}
    req.on('response', (h) => {
      status = Number(h[':status'])
      responseHeaders = { ...h }
    })
    req.on('trailers', (t) => (trailers = { ...t }))
    req.on('data', (b: Buffer) => parts.push(b))
    req.on('end', () => resolve({ status, headers: responseHeaders, body: Buffer.concat(parts), trailers }))
    req.on('error', reject)
    req.end(body)
  })
}

/** A raw client connection that has sent the preface, empty SETTINGS and then `frames`. */
function rawConnection(port: number, ...frames: Buffer[]): Socket {
  const socket = connectTcp(port, '127.0.0.1')
  socket.write(CLIENT_PREFACE)
  socket.write(frame(FRAME.SETTINGS, 0, 0))
  for (const f of frames) socket.write(f)
  return socket
}

/** A GET on stream 1 (END_HEADERS, and END_STREAM unless `open`). */
function getFrame(path: string, open = false): Buffer {
  const block = encodeHeaders([
    [':method', 'GET'],
    [':path', path],
    [':scheme', 'http'],
  ])
  return frame(FRAME.HEADERS, 0x4 | (open ? 0 : 0x1), 1, block)
}

/** Reads frames a raw socket receives until `stop` says so (or the socket closes). */
function readFrames(
  socket: Socket,
  stop: (type: number, payload: Buffer, flags: number) => boolean,
): Promise<Array<{ type: number; payload: Buffer; flags: number }>> {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0)
    const frames: Array<{ type: number; payload: Buffer; flags: number }> = []
    const done = () => resolve(frames)
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      while (buf.length >= 9) {
        const length = buf.readUIntBE(0, 3)
        if (buf.length < 9 + length) break
        const f = { type: buf[3]!, payload: buf.subarray(9, 9 + length), flags: buf[4]! }
        buf = buf.subarray(9 + length)
        frames.push(f)
        if (stop(f.type, f.payload, f.flags)) return done()
      }
    })
    socket.on('close', done)
  })
}

describe('apiserver/etcd/transport/h2: the HTTP/2 connection', function () {
  let h: Harness
  let client: ClientHttp2Session | undefined
  beforeEach(async () => {
    h = await serve()
  })
  afterEach(async () => {
    client?.destroy()
    client = undefined
    await h.close()
  })

  it('serves 50 concurrent streams whose bodies are larger than every window, each echoed whole with its trailers', async () => {
    // The client queues all 50 bodies at once: more than its default session memory (10 MB).
    client = connectH2(h.url, { maxSessionMemory: 1000 })
    const bodies = Array.from({ length: 50 }, (_, i) => randomBytes(1000 + i * 40_000))
    const answers = await Promise.all(bodies.map((b, i) => request(client!, '/echo', b, { 'x-sent': `body number ${i}` })))
    answers.forEach((a, i) => {
      expect(a.status).to.equal(200)
      expect(a.headers['x-echo-of']).to.equal(`body number ${i}`)
      expect(a.body.equals(bodies[i]!), `body ${i}`).to.equal(true)
      expect(a.trailers['x-bytes']).to.equal(String(bodies[i]!.length))
    })
  })

  it("holds writes while the client's window is closed: write() says so, and 'drain' comes once it reads", async () => {
    client = connectH2(h.url, { settings: { initialWindowSize: 16_384 } })
    const req = client.request({ ':method': 'GET', ':path': '/big?bytes=4000000' })
    req.pause()
    await once(req, 'response')
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(h.backpressure[0]!.refused).to.equal(true)
    expect(h.backpressure[0]!.drained).to.equal(false)
    let received = 0
    req.on('data', (b: Buffer) => (received += b.length))
    req.resume()
    await once(req, 'end')
    expect(received).to.equal(4_000_000)
    expect(h.backpressure[0]!.drained).to.equal(true)
  })

  it('small writes of one tick share DATA frames, in order', async () => {
    const socket = rawConnection(h.port, getFrame('/parts?n=1000'))
    const frames = await readFrames(socket, (type, _payload, flags) => type === FRAME.DATA && (flags & 0x1) !== 0)
    const data = frames.filter((f) => f.type === FRAME.DATA)
    const body = Buffer.concat(data.map((f) => f.payload)).toString()
    expect(body).to.equal(Array.from({ length: 1000 }, (_, i) => String(i).padStart(10, '.')).join(''))
    // 10,000 bytes within the default 65,535-byte windows and 16,384-byte frames: one frame, with END_STREAM.
    expect(data.length, 'DATA frames').to.equal(1)
    socket.destroy()
  })

  it('answers pings', async () => {
    client = connectH2(h.url)
    await once(client, 'connect')
    const ms = await new Promise<number>((resolve, reject) => client!.ping((err, duration) => (err ? reject(err) : resolve(duration))))
    expect(ms).to.be.a('number')
  })

  it('goAway: open streams may finish, new ones are refused, and the socket closes after the last', async () => {
    client = connectH2(h.url)
    const held = client.request({ ':method': 'GET', ':path': '/hold' })
    held.end()
    while (h.held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    h.connections[0]!.goAway()
    await once(client, 'goaway')
    const refused = await request(client, '/echo', Buffer.from('x')).then(
      () => 'answered',
      () => 'refused',
    )
    expect(refused).to.equal('refused')
    const closed = once(client, 'close')
    const body = new Promise<string>((resolve) => {
      let text = ''
      held.on('data', (b: Buffer) => (text += b.toString()))
      held.on('end', () => resolve(text))
    })
    h.held[0]!.respond([[':status', '200']])
    h.held[0]!.write(Buffer.from('finished'))
    h.held[0]!.end()
    expect(await body).to.equal('finished')
    await closed
  })

  it('a wrong preface ends the connection', async () => {
    const socket = connectTcp(h.port, '127.0.0.1')
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\nmore bytes to pass 24')
    socket.resume() // reads on, so that the server's end is seen
    await once(socket, 'close')
  })

  it('a protocol error ends the connection with GOAWAY and its code; other connections go on', async () => {
    client = connectH2(h.url)
    await once(client, 'connect')
    const socket = rawConnection(h.port, frame(FRAME.DATA, 0, 0, Buffer.from('on stream 0')))
    const frames = await readFrames(socket, (type) => type === FRAME.GOAWAY)
    const goAway = frames.find((f) => f.type === FRAME.GOAWAY)
    expect(goAway, 'a GOAWAY frame').to.not.equal(undefined)
    expect(goAway!.payload.readUInt32BE(4)).to.equal(H2_ERROR.PROTOCOL_ERROR)
    socket.destroy()
    const still = await request(client, '/echo', Buffer.from('still here'))
    expect(still.body.toString()).to.equal('still here')
  })

  it('a header block that is not valid HPACK ends the connection with COMPRESSION_ERROR', async () => {
    const socket = rawConnection(h.port, frame(FRAME.HEADERS, 0x4 | 0x1, 1, Buffer.from([0x80])))
    const frames = await readFrames(socket, (type) => type === FRAME.GOAWAY)
    expect(frames.find((f) => f.type === FRAME.GOAWAY)!.payload.readUInt32BE(4)).to.equal(H2_ERROR.COMPRESSION_ERROR)
    socket.destroy()
  })

  it('a client whose stream window overflows gets that stream reset with FLOW_CONTROL_ERROR', async () => {
    client = connectH2(h.url)
    const held = client.request({ ':method': 'GET', ':path': '/hold' })
    held.on('error', () => undefined)
    while (h.held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    const socket = rawConnection(h.port, getFrame('/hold', true))
    const increment = Buffer.alloc(4)
    increment.writeUInt32BE(2 ** 31 - 1)
    socket.write(frame(FRAME.WINDOW_UPDATE, 0, 1, increment))
    const frames = await readFrames(socket, (type) => type === FRAME.RST_STREAM)
    expect(frames.find((f) => f.type === FRAME.RST_STREAM)!.payload.readUInt32BE(0)).to.equal(H2_ERROR.FLOW_CONTROL_ERROR)
    socket.destroy()
  })

  it('keepalive: a connection that does not answer pings is closed', async () => {
    const k = await serve(100, 100)
    try {
      const socket = rawConnection(k.port)
      const frames = await readFrames(socket, () => false) // never answers; resolves when closed
      expect(frames.some((f) => f.type === FRAME.PING)).to.equal(true)
    } finally {
      await k.close()
    }
  })

  it('keepalive: a client that answers pings stays connected', async () => {
    const k = await serve(50, 100)
    const c = connectH2(k.url)
    try {
      await new Promise((resolve) => setTimeout(resolve, 500))
      const answer = await request(c, '/echo', Buffer.from('alive'))
      expect(answer.body.toString()).to.equal('alive')
      void constants
    } finally {
      c.destroy()
      await k.close()
    }
  })
})
