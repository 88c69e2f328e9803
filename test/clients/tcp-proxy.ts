/**
 * A tiny TCP proxy (node:net) for client tests: it sits between a client and a kvlog server and can
 * misbehave on demand.
 *
 * - `dropResponses = n`: the next n connections that get response bytes from the server have the client
 *   socket destroyed instead of receiving them (so the request certainly reached the server and was
 *   processed, but the client never learns the outcome);
 * - `swallowResponses = true`: response bytes are silently discarded, sockets stay open;
 * - `cutAll()`: destroys every open connection (both sides);
 * - `blackholeAll()`: the open connections stop forwarding anything in either direction, and a close
 *   from the server is not passed on: the client sees a silent, open socket;
 * - `refuse = true`: new connections are closed at once (as if the server were down);
 * - `declineWith503 = true`: new connections get an HTTP 503 answer (a kvlog error body, code
 *   UNAVAILABLE; `declineStatus` and `declineCode` change them) to each request instead of reaching the
 *   server, as a member that cannot serve now answers;
 * - `down()`: cuts every connection and stops listening, so new connections are refused by the kernel
 *   (ECONNREFUSED, as when the server's process is gone); `up()` listens on the same port again;
 * - `setTarget(url)`: later connections go to another server (e.g. the same data dir restarted on a new port).
 *
 * Everything the clients sent is kept in `sent`, so a test can count requests that reached the server
 * (unless `keepSent = false`, for long-lived busy connections).
 */
import { createServer, connect, type Server, type Socket } from 'node:net'

interface Pair {
  client: Socket
  upstream: Socket
  blackholed: boolean
}

export class TcpProxy {
  dropResponses = 0
  swallowResponses = false
  refuse = false
  declineWith503 = false
  /** The status and the code in the body of those answers (503 UNAVAILABLE unless set). */
  declineStatus = 503
  declineCode = 'UNAVAILABLE'
  keepSent = true
  /** Connections accepted (refused ones included). */
  accepted = 0
  private sentChunks: Buffer[] = []
  private readonly pairs = new Set<Pair>()
  private host: string
  private port: number
  private listenPort = 0

  private constructor(
    private readonly server: Server,
    target: string,
  ) {
    const u = new URL(target)
    this.host = u.hostname
    this.port = Number(u.port)
  }

  static async start(target: string): Promise<TcpProxy> {
    const server = createServer()
    const proxy = new TcpProxy(server, target)
    server.on('connection', (s) => proxy.onConnection(s))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return proxy
  }

  get url(): string {
    const a = this.server.address() as { port: number } | null
    return `http://127.0.0.1:${a?.port ?? this.listenPort}`
  }

  /** Everything clients sent, as latin1 text. */
  get sent(): string {
    return Buffer.concat(this.sentChunks).toString('latin1')
  }

  /** How many HTTP requests with this request line prefix (e.g. "PUT /v1/kv") went through. */
  count(requestLine: string): number {
    return this.sent.split(requestLine + ' ').length - 1 + this.sent.split(requestLine + '?').length - 1
  }

  get open(): number {
    return this.pairs.size
  }

  setTarget(target: string): void {
    const u = new URL(target)
    this.host = u.hostname
    this.port = Number(u.port)
  }

  cutAll(): void {
    for (const p of this.pairs) {
      p.client.destroy()
      p.upstream.destroy()
    }
    this.pairs.clear()
  }

  blackholeAll(): void {
    for (const p of this.pairs) p.blackholed = true
  }

  async down(): Promise<void> {
    this.listenPort = (this.server.address() as { port: number }).port
    this.cutAll()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  async up(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(this.listenPort, '127.0.0.1', resolve))
  }

  async close(): Promise<void> {
    this.cutAll()
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private onConnection(client: Socket): void {
    this.accepted++
    client.on('error', () => undefined)
    if (this.refuse) {
      client.destroy()
      return
    }
    if (this.declineWith503) {
      client.on('data', (d: Buffer) => {
        this.sentChunks.push(Buffer.from(d))
        const body = JSON.stringify({ error: { code: this.declineCode, message: 'not ready', details: {} } })
        client.end(
          `HTTP/1.1 ${this.declineStatus} Declined\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        )
      })
      return
    }
    const upstream = connect(this.port, this.host)
    upstream.on('error', () => undefined)
    const pair: Pair = { client, upstream, blackholed: false }
    this.pairs.add(pair)
    const drop = () => {
      this.pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('data', (d: Buffer) => {
      if (pair.blackholed) return
      if (this.keepSent) this.sentChunks.push(Buffer.from(d))
      upstream.write(d)
    })
    upstream.on('data', (d: Buffer) => {
      if (pair.blackholed || this.swallowResponses) return
      if (this.dropResponses > 0) {
        this.dropResponses--
        drop()
        return
      }
      client.write(d)
    })
    client.on('close', drop)
    upstream.on('close', () => {
      if (pair.blackholed) return
      // The server went away (or refused): the client sees the connection end.
      drop()
    })
  }
}

/** A port that nothing listens on: bound once by us, then closed. */
export async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const port = (s.address() as { port: number }).port
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}
