/**
 * A watch that survives disconnects. It remembers the next revision it needs (last event revision + 1;
 * progress notices advance it too) and, after any disconnect, reconnects with exponential backoff and
 * jitter and resumes exactly there: no gap, no duplicate. When that history was compacted it stops with
 * a CompactedError carrying the floor, so the caller relists and starts a new watch.
 *
 *   const w = client.watch('/registry/', { prefix: true, startRevision: list.revision + 1, prevKv: true })
 *   for await (const batch of w) apply(batch.events)        // throws CompactedError: relist
 *   // or: w.on('events', ...).on('compacted', ...)
 *
 * Dead connections: the server pings every wsHeartbeatInterval; a connection with no ping or message for
 * heartbeatTimeoutMs is dropped and resumed.
 *
 * Several members (the client's endpoints): a connection that fails or ends moves the watch (and the
 * client) to the next member, where it resumes from the same next revision; revisions are the same on
 * every member, so nothing is skipped or repeated across the switch.
 *
 * Never connected: with `connectTimeoutMs`, a watch that no member has answered (no watch created) within
 * that time stops with an UnreachableError naming the cause. Once a watch was created it resumes forever.
 */
import { EventEmitter } from 'node:events'
import WebSocket from 'ws'
import { bytesField, readEvent, type Bytes, type WatchEvent } from './codec.js'
import type { KeyRange } from './codec.js'
import type { TokenSource } from './auth.js'
import { tlsConnectOptions, type TlsOptions } from './tls.js'
import type { Endpoints } from './endpoints.js'
import { CompactedError, errorFromBody, KvlogClientError, UnreachableError } from './errors.js'

export interface WatchOptions extends KeyRange {
  /** First revision to deliver (inclusive). Absent: from now. */
  startRevision?: number
  /** Start after this consumer cursor's revision instead (first connection only). */
  cursor?: string
  prevKv?: boolean
  noPut?: boolean
  noDelete?: boolean
  progressNotify?: boolean
  minBackoffMs?: number
  maxBackoffMs?: number
  heartbeatTimeoutMs?: number
  /** Give up when no watch was created within this many ms of the start (default: never give up). */
  connectTimeoutMs?: number
}

export interface WatchBatch {
  /** Whole revisions of events, in order. */
  events: WatchEvent[]
  /** The last revision in the batch. */
  revision: number
}

type Item = { batch: WatchBatch } | { error: Error } | { end: true }

export class Watch extends EventEmitter implements AsyncIterable<WatchBatch> {
  /** The next revision this watch needs; undefined until the server said where "now" is. */
  nextRevision: number | undefined
  /** Connections made after the first (resumes). */
  reconnects = 0
  private ws: WebSocket | undefined
  private closed = false
  private attempt = 0
  private liveness: NodeJS.Timeout | undefined
  private retry: NodeJS.Timeout | undefined
  private readonly queue: Item[] = []
  private wake: (() => void) | undefined
  private iterating = false
  /** A watch was created once: from then on the watch resumes forever. */
  private created = false
  private giveUp: NodeJS.Timeout | undefined
  /** Why the last connection failed, for the give-up message. */
  private lastFailure = 'no answer'

  constructor(
    private readonly endpoints: Endpoints,
    private readonly key: Bytes,
    private readonly options: WatchOptions,
    private readonly auth?: TokenSource,
    private readonly tls?: TlsOptions,
  ) {
    super()
    this.nextRevision = options.startRevision
    if (options.connectTimeoutMs !== undefined) {
      const ms = options.connectTimeoutMs
      this.giveUp = setTimeout(() => {
        if (this.created || this.closed) return
        const where = this.endpoints.list.join(', ')
        this.fail(new UnreachableError(`no watch created by ${where} within ${ms} ms: ${this.lastFailure}`))
      }, ms)
    }
    this.connect()
  }

  /** The member the watch is connected (or connecting) to. */
  get endpoint(): string {
    return this.endpoints.current
  }

  /** Stops the watch; an iterator ends. */
  close(): void {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.retry)
    clearTimeout(this.liveness)
    clearTimeout(this.giveUp)
    this.ws?.terminate()
    this.push({ end: true })
    this.emit('close')
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchBatch> {
    this.iterating = true
    try {
      while (true) {
        const item = this.queue.shift()
        if (item === undefined) {
          await new Promise<void>((resolve) => (this.wake = resolve))
          continue
        }
        if ('end' in item) return
        if ('error' in item) throw item.error
        yield item.batch
      }
    } finally {
      this.close()
    }
  }

  /** Queues for the iterator; a callbacks-only watch (no iterator, 'events' listeners) queues nothing. */
  private push(item: Item): void {
    if (this.iterating || this.listenerCount('events') === 0 || 'end' in item) {
      this.queue.push(item)
      this.wake?.()
      this.wake = undefined
    }
  }

  private connect(): void {
    if (this.closed) return
    if (this.auth === undefined) return this.open(undefined)
    this.auth.header().then(
      (authorization) => this.open(authorization),
      (err: Error) => this.fail(err),
    )
  }

