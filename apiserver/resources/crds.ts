/**
 * Keeps the registry's custom kinds in step with the CustomResourceDefinition objects in the log: it
 * follows the log's commits (every CRD write, through any front door) and reads the stored CRDs once at
 * start, so kinds survive a restart. The registry orders updates by revision, so the commits seen while
 * the start-up read runs and the read itself can arrive in any order. The resource API's own CRD writes
 * also apply directly (onWrite), so a kind is usable as soon as the create of its CRD returns.
 *
 * It subscribes to the log's commit hook rather than opening a hub watch: an internal follower is not a
 * client watch (it would show in the watcher gauge) and can never fall behind or be compacted away.
 */
import type { Log } from '../../log/backend.js'
import type { LogEntry } from '../../log/types.js'
import type { JsonObject } from '../codec.js'
import { scanPrefix } from './list.js'
import type { K8sObject } from './k8s-object.js'
import { collectionPrefix } from './paths.js'
import { CRD_TYPE, type Registry, type ResourceType } from './registry.js'

const PREFIX = collectionPrefix(CRD_TYPE, undefined)
const PREFIX_BYTES = Buffer.from(PREFIX)

export class CrdSync {
  private unsubscribe: (() => void) | undefined

  constructor(
    private readonly log: Pick<Log, 'range' | 'subscribe'>,
    private readonly registry: Registry,
  ) {}

  /** Follows CRD writes from now on, then loads every stored CRD. */
  async start(): Promise<void> {
    this.unsubscribe = this.log.subscribe((entries) => this.onCommit(entries))
    await scanPrefix(this.log, PREFIX, (kv) => this.apply(kv.key, kv.value, kv.modRevision))
  }

  stop(): void {
    this.unsubscribe?.()
  }

  /** The store's write hook: CRD writes through this API apply at once. */
  onWrite(rt: ResourceType, name: string, obj: K8sObject | undefined, revision: number): void {
    if (rt !== CRD_TYPE) return
    if (obj === undefined) this.registry.removeCrd(name, revision)
    else this.registry.applyCrd(obj, revision)
  }

  private onCommit(entries: readonly LogEntry[]): void {
    for (const entry of entries) {
      for (const e of entry.events) {
        if (e.kv.key.length <= PREFIX_BYTES.length || !e.kv.key.subarray(0, PREFIX_BYTES.length).equals(PREFIX_BYTES)) continue
        if (e.type === 'PUT') this.apply(e.kv.key, e.kv.value, entry.revision)
        else this.registry.removeCrd(nameOf(e.kv.key), entry.revision)
      }
    }
  }

  private apply(key: Buffer, value: Buffer, revision: number): void {
    let crd: unknown
    try {
      crd = JSON.parse(value.toString('utf8'))
    } catch {
      crd = undefined
    }
    if (typeof crd === 'object' && crd !== null && !Array.isArray(crd)) this.registry.applyCrd(crd as JsonObject, revision)
    else this.registry.removeCrd(nameOf(key), revision)
  }
}

function nameOf(key: Buffer): string {
  return key.subarray(PREFIX_BYTES.length).toString('utf8')
}
