/**
 * The watches of one connection (a WebSocket, or one NDJSON response), over a Transport.
 *
 * Flow control: when the transport reports it is backed up (send() returns false), the watch's sink
 * returns false and the hub pauses the watch; nothing is dropped. When the transport drains, the
 * connection calls drained() and every paused watch resumes, catching up from the hub's ring or the log.
 * A watch that fell below the compact revision meanwhile is canceled with COMPACTED and the floor.
 */
import { isKvlogError, KvlogError } from '../../log/errors.js'
import type { WatchHub } from '../../log/watch/hub.js'
import type { WatchBatch, WatchHandle, WatchSpec } from '../../log/watch/types.js'
import type { Identity } from '../auth/authorizer.js'
import { canceledMessage, createdMessage, eventsMessage, progressMessage } from './messages.js'
import type { CreateRequest } from './request.js'

/**
 * How a protocol encodes the stream's messages: JSON text for the native WebSocket and NDJSON streams
 * (messages.ts), protobuf for etcd's gRPC Watch. `events` is called once per watch per batch; the hub
 * shares batch objects between watches, so an encoder can cache per batch.
 */
export interface WatchMessages<M> {
  created(id: number, revision: number, startRevision?: number): M
  events(id: number, batch: WatchBatch): M
  progress(id: number, revision: number): M
  /** err undefined: canceled by the client. */
  canceled(id: number, err: KvlogError | undefined): M
}

export const JSON_MESSAGES: WatchMessages<string> = {
  created: createdMessage,
  events: eventsMessage,
  progress: progressMessage,
  canceled: canceledMessage,
}

export interface StreamOptions<M> {
  messages: WatchMessages<M>
  /** The first server-chosen watch id (etcd's is 0; the native protocol's 1). */
  firstId: number
  /**
   * Who creates the watches, asked at each create (default: the caller of the request that opened the
   * stream, auth/guarded-log.ts). The service's authorize check runs with it.
   */
  caller?: () => Identity
}

export interface Transport<M = string> {
  /** Queues one message; false when the connection is backed up (the message is still queued). */
  send(message: M): boolean
  /**
   * For single-watch transports (NDJSON): called when the stream closes or its last watch is canceled by
   * the hub, to end the response.
   */
  end?(): void
  /** Called once when the stream is closed (the connection went away, or the server is draining). */
  closed?(): void
}

interface Watch {
  id: number
  /** Who created it, and what it watches: checked again when the auth state changes (recheck). */
  who: Identity
  spec: WatchSpec
  handle: WatchHandle
  progressNotify: boolean
  /** Something was sent since the last idle tick. */
  active: boolean
  paused: boolean
}

export class WatchStream<M = string> {
  private readonly watches = new Map<number, Watch>()
  private nextId: number
  private closed = false
  private readonly messages: WatchMessages<M>

  constructor(
    private readonly hub: WatchHub,
    private readonly transport: Transport<M>,
    private readonly maxWatchers: number,
    private readonly resolveCursor: (name: string) => number,
    options: StreamOptions<M>,
    /**
     * Who is creating a watch now, and a check that throws when that caller may not watch the spec's
     * range (PERMISSION_DENIED, UNAUTHENTICATED).
     */
    private readonly caller: () => Identity,
    private readonly authorize: (who: Identity, spec: WatchSpec) => void = () => undefined,
  ) {
    this.messages = options.messages
    this.nextId = options.firstId
  }

  /**
   * True when every watch of the stream is at the head of the log: none catching up or paused, and none
   * waiting for a future start revision (a progress answer then waits until it got there, as etcd's does
   * since etcd-io/etcd#20229).
   */
  get allSynced(): boolean {
    const head = this.hub.revision + 1
    for (const w of this.watches.values()) if (w.paused || !w.handle.synced || w.handle.nextRevision > head) return false
    return true
  }

  /** The store's revision as the hub last saw it committed. */
  get revision(): number {
    return this.hub.revision
  }

  get size(): number {
    return this.watches.size
  }

  get pausedCount(): number {
    let n = 0
    for (const w of this.watches.values()) if (w.paused) n++
    return n
  }