  private open(authorization: string | undefined): void {
    if (this.closed) return
    const endpoint = this.endpoints.current
    const url = `${endpoint.replace(/^http/, 'ws').replace(/\/$/, '')}/v1/watch`
    const ws = new WebSocket(url, {
      perMessageDeflate: false,
      ...tlsConnectOptions(this.tls),
      ...(authorization ? { headers: { authorization } } : {}),
    })
    this.ws = ws
    // A refused upgrade: 401 means the token ended (authenticate again and resume); 403 is final.
    ws.on('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => {
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          body = undefined
        }
        const err = errorFromBody(res.statusCode ?? 0, body)
        if (res.statusCode === 401 && this.auth?.renewable === true && this.attempt < 3) {
          this.auth.invalidate()
          this.ws = undefined
          this.scheduleReconnect()
        } else if (res.statusCode === 401 || res.statusCode === 403) this.fail(err)
        else {
          this.lastFailure = `${endpoint}: ${err.message}`
          this.ws = undefined
          this.endpoints.failed(endpoint)
          this.scheduleReconnect()
        }
      })
    })
    ws.on('open', () => {
      this.alive()
      ws.send(JSON.stringify(this.createRequest()))
    })
    ws.on('ping', () => this.alive())
    ws.on('message', (data: Buffer) => {
      this.alive()
      this.onMessage(JSON.parse(data.toString()) as Record<string, unknown>)
    })
    ws.on('error', (err: Error) => (this.lastFailure = `${endpoint}: ${err.message}`)) // 'close' follows
    ws.on('close', () => {
      clearTimeout(this.liveness)
      if (this.ws !== ws || this.closed) return
      // This member dropped the watch or could not be reached: resume on the next one.
      this.endpoints.failed(endpoint)
      this.scheduleReconnect()
    })
  }

  private createRequest(): Record<string, unknown> {
    const o = this.options
    const req: Record<string, unknown> = { op: 'create', id: 1 }
    bytesField(req, 'key', this.key)
    if (o.prefix) req.prefix = true
    if (o.fromKey) req.fromKey = true
    if (o.rangeEnd !== undefined) bytesField(req, 'rangeEnd', o.rangeEnd)
    if (this.nextRevision !== undefined) req.startRevision = this.nextRevision
    else if (o.cursor !== undefined) req.cursor = o.cursor
    for (const flag of ['prevKv', 'noPut', 'noDelete', 'progressNotify'] as const) if (o[flag]) req[flag] = true
    return req
  }

  private onMessage(msg: Record<string, unknown>): void {
    switch (msg.type) {
      case 'created':
        this.attempt = 0
        this.created = true
        clearTimeout(this.giveUp)
        // Where the server started ("from now", or after a cursor) is pinned down at the first creation,
        // so a resume never skips what happened meanwhile.
        this.nextRevision ??= typeof msg.startRevision === 'number' ? msg.startRevision : (msg.revision as number) + 1
        break
      case 'events': {
        const next = this.nextRevision ?? 0
        // The server never resends, but a client must never double-apply: drop anything already seen.
        const events = (msg.events as Array<Record<string, unknown>>).map(readEvent).filter((e) => e.revision >= next)
        this.nextRevision = (msg.revision as number) + 1
        if (events.length === 0) break
        const batch = { events, revision: msg.revision as number }
        this.emit('events', batch)
        this.push({ batch })
        break
      }
      case 'progress': {
        const rev = msg.revision as number
        if (this.nextRevision === undefined || rev + 1 > this.nextRevision) this.nextRevision = rev + 1
        this.emit('progress', rev)
        break
      }
      case 'canceled':
        if (msg.code === 'COMPACTED') return this.fail(new CompactedError(String(msg.reason), Number(msg.compactRevision)))
        // CLOSED (server draining) and others: resume on a new connection.
        this.ws?.close()
        break
      case 'error':
        return this.fail(new KvlogClientError(String(msg.code), String(msg.message), 0, (msg.details as Record<string, unknown>) ?? {}))
    }
  }

  private fail(err: Error): void {
    const kind = err instanceof CompactedError ? 'compacted' : 'error'
    // An EventEmitter throws on an unheard 'error'; the iterator still gets it.
    if (this.listenerCount(kind) > 0) this.emit(kind, err)
    this.push({ error: err })
    this.closed = true
    // A pending reconnect would keep the process alive past --connect-timeout.
    clearTimeout(this.retry)
    clearTimeout(this.liveness)
    clearTimeout(this.giveUp)
    this.ws?.terminate()
    this.emit('close')
  }

  private alive(): void {
    clearTimeout(this.liveness)
    const ws = this.ws
    this.liveness = setTimeout(() => ws?.terminate(), this.options.heartbeatTimeoutMs ?? 45_000)
    this.liveness.unref()
  }

  private scheduleReconnect(): void {
    if (this.closed) return
    const min = this.options.minBackoffMs ?? 100
    const max = this.options.maxBackoffMs ?? 10_000
    const delay = Math.min(max, min * 2 ** this.attempt++) * (0.5 + Math.random() / 2)
    this.retry = setTimeout(() => {
      this.reconnects++
      this.emit('reconnect', this.nextRevision)
      this.connect()
    }, delay)
  }
}
