/**
 * The Kubernetes-style resource API as a reliability driver: ConfigMaps in one namespace, written with
 * kube-apiserver's preconditions through ResourceClient (clients/resources/), and watched with ResourceWatch.
 *
 * Operations are `object` ops (history.ts): create (409 AlreadyExists if the name is taken), update with
 * metadata.resourceVersion (409 Conflict if stale), delete with preconditions.resourceVersion (409
 * Conflict). Each carries a unique tag in data.soakTag. The server builds the stored bytes (uid,
 * creationTimestamp, generation), so the result carries them: the answered object without
 * metadata.resourceVersion, which is exactly what the server stored (apiserver/resources/objects.ts,
 * encodeForStorage). A delete answers the deleted version; the checker finds the delete's revision in the
 * log. Outcomes as on the native door: an answer with a Status is a failure with its reason as the code,
 * nothing sent is a failure, a connection lost after sending is unknown.
 *
 * Watches: one HTTP watch request per watch (kube has no multiplexing), grouped into a "connection" that
 * closes as a whole when any of its streams ends, so the watch pool resumes them all from their last
 * resourceVersion. Events are recorded in the native wire shape, for a spec with objectView
 * (test/apiserver/watch/checker.ts): ADDED/MODIFIED = PUT, DELETED = DELETE (its value is the deleted
 * object), BOOKMARK = progress, ERROR 410 Expired = canceled COMPACTED, ERROR 503 (the server drains)
 * = the connection ends; any other ERROR is recorded as an error (a violation).
 */
import { KvlogClientError } from '../../../clients/errors.js'
import { ResourceClient } from '../../../clients/resources/http.js'
import type { KubeObject } from '../../../clients/resources/types.js'
import type { ResourceWatch } from '../../../clients/resources/watch.js'
import { MessageBook, type CreateRequest, type WireEvent } from '../../support/watch-client.js'
import type { WatchSpec } from '../../support/watch-specs.js'
import { classifyClientError } from './native.js'
import { OBJECT_TAG_FIELD, type Operation, type OpResult } from '../history.js'
import type { Classified, Door, Driver, WatchConn } from './types.js'

export const NAMESPACE = 'default'
export const CONFIGMAPS = `/registry/configmaps/${NAMESPACE}/`
/** The watch of the namespace's ConfigMaps, as the watch pool and checker see it. */
export const CONFIGMAP_WATCH: WatchSpec = { key: CONFIGMAPS, prefix: true, objectView: true }

const TYPE = { version: 'v1', resource: 'configmaps' }

/** The bytes the server stored for an object it answered (the object without metadata.resourceVersion). */
export function storedBytes(obj: KubeObject): string {
  const { resourceVersion: _rv, selfLink: _sl, ...metadata } = obj.metadata as Record<string, unknown>
  return Buffer.from(JSON.stringify({ ...obj, metadata })).toString('base64')
}

function nameOf(keyBase64: string): string {
  const key = Buffer.from(keyBase64, 'base64').toString('utf8')
  if (!key.startsWith(CONFIGMAPS)) throw new TypeError(`${key} is not a ConfigMap of namespace ${NAMESPACE}`)
  return key.slice(CONFIGMAPS.length)
}

export class ResourcesDriver implements Driver {
  readonly door = 'resources'
  private readonly client: ResourceClient

  constructor(endpoint: string, timeoutMs = 5000, token?: string) {
    this.client = new ResourceClient(
      { endpoint, timeoutMs, readRetries: 1, ...(token !== undefined ? { credentials: { token } } : {}) },
      TYPE,
    )
  }

  supports(type: Operation['type']): boolean {
    return type === 'object'
  }

  async execute(op: Operation): Promise<OpResult> {
    if (op.type !== 'object') throw new TypeError(`the resources door runs object ops, not ${op.type}`)
    const name = nameOf(op.keyBase64)
    const written = (obj: KubeObject): OpResult => ({ revision: Number(obj.metadata.resourceVersion), valueBase64: storedBytes(obj) })
    const body = (rv?: number): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: NAMESPACE, ...(rv !== undefined ? { resourceVersion: String(rv) } : {}) },
      data: { [OBJECT_TAG_FIELD]: op.tag },
    })
    switch (op.verb) {
      case 'create':
        return written(await this.client.create(body()))
      case 'update':
        if (op.resourceVersion === undefined) throw new TypeError('an update needs a resourceVersion (the CAS precondition)')
        return written(await this.client.update(body(op.resourceVersion)))
      case 'delete': {
        if (op.resourceVersion === undefined) throw new TypeError('a delete needs a resourceVersion (the precondition)')
        const last = (await this.client.delete(name, NAMESPACE, { resourceVersion: String(op.resourceVersion) })) as KubeObject
        return { revision: Number(last.metadata.resourceVersion) }
      }
    }
  }

  /** The object's current resourceVersion, undefined if there is none (a read for the workload, not recorded). */
  async currentVersion(keyBase64: string): Promise<number | undefined> {
    try {
      return Number((await this.client.get(nameOf(keyBase64), NAMESPACE)).metadata.resourceVersion)
    } catch (err) {
      if (err instanceof KvlogClientError && err.code === 'NotFound') return undefined
      throw err
    }
  }

  classify(err: unknown): Classified {
    return classifyClientError(err)
  }

  async close(): Promise<void> {}
}

