/**
 * Keeps the registry's custom kinds in step with the CustomResourceDefinition objects in the log: on
 * start it reads them all, then watches their prefix through the hub, so CRDs written through any front
 * door (or restored from disk after a restart) define their kinds. The resource API's own CRD writes
 * also apply directly (onWrite), so a kind is usable as soon as the create of its CRD returns.
 */
import type { Log } from '../../log/backend.js'
import { isKvlogError, type KvlogError } from '../../log/errors.js'
import { prefixEnd } from '../../log/keys.js'
import type { WatchHub } from '../../log/watch/hub.js'
import type { WatchHandle } from '../../log/watch/types.js'
import type { JsonObject } from '../codec.js'
import { scanPrefix } from './list.js'
import type { K8sObject } from './objects.js'
import { collectionPrefix } from './paths.js'
import { CRD_TYPE, type Registry, type ResourceType } from './registry.js'

const PREFIX = collectionPrefix(CRD_TYPE, undefined)

export class CrdSync {
  private handle: WatchHandle | undefined

  constructor(private readonly log: Log, private readonly hub: WatchHub, private readonly registry: Registry) {}

  /** Loads every stored CRD, then follows changes. */
  async start(): Promise<void> {
    const revision = await scanPrefix(this.log, PREFIX, (kv) => this.apply(kv.key, kv.value, kv.modRevision))
    this.handle = this.hub.watch({ key: PREFIX, rangeEnd: prefixEnd(Buffer.from(PREFIX)), startRevision: revision + 1 }, {
      events: (batch) => {
        for (const e of batch.events) {
          if (e.type === 'PUT') this.apply(e.kv.key, e.kv.value, e.kv.modRevision)
          else this.registry.removeCrd(e.kv.key.toString('utf8').slice(PREFIX.length), e.kv.modRevision)
        }
        return true
      },
      canceled: (err: KvlogError) => {
        this.handle = undefined
        // Never paused (events() always returns true), so COMPACTED is not expected; reload to be safe.
        if (!isKvlogError(err, 'CLOSED')) void this.start()
      },
    })
  }

  stop(): void {
    this.handle?.cancel()
  }

  /** The store's write hook: CRD writes through this API apply at once. */
  onWrite(rt: ResourceType, name: string, obj: K8sObject | undefined, revision: number): void {
    if (rt !== CRD_TYPE) return
    if (obj === undefined) this.registry.removeCrd(name, revision)
    else this.registry.applyCrd(obj, revision)
  }

  private apply(key: Buffer, value: Buffer, revision: number): void {
    let crd: unknown
    try {
      crd = JSON.parse(value.toString('utf8'))
    } catch {
      return
    }
    if (typeof crd === 'object' && crd !== null && !Array.isArray(crd)) this.registry.applyCrd(crd as JsonObject, revision)
    else this.registry.removeCrd(key.toString('utf8').slice(PREFIX.length), revision)
  }
}
