/**
 * A small watch client for tests (docs/api.md, "Watch"): a WebSocket connection that records every server
 * message, per watch id, in arrival order and with its arrival time; plus an NDJSON reader over fetch.
 *
 * Nothing here interprets the stream (no resuming, no dedup): tests and the checker do that from the record.
 */
import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'
import type { EventJson, KeyValueJson } from '../../wire/native-api.js'

// ---------------------------------------------------------------------------------------------------------
// Messages (docs/api.md)

export type WireKv = KeyValueJson
export type WireEvent = EventJson

export interface WatchMessage {
  type: 'created' | 'events' | 'progress' | 'canceled' | 'error'
  id?: number
  revision?: number
  events?: WireEvent[]
  code?: string
  reason?: string
  message?: string
  compactRevision?: number
  details?: Record<string, unknown>
  [field: string]: unknown
}

/** A message as received: `seq` orders all messages of all connections in this process. */
export interface Received {
  seq: number
  /** performance.now() at arrival. */
  at: number
  msg: WatchMessage
}

/** Key selection and options of a create request (any extra field is sent as is, to test bad input). */
export interface CreateRequest {
  id?: number
  key?: string
  keyBase64?: string
  rangeEnd?: string
  rangeEndBase64?: string
  prefix?: boolean
  fromKey?: boolean
  startRevision?: number
  prevKv?: boolean
  noPut?: boolean
  noDelete?: boolean
  progressNotify?: boolean
  [field: string]: unknown
}

let globalSeq = 0

/** The next value of the process-wide arrival counter (to order local actions against arrivals). */
export function nextSeq(): number {
  return ++globalSeq
}

export function wsUrl(httpUrl: string): string {
  return httpUrl.replace(/^http/, 'ws') + '/v1/watch'
}

// ---------------------------------------------------------------------------------------------------------
// Recording

/** Messages per watch id, with listeners: what every recording watch connection keeps (WebSocket, gRPC). */
export class MessageBook {
  private readonly byId = new Map<number, Received[]>()
  private readonly listeners = new Set<(rec: Received) => void>()

  /** The messages for watch `id`, in arrival order (a live array: it grows as messages arrive). */
  messagesFor(id: number): Received[] {
    let list = this.byId.get(id)
    if (list === undefined) this.byId.set(id, (list = []))
    return list
  }

  /** Calls `listener` for every message from now on (after it is recorded); returns an unsubscribe. */
  onMessage(listener: (rec: Received) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Records an arrival (under `id` when it has one), then tells the listeners. */
  protected record(id: number | undefined, msg: WatchMessage): Received {
    const rec: Received = { seq: nextSeq(), at: performance.now(), msg }
    this.recorded(rec)
    if (id !== undefined) this.messagesFor(id).push(rec)
    for (const l of [...this.listeners]) l(rec)
    return rec
  }

  /** Called for every arrival before the listeners (subclasses keep their own views). */
  protected recorded(_rec: Received): void {}
}

// ---------------------------------------------------------------------------------------------------------
// WebSocket connection

export class WatchConnection extends MessageBook {
  /** Every message, in arrival order. */
  readonly messages: Received[] = []
  /** Messages that carry no id (e.g. most errors). */
  readonly unaddressed: Received[] = []
  readonly closed: Promise<{ code: number; reason: string }>
  closeInfo: { code: number; reason: string } | undefined
  private readonly waiters = new Set<() => void>()
  private nextClientId = 1
  private paused = false

