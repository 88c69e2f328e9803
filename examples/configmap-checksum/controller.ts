/**
 * An example controller built on the informer: for every ConfigMap labelled
 * `checksum.kvlog.dev/enabled=true` it keeps a derived ConfigMap `<name>-checksum` in the same namespace
 * whose data holds the SHA-256 of the source's data and its keys:
 *
 *   source   configmaps/web            labels: checksum.kvlog.dev/enabled=true   data: { a: '1', b: '2' }
 *   derived  configmaps/web-checksum   labels: checksum.kvlog.dev/source=web      data: { sha256, keys: 'a,b' }
 *
 * Level-triggered, as controllers should be: handlers only enqueue the source's key; the reconcile reads
 * the informers' caches and makes the derived object match (create, update with the cached
 * resourceVersion, or delete when the source is gone or lost its label). A tampered or deleted derived
 * object is put back, because the derived objects are watched too. Failures (a Conflict after a
 * concurrent change, AlreadyExists while the cache lags) are retried by the work queue with backoff.
 *
 * It imports only the client package.
 */
import { createHash } from 'node:crypto'
import {
  DeletedFinalStateUnknown,
  Informer,
  ResourceClient,
  WorkQueue,
  isReason,
  objectKey,
  runWorkers,
  splitKey,
  type KubeObject,
  type Workers,
} from '../../clients/index.js'

export const ENABLED_LABEL = 'checksum.kvlog.dev/enabled'
export const SOURCE_LABEL = 'checksum.kvlog.dev/source'
export const SUFFIX = '-checksum'

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>
}

export interface ChecksumControllerOptions {
  endpoint: string
  /** Watch one namespace; absent: all namespaces. */
  namespace?: string
  workers?: number
  resyncPeriodMs?: number
  /** Passed to both informers (tests shorten them). */
  minBackoffMs?: number
  maxBackoffMs?: number
  onError?(key: string, err: unknown): void
}

/** The data a derived ConfigMap should hold for a source. */
export function checksumData(source: ConfigMap): Record<string, string> {
  const data = source.data ?? {}
  const keys = Object.keys(data).sort()
  const canonical = JSON.stringify(keys.map((k) => [k, data[k]]))
  return { sha256: createHash('sha256').update(canonical).digest('hex'), keys: keys.join(',') }
}

export class ChecksumController {
  readonly sources: Informer<ConfigMap>
  readonly derived: Informer<ConfigMap>
  readonly queue = new WorkQueue<string>()
  /** Writes done by reconciles (creates, updates, deletes). */
  writes = 0
  private readonly client: ResourceClient<ConfigMap>
  private workers: Workers | undefined

  constructor(readonly options: ChecksumControllerOptions) {
    this.client = new ResourceClient<ConfigMap>({ endpoint: options.endpoint }, { version: 'v1', resource: 'configmaps' })
    const common = {
      namespace: options.namespace,
      resyncPeriodMs: options.resyncPeriodMs,
      minBackoffMs: options.minBackoffMs,
      maxBackoffMs: options.maxBackoffMs,
    }
    this.sources = new Informer(this.client, { ...common, labelSelector: `${ENABLED_LABEL}=true` })
    this.derived = new Informer(this.client, { ...common, labelSelector: SOURCE_LABEL })

    const enqueueSource = (o: ConfigMap | DeletedFinalStateUnknown<ConfigMap>) =>
      this.queue.add(o instanceof DeletedFinalStateUnknown ? o.key : objectKey(o))
    this.sources.addEventHandler({ onAdd: enqueueSource, onUpdate: (_old, o) => enqueueSource(o), onDelete: enqueueSource })
    // A change to a derived object (edited, deleted) re-reconciles its source.
    const enqueueOwner = (o: ConfigMap | DeletedFinalStateUnknown<ConfigMap>) => {
      const d = o instanceof DeletedFinalStateUnknown ? o.object : o
      const source = d.metadata.labels?.[SOURCE_LABEL]
      if (source) this.queue.add(`${d.metadata.namespace}/${source}`)
    }
    this.derived.addEventHandler({ onAdd: enqueueOwner, onUpdate: (_old, o) => enqueueOwner(o), onDelete: enqueueOwner })
  }

  /** Starts the informers, waits until both caches are filled, then starts the workers. */
  async start(): Promise<void> {
    this.sources.start()
    this.derived.start()
    await Promise.all([this.sources.synced(), this.derived.synced()])
    this.workers = runWorkers({
      queue: this.queue,
      workers: this.options.workers ?? 2,
      reconcile: (key) => this.reconcile(key),
      onError: (key, err) => this.options.onError?.(key, err),
    })
  }

  async stop(): Promise<void> {
    await Promise.all([this.sources.stop(), this.derived.stop()])
    this.queue.shutDown()
    await this.workers?.done
  }

  /** Makes `<namespace>/<name>-checksum` match the source `<namespace>/<name>` (or not exist). */
  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key)
    const source = this.sources.store.get(key)
    const derivedName = `${name}${SUFFIX}`
    const current = this.derived.store.get(`${namespace}/${derivedName}`)

    if (source === undefined) {
      if (current === undefined) return
      try {
        await this.client.delete(derivedName, namespace, { resourceVersion: current.metadata.resourceVersion })
        this.writes++
      } catch (err) {
        if (!isReason(err, 'NotFound')) throw err
      }
      return
    }

    const data = checksumData(source)
    if (current === undefined) {
      await this.client.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: derivedName, namespace, labels: { [SOURCE_LABEL]: name } },
        data,
      })
      this.writes++
      return
    }
    if (JSON.stringify(current.data ?? {}) === JSON.stringify(data)) return
    // Copy before changing: cached objects are shared. The resourceVersion makes it a compare-and-swap.
    const next = structuredClone(current)
    next.data = data
    await this.client.update(next)
    this.writes++
  }
}
