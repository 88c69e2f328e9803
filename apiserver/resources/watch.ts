/**
 * A Kubernetes watch over the log's watch hub (the server's one WatchService hub; no second fan-out).
 *
 * - resourceVersion unset or "0" (and sendInitialEvents not false): synthetic ADDED for every current
 *   object (read at revision R), then the changes after R. "N": the changes after N (hub start N + 1).
 * - sendInitialEvents=true (with allowWatchBookmarks and resourceVersionMatch=NotOlderThan): the ADDED
 *   events, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"` at R, then changes.
 * - allowWatchBookmarks: a BOOKMARK every watchProgressInterval (the hub's progress notice: every
 *   matching event at or below its resourceVersion has been sent).
 * - Selectors see both sides of each change (the hub gives prevKv): entering the selection is ADDED,
 *   leaving it is DELETED (with the previous object at the event's resourceVersion), as kube's cacher.
 * - Too old (start below the compact revision, or a paused watch that fell below it): one ERROR event
 *   with a 410 Expired Status, then the stream ends; the client relists.
 * - timeoutSeconds: the stream ends cleanly after that long; clients re-watch from their last revision.
 * - Backpressure: a sink that reports it is backed up pauses the hub watch (nothing is dropped); it
 *   catches up from the ring or the log once the sink drains.
 */
import type { Log } from '../../log/backend.js'
import { isKvlogError, type KvlogError } from '../../log/errors.js'
import { prefixEnd } from '../../log/keys.js'
import type { WatchHub } from '../../log/watch/hub.js'
import type { WatchBatch, WatchHandle } from '../../log/watch/types.js'
import type { Event } from '../../log/types.js'
import { queryInt, queryString, type Query } from '../params.js'
import { queryFlag } from './query.js'
import { parseResourceVersion, parseSelectors, scanPrefix } from './list.js'
import { decodeStored, type Target } from './objects.js'
import { type K8sObject } from './k8s-object.js'
import { apiVersionOf, collectionPrefix } from './paths.js'
import type { ResourceType } from './registry.js'
import type { Selector } from './selectors.js'
import { invalidOptions, statusOf, tooOldStatus } from './status.js'
import { toTable, type IncludeObject } from './table.js'

export interface WatchOptions {
  /** undefined = unset. */
  resourceVersion?: number
  sendInitialEvents?: boolean
  allowBookmarks: boolean
  timeoutSeconds?: number
  selector: Selector
}

/** Where a watch's events go: one JSON text per event. */
export interface EventSink {
  /** False when the connection is backed up (the text is still queued). */
  send(text: string): boolean
  end(): void
}

/** Events become Tables (kubectl get -w) instead of plain objects. */
export interface TableMode {
  include: IncludeObject
}