  private constructor(
    readonly ws: WebSocket,
    readonly label: string,
  ) {
    super()
    ws.on('message', (data, isBinary) => this.handleMessage(data as Buffer, isBinary))
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() }
        resolve(this.closeInfo)
        this.wake()
      })
    })
    ws.on('error', () => undefined) // 'close' follows
  }

  /**
   * Opens a connection to `${httpUrl}/v1/watch` (`headers` on the upgrade, e.g. Authorization); rejects
   * when the server does not accept it.
   */
  static connect(httpUrl: string, label = '', headers: Record<string, string> = {}): Promise<WatchConnection> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(wsUrl(httpUrl), { perMessageDeflate: false, headers })
      const conn = new WatchConnection(ws, label)
      const fail = (err: Error) => reject(err)
      ws.once('error', fail)
      ws.once('unexpected-response', (_req, res) => {
        fail(new Error(`unexpected response ${res.statusCode}`))
        ws.terminate()
      })
      ws.once('open', () => {
        ws.off('error', fail)
        resolve(conn)
      })
    })
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN
  }

  /** A fresh client-chosen id (the connection's own counter; skip it to test server-chosen ids). */
  allocateId(): number {
    return this.nextClientId++
  }

  /** Sends a create request with a client-chosen id (allocated when `id` is absent); returns the id. */
  create(request: CreateRequest): number {
    const id = request.id ?? this.allocateId()
    this.send({ ...request, op: 'create', id })
    return id
  }

  /** Creates and waits for its `created` (or an error/canceled for that id); returns the id. */
  async createAndWait(request: CreateRequest, timeoutMs = 10_000): Promise<number> {
    const id = request.id ?? this.allocateId()
    const list = this.messagesFor(id)
    const from = list.length // an earlier watch (or error) with this id may have left messages
    this.create({ ...request, id })
    await this.waitFor(() => list.length > from, timeoutMs, `created for watch ${id}`)
    if (list[from].msg.type !== 'created') throw new Error(`watch ${id}: expected created, got ${JSON.stringify(list[from].msg)}`)
    return id
  }

  cancel(id: number): void {
    this.send({ op: 'cancel', id })
  }

  requestProgress(): void {
    this.send({ op: 'progress' })
  }

  /** Sends a JSON message as a text frame. */
  send(message: unknown): void {
    this.sendRaw(JSON.stringify(message))
  }

  /** Sends text (a text frame) or a Buffer (a binary frame) exactly as given. */
  sendRaw(data: string | Buffer, binary = typeof data !== 'string'): void {
    if (!this.isOpen) return
    this.ws.send(data, { binary })
  }

  /** Stops reading the TCP socket: the server's sends back up (its bufferedAmount grows). */
  pauseSocket(): void {
    this.paused = true
    ;(this.ws as unknown as { _socket: { pause(): void } })._socket.pause()
  }

  resumeSocket(): void {
    if (!this.paused) return
    this.paused = false
    ;(this.ws as unknown as { _socket: { resume(): void } })._socket.resume()
  }

  /** A clean close (close frame); resolves once closed. */
  async close(code = 1000): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return
    this.ws.close(code)
    await Promise.race([this.closed, sleep(2000)])
    if (this.closeInfo === undefined) this.ws.terminate()
    await this.closed
  }

  /** An abrupt disconnect: the socket is destroyed, nothing more is received. */
  terminate(): void {
    this.ws.terminate()
  }

  /** Resolves once `predicate()` holds (checked on every message and on close); rejects after the timeout. */
  waitFor(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return
        clearTimeout(timer)
        this.waiters.delete(check)
        resolve()
      }
      const timer = setTimeout(() => {
        this.waiters.delete(check)
        reject(new Error(`${this.label || 'connection'}: timed out after ${timeoutMs} ms waiting for ${what}`))
      }, timeoutMs)
      this.waiters.add(check)
    })
  }

  /** Waits for the next message matching `match` that arrives after this call (or already arrived after `fromIndex`). */
  async waitForMessage(match: (m: WatchMessage) => boolean, timeoutMs = 10_000, fromIndex = this.messages.length): Promise<Received> {
    let found: Received | undefined
    await this.waitFor(
      () => {
        for (let i = fromIndex; i < this.messages.length; i++) {
          if (match(this.messages[i].msg)) {
            found = this.messages[i]
            return true
          }
        }
        return false
      },
      timeoutMs,
      'a matching message',
    )
    return found!
  }

  private handleMessage(data: Buffer, isBinary: boolean): void {
    let msg: WatchMessage
    try {
      if (isBinary) throw new Error('binary frame')
      msg = JSON.parse(data.toString('utf8')) as WatchMessage
    } catch (err) {
      msg = { type: 'error', code: 'CLIENT_UNPARSABLE', message: `${String(err)}: ${data.toString('utf8').slice(0, 200)}` }
    }
    this.record(typeof msg.id === 'number' ? msg.id : undefined, msg)
    this.wake()
  }

  protected override recorded(rec: Received): void {
    this.messages.push(rec)
    if (typeof rec.msg.id !== 'number') this.unaddressed.push(rec)
  }

  private wake(): void {
    for (const w of [...this.waiters]) w()
  }
}

