/**
 * The watch service: one hub for the server, the open streams of every connection, the idle progress
 * timer, and a drain that sends each watch a final progress notice on shutdown.
 */
import { WatchHub } from '../../log/watch/hub.js'
import type { Log } from '../../log/backend.js'
import type { WatchSpec } from '../../log/watch/types.js'
import type { Identity } from '../auth/authorizer.js'
import { currentCaller } from '../auth/guarded-log.js'
import type { WatchStats } from '../metrics.js'
import { JSON_MESSAGES, WatchStream, type StreamOptions, type Transport } from './stream.js'

export interface WatchServiceOptions {
  ringSize: number
  catchUpBatch: number
  /** Idle progress notices every this many ms (0 = off). */
  progressInterval: number
  maxWatchersPerConnection: number
  /** Where a watch with the `cursor` option starts: the cursor's revision + 1 (throws COMPACTED if expired). */
  resolveCursor(name: string): number
  /** Throws when `who` may not watch the range (checked at each create; default: anyone may). */
  authorize?(who: Identity, spec: WatchSpec): void
  /**
   * Throws when a running watch of `who` must end after a change of the auth state (its user was
   * deleted, its password changed, it lost READ on the range): see recheck().
   */
  reauthorize?(who: Identity, spec: WatchSpec): void
}

export class WatchService {
  readonly hub: WatchHub
  private readonly streams = new Set<WatchStream<unknown>>()
  private readonly timer: NodeJS.Timeout | undefined
  private drained = false

  constructor(
    log: Log,
    private readonly options: WatchServiceOptions,
  ) {
    this.hub = new WatchHub(log, { ringSize: options.ringSize, catchUpBatch: options.catchUpBatch })
    if (options.progressInterval > 0) {
      this.timer = setInterval(() => {
        for (const s of this.streams) s.idleTick()
      }, options.progressInterval)
      this.timer.unref()
    }
  }

  /** A stream for one connection; JSON messages and ids from 1 unless a protocol says otherwise. */
  open(transport: Transport<string>): WatchStream<string>
  open<M>(transport: Transport<M>, options: StreamOptions<M>): WatchStream<M>
  open<M>(transport: Transport<M>, options?: StreamOptions<M>): WatchStream<M> {
    const o = options ?? ({ messages: JSON_MESSAGES, firstId: 1 } as unknown as StreamOptions<M>)
    const opener = currentCaller()
    const caller = o.caller ?? (() => opener)
    const stream = new WatchStream<M>(
      this.hub,
      transport,
      this.options.maxWatchersPerConnection,
      this.options.resolveCursor,
      o,
      caller,
      this.options.authorize,
    )
    // A connection that arrives while the server drains gets a stream that is closed at once.
    if (this.draining) stream.close()
    else this.streams.add(stream as WatchStream<unknown>)
    return stream
  }

  /** True once drain() began: new connections should be turned away (1001, UNAVAILABLE). */
  get draining(): boolean {
    return this.drained
  }

  release<M>(stream: WatchStream<M>): void {
    stream.close()
    this.streams.delete(stream as WatchStream<unknown>)
  }

  stats(): WatchStats {
    let slowWatchers = 0
    for (const s of this.streams) slowWatchers += s.pausedCount
    const hub = this.hub.stats()
    return { watchers: hub.watchers, slowWatchers: Math.max(slowWatchers, hub.paused) }
  }

  /**
   * The auth state changed: running watches whose creator may no longer watch their range are canceled
   * (the reauthorize option's error, PERMISSION_DENIED).
   */
  recheck(): void {
    const check = this.options.reauthorize
    if (check === undefined) return
    for (const s of this.streams) s.recheck(check)
  }

  /** Shutdown: a final progress notice to every synced watch, then stop them all. */
  drain(): void {
    this.drained = true
    if (this.timer) clearInterval(this.timer)
    for (const s of this.streams) s.finalProgress()
    for (const s of this.streams) s.close()
    this.streams.clear()
    this.hub.close()
  }
}