export function parseWatchOptions(q: Query, rt: ResourceType): WatchOptions {
  const rv = parseResourceVersion(q)
  const match = queryString(q, 'resourceVersionMatch')
  const sendInitialEvents = queryFlag(q, 'sendInitialEvents')
  const allowBookmarks = queryFlag(q, 'allowWatchBookmarks') ?? false
  if (sendInitialEvents !== undefined) {
    if (match !== 'NotOlderThan')
      throw invalidOptions('resourceVersionMatch', 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan')
    if (sendInitialEvents && !allowBookmarks)
      throw invalidOptions('allowWatchBookmarks', 'Forbidden: sendInitialEvents requires allowWatchBookmarks=true')
  } else if (match !== undefined && match !== '') {
    throw invalidOptions(
      'resourceVersionMatch',
      'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    )
  }
  const timeoutSeconds = queryInt(q, 'timeoutSeconds')
  return {
    ...(rv === undefined ? {} : { resourceVersion: rv }),
    ...(sendInitialEvents === undefined ? {} : { sendInitialEvents }),
    allowBookmarks,
    ...(timeoutSeconds ? { timeoutSeconds } : {}),
    selector: parseSelectors(q, rt),
  }
}

export class ResourceWatch {
  private handle: WatchHandle | undefined
  private timers: NodeJS.Timeout[] = []
  private closed = false
  /** The last revision the client has everything up to (for a too-old error's message). */
  private lastRevision: number

  constructor(
    private readonly log: Log,
    private readonly hub: WatchHub,
    private readonly target: Target,
    private readonly options: WatchOptions,
    private readonly sink: EventSink,
    private readonly table: TableMode | undefined,
    private readonly bookmarkInterval: number,
  ) {
    this.lastRevision = options.resourceVersion ?? 0
  }

  async start(): Promise<void> {
    const { options } = this
    if (this.closed) return
    if (options.timeoutSeconds !== undefined) this.timers.push(setTimeout(() => this.close(), options.timeoutSeconds * 1000))
    const initial = options.sendInitialEvents ?? (options.resourceVersion === undefined || options.resourceVersion === 0)
    let from = options.resourceVersion ?? 0
    if (initial) {
      from = await this.sendInitialEvents()
      if (this.closed) return
      if (options.sendInitialEvents === true) this.sendBookmark(from, true)
    }
    if (options.allowBookmarks && this.bookmarkInterval > 0) {
      this.timers.push(setInterval(() => this.handle?.requestProgress(), this.bookmarkInterval))
    }
    const prefix = collectionPrefix(this.target.rt, this.target.namespace)
    this.handle = this.hub.watch(
      { key: prefix, rangeEnd: prefixEnd(Buffer.from(prefix)), startRevision: from + 1, prevKv: true },
      {
        events: (batch) => this.onEvents(batch),
        canceled: (err) => this.onCanceled(err),
        progress: (revision) => {
          this.lastRevision = Math.max(this.lastRevision, revision)
          if (options.allowBookmarks) this.sendBookmark(revision, false)
        },
      },
    )
  }

  /** The sink drained: a paused watch catches up. */
  drained(): void {
    this.handle?.resume()
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (const t of this.timers) clearTimeout(t)
    this.handle?.cancel()
    this.sink.end()
  }

  /** ADDED for every current matching object; returns the revision they were read at. */
  private async sendInitialEvents(): Promise<number> {
    const revision = await scanPrefix(
      this.log,
      collectionPrefix(this.target.rt, this.target.namespace),
      (kv) => {
        const obj = decodeStored(kv, this.target)
        if (obj !== undefined && this.options.selector.matches(obj)) this.send('ADDED', obj)
      },
      () => this.closed,
    )
    this.lastRevision = revision
    return revision
  }

  private onEvents(batch: WatchBatch): boolean {
    let ok = true
    for (const event of batch.events) {
      const out = this.convert(event)
      if (out !== undefined) ok = this.send(out.type, out.object) && ok
    }
    this.lastRevision = batch.revision
    return ok
  }

  /** A log event as a watch event for this selection (or nothing if it never was in it). */
  private convert(event: Event): { type: string; object: K8sObject } | undefined {
    const revision = event.kv.modRevision
    const cur = event.type === 'PUT' ? decodeStored(event.kv, this.target) : undefined
    const prev = event.prevKv === undefined ? undefined : decodeStored(event.prevKv, this.target, revision)
    const curIn = cur !== undefined && this.options.selector.matches(cur)
    const prevIn = prev !== undefined && this.options.selector.matches(prev)
    if (curIn) return { type: prevIn ? 'MODIFIED' : 'ADDED', object: cur }
    if (prevIn) return { type: 'DELETED', object: prev }
    return undefined
  }

  private onCanceled(err: KvlogError): void {
    if (isKvlogError(err, 'COMPACTED')) {
      const floor = typeof err.details.compactRevision === 'number' ? err.details.compactRevision : this.log.compactRevision
      this.sink.send(JSON.stringify({ type: 'ERROR', object: tooOldStatus(this.lastRevision, floor) }))
    } else if (!isKvlogError(err, 'CLOSED')) {
      this.sink.send(JSON.stringify({ type: 'ERROR', object: statusOf(err) }))
    }
    this.handle = undefined
    this.close()
  }

  private send(type: string, obj: K8sObject): boolean {
    if (this.closed) return true
    const object =
      this.table === undefined ? obj : toTable(this.target.rt, [obj], { resourceVersion: obj.metadata.resourceVersion }, this.table.include)
    return this.sink.send(JSON.stringify({ type, object }))
  }

  private sendBookmark(revision: number, initialEventsEnd: boolean): void {
    if (this.closed) return
    const metadata = {
      resourceVersion: String(revision),
      ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
    }
    const object = { kind: this.target.rt.kind, apiVersion: apiVersionOf(this.target.rt.group, this.target.version), metadata }
    this.sink.send(JSON.stringify({ type: 'BOOKMARK', object }))
  }
}