// ---------------------------------------------------------------------------------------------------------
// NDJSON

export interface NdjsonStream {
  status: number
  headers: Headers
  /** For a non-200 answer: the parsed JSON body (or its text). */
  body?: unknown
  /** Every line so far, parsed, in order. */
  lines: Received[]
  /** Resolves when the response ended (or was aborted). */
  ended: Promise<void>
  isEnded(): boolean
  waitFor(predicate: (lines: Received[]) => boolean, timeoutMs?: number, what?: string): Promise<void>
  /** Stops pulling the body: once fetch's own buffer is full, the TCP connection backs up. */
  pause(): void
  resume(): void
  abort(): void
}

/** GET `${httpUrl}/v1/watch?query`, reading the body line by line as it streams. */
export async function openNdjson(httpUrl: string, query: Record<string, string | number | boolean> | string): Promise<NdjsonStream> {
  const qs =
    typeof query === 'string'
      ? query
      : new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString()
  const controller = new AbortController()
  const res = await fetch(`${httpUrl}/v1/watch?${qs}`, { signal: controller.signal })
  const lines: Received[] = []
  const waiters = new Set<() => void>()
  const wake = () => {
    for (const w of [...waiters]) w()
  }
  let done = false
  let gate: Promise<void> | undefined
  let openGate: (() => void) | undefined
  if (res.status !== 200) {
    const text = await res.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // keep the text
    }
    return {
      status: res.status,
      headers: res.headers,
      body,
      lines,
      ended: Promise.resolve(),
      isEnded: () => true,
      waitFor: () => Promise.reject(new Error(`NDJSON watch answered ${res.status}`)),
      pause: () => undefined,
      resume: () => undefined,
      abort: () => undefined,
    }
  }
  const ended = (async () => {
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        if (gate !== undefined) await gate
        buffer += decoder.decode(chunk, { stream: true })
        let nl: number
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl)
          buffer = buffer.slice(nl + 1)
          if (line.trim() === '') continue
          let msg: WatchMessage
          try {
            msg = JSON.parse(line) as WatchMessage
          } catch {
            msg = { type: 'error', code: 'CLIENT_UNPARSABLE', message: line.slice(0, 200) }
          }
          lines.push({ seq: nextSeq(), at: performance.now(), msg })
        }
        wake()
      }
      if (buffer.trim() !== '')
        lines.push({ seq: nextSeq(), at: performance.now(), msg: { type: 'error', code: 'CLIENT_PARTIAL_LINE', message: buffer } })
    } catch {
      // aborted or reset
    } finally {
      done = true
      wake()
    }
  })()
  return {
    status: res.status,
    headers: res.headers,
    lines,
    ended,
    isEnded: () => done,
    waitFor(predicate, timeoutMs = 10_000, what = 'condition') {
      if (predicate(lines)) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(lines)) {
            clearTimeout(timer)
            waiters.delete(check)
            resolve()
          } else if (done) {
            clearTimeout(timer)
            waiters.delete(check)
            reject(new Error(`NDJSON stream ended before ${what}: ${JSON.stringify(lines.map((l) => l.msg))}`))
          }
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`NDJSON: timed out after ${timeoutMs} ms waiting for ${what}`))
        }, timeoutMs)
        waiters.add(check)
      })
    },
    pause() {
      gate ??= new Promise((resolve) => (openGate = resolve))
    },
    resume() {
      openGate?.()
      gate = undefined
      openGate = undefined
    },
    abort: () => controller.abort(),
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}