  /** Starts a watch; sends `created` before anything else for it. Throws KvlogError on a bad request. */
  create(request: CreateRequest): number {
    if (this.closed) throw new KvlogError('CLOSED', 'the connection is closing')
    if (this.watches.size >= this.maxWatchers) {
      throw new KvlogError('TOO_MANY_WATCHERS', `at most ${this.maxWatchers} watches per connection`, {
        maxWatchersPerConnection: this.maxWatchers,
      })
    }
    const id = request.id ?? this.freeId()
    if (this.watches.has(id)) throw new KvlogError('WATCH_ID_EXISTS', `watch id ${id} is already in use on this connection`, { id })
    let spec = request.spec
    const who = this.caller()
    this.authorize(who, spec)
    if (request.cursor !== undefined) {
      try {
        spec = { ...spec, startRevision: this.resolveCursor(request.cursor) }
      } catch (err) {
        if (!isKvlogError(err, 'COMPACTED')) throw err
        // Like a start below the floor: created, then canceled with the floor to relist from.
        this.transport.send(this.messages.created(id, this.hub.revision))
        this.transport.send(this.messages.canceled(id, err))
        if (this.watches.size === 0) this.transport.end?.()
        return id
      }
    }
    const watch: Watch = {
      id,
      who,
      spec: request.spec,
      handle: undefined as unknown as WatchHandle,
      progressNotify: request.progressNotify,
      active: true,
      paused: false,
    }
    // The hub never calls the sink from inside watch(), so `created` always goes first.
    watch.handle = this.hub.watch(spec, {
      events: (batch) => {
        watch.active = true
        const ok = this.transport.send(this.messages.events(id, batch))
        if (!ok) watch.paused = true
        return ok
      },
      canceled: (err) => {
        this.watches.delete(id)
        this.transport.send(this.messages.canceled(id, err))
        if (this.watches.size === 0) this.transport.end?.()
      },
      progress: (revision) => {
        watch.active = true
        this.transport.send(this.messages.progress(id, revision))
      },
    })
    this.watches.set(id, watch)
    this.transport.send(this.messages.created(id, this.hub.revision, watch.handle.nextRevision))
    return id
  }

  cancel(id: number): void {
    const watch = this.watches.get(id)
    if (watch === undefined) throw new KvlogError('UNKNOWN_WATCH', `no watch ${id} on this connection`, { id })
    this.watches.delete(id)
    watch.handle.cancel()
    this.transport.send(this.messages.canceled(id, undefined))
  }

  /**
   * After a change of the auth state: every watch whose creator may no longer watch its range (`check`
   * throws) is canceled with that error, as the hub cancels one.
   */
  recheck(check: (who: Identity, spec: WatchSpec) => void): void {
    for (const w of [...this.watches.values()]) {
      try {
        check(w.who, w.spec)
      } catch (err) {
        this.watches.delete(w.id)
        w.handle.cancel()
        this.transport.send(this.messages.canceled(w.id, isKvlogError(err) ? err : new KvlogError('PERMISSION_DENIED', String(err))))
        if (this.watches.size === 0) this.transport.end?.()
      }
    }
  }

  /** A progress notice for every watch (each once it is synced). */
  requestProgress(): void {
    for (const w of this.watches.values()) w.handle.requestProgress()
  }

  /**
   * Shutdown: a last progress notice for every watch, now. A synced watch gets the current revision; one
   * that is paused or catching up gets what it has been given so far (everything below its next revision),
   * so its client can resume exactly from there on another server.
   */
  finalProgress(): void {
    for (const w of this.watches.values()) {
      if (w.handle.synced) w.handle.requestProgress()
      else if (w.handle.nextRevision > 1) this.transport.send(this.messages.progress(w.id, w.handle.nextRevision - 1))
    }
  }

  /** The transport drained: resume the watches it paused. */
  drained(): void {
    for (const w of this.watches.values()) {
      if (!w.paused) continue
      w.paused = false
      w.handle.resume()
    }
  }

  /** Periodic: a progress notice for each progressNotify watch that sent nothing since the last tick. */
  idleTick(): void {
    for (const w of this.watches.values()) {
      if (w.progressNotify && !w.active && !w.paused) w.handle.requestProgress()
      w.active = false
    }
  }

  /** Stops every watch (the connection is gone or closing). */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const w of this.watches.values()) w.handle.cancel()
    this.watches.clear()
    this.transport.end?.()
    this.transport.closed?.()
  }

  private freeId(): number {
    while (this.watches.has(this.nextId)) this.nextId++
    return this.nextId++
  }
}