interface WatchEvent {
  type: string
  object: KubeObject & { code?: number; reason?: string; message?: string }
}

/** Several resource watches (one HTTP stream each) that live and die together, like one connection. */
export class ResourceWatchConn extends MessageBook implements WatchConn {
  readonly closed: Promise<{ code: number; reason: string }>
  private readonly streams = new Set<ResourceWatch>()
  private nextId = 1
  private open = true
  private finish!: (reason: string) => void

  constructor(
    readonly label: string,
    private readonly client: ResourceClient,
  ) {
    super()
    this.closed = new Promise((resolve) => {
      this.finish = (reason) => {
        if (!this.open) return
        this.open = false
        for (const s of this.streams) s.close()
        resolve({ code: 1006, reason })
      }
    })
  }

  /** Connects once the server answers (a list), so a slot does not spin while the server is down. */
  static async connect(endpoint: string, label: string, token?: string): Promise<ResourceWatchConn> {
    const client = new ResourceClient(
      { endpoint, timeoutMs: 2000, readRetries: 0, ...(token !== undefined ? { credentials: { token } } : {}) },
      TYPE,
    )
    await client.list({ namespace: NAMESPACE, limit: 1 })
    return new ResourceWatchConn(label, client)
  }

  get isOpen(): boolean {
    return this.open
  }

  allocateId(): number {
    return this.nextId++
  }

  /** Watches the namespace's ConfigMaps from `startRevision` (resourceVersion = startRevision - 1). */
  create(request: CreateRequest & { id: number }): number {
    const id = request.id
    const start = request.startRevision ?? 0
    if (start < 2) throw new TypeError('a resource watch needs a start revision >= 2 (resourceVersion 0 means "list first")')
    const watch = this.client.watch({ namespace: NAMESPACE, resourceVersion: String(start - 1), allowWatchBookmarks: true })
    this.streams.add(watch)
    // Nothing marks a kube watch as created: the request itself stands for it.
    this.record(id, { type: 'created', id, revision: start - 1 })
    void this.pump(id, watch)
    return id
  }

  private async pump(id: number, watch: ResourceWatch): Promise<void> {
    let reason = 'the watch stream ended'
    try {
      for await (const e of watch as AsyncIterable<WatchEvent>) {
        if (!this.open) return
        this.onEvent(id, e)
        if (e.type === 'ERROR') break
      }
    } catch (err) {
      reason = String((err as Error).message ?? err)
    }
    this.streams.delete(watch)
    this.finish(reason)
  }

  private onEvent(id: number, e: WatchEvent): void {
    const revision = Number(e.object.metadata?.resourceVersion)
    if (e.type === 'BOOKMARK') {
      this.record(id, { type: 'progress', id, revision })
    } else if (e.type === 'ERROR') {
      const status = e.object
      const floor = /\((\d+)\)/.exec(status.message ?? '')?.[1]
      if (status.code === 503) {
        // The server is draining (SIGTERM): like a dropped connection, the stream ends and the watch resumes.
        return
      } else if (status.code === 410 && floor !== undefined) {
        this.record(id, { type: 'canceled', id, reason: String(status.message), code: 'COMPACTED', compactRevision: Number(floor) })
      } else {
        this.record(id, { type: 'error', id, code: String(status.reason), message: String(status.message) })
      }
    } else {
      const key = Buffer.from(`${CONFIGMAPS}${e.object.metadata.name}`).toString('base64')
      const kv = { keyBase64: key, valueBase64: storedBytes(e.object), createRevision: 0, modRevision: revision, version: 0 }
      const event: WireEvent = { type: e.type === 'DELETED' ? 'DELETE' : 'PUT', revision, kv }
      this.record(id, { type: 'events', id, revision, events: [event] })
    }
  }

  /** Resource watches send bookmarks on their own (every watchProgressInterval); nothing to ask for. */
  requestProgress(): void {}

  terminate(): void {
    this.finish('terminated')
  }
}

/** The resource API at `endpoint` (the server's HTTP address); `token`: a fixed bearer token. */
export function resourcesDoor(endpoint: string, token?: string): Door {
  return {
    name: 'resources',
    driver: () => new ResourcesDriver(endpoint, 5000, token),
    connectWatch: (label) => ResourceWatchConn.connect(endpoint, label, token),
    watches: (spec) => spec.objectView === true,
    close: async () => undefined,
  }
}
