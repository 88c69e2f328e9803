/**
 * The informer's local cache: objects by key (`namespace/name`, or `name` when cluster-scoped) with
 * secondary indexes (indexer.ts). Namespace and label indexes are always there; custom ones are added with
 * the constructor or addIndex().
 *
 * Only the informer writes to it; handlers and controllers read it (get, list, byIndex). Returned objects
 * are the cached ones: treat them as read-only (copy before changing, e.g. structuredClone).
 */
import { objectKey, type KubeObject } from '../resources/types.js'
import { diffList, type ListDiff } from './diff.js'
import { Indexer, LABEL_INDEX, NAMESPACE_INDEX, labelIndexFunc, namespaceIndexFunc, type IndexFunc } from './indexer.js'

export class Store<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>()
  private readonly indexer: Indexer<T>

  constructor(
    indexers: Record<string, IndexFunc<T>> = {},
    readonly keyOf: (o: T) => string = objectKey,
  ) {
    this.indexer = new Indexer<T>({ [NAMESPACE_INDEX]: namespaceIndexFunc, [LABEL_INDEX]: labelIndexFunc, ...indexers })
  }

  get size(): number {
    return this.items.size
  }

  get(key: string): T | undefined {
    return this.items.get(key)
  }

  has(key: string): boolean {
    return this.items.has(key)
  }

  /** Every cached object, sorted by key. */
  list(): T[] {
    return this.keys().map((k) => this.items.get(k)!)
  }

  keys(): string[] {
    return [...this.items.keys()].sort()
  }

  /** The objects filed under `value` in index `name`, sorted by key. */
  byIndex(name: string, value: string): T[] {
    return this.indexer.keys(name, value).map((k) => this.items.get(k)!)
  }

  indexKeys(name: string, value: string): string[] {
    return this.indexer.keys(name, value)
  }

  indexValues(name: string): string[] {
    return this.indexer.values(name)
  }

  addIndex(name: string, f: IndexFunc<T>): void {
    this.indexer.define(name, f, this.items)
  }

  /** Inserts or replaces; returns the object it replaced. */
  upsert(object: T): T | undefined {
    const key = this.keyOf(object)
    const old = this.items.get(key)
    this.items.set(key, object)
    this.indexer.update(key, old, object)
    return old
  }

  /** Removes by key; returns what was cached. */
  remove(key: string): T | undefined {
    const old = this.items.get(key)
    if (old === undefined) return undefined
    this.items.delete(key)
    this.indexer.update(key, old, undefined)
    return old
  }

  /** Makes the cache equal to `listed` and returns what changed (diff.ts). */
  replace(listed: readonly T[]): ListDiff<T> {
    const diff = diffList(this.items, listed, this.keyOf)
    for (const d of diff.deleted) this.remove(d.key)
    for (const o of diff.added) this.upsert(o)
    for (const u of diff.updated) this.upsert(u.object)
    return diff
  }
}
