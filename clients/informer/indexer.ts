/**
 * Secondary indexes over a keyed cache (client-go's Indexers): an index function maps an object to the
 * index values it is filed under (zero, one or many); the index maps each value to the set of object keys.
 *
 *   namespace   o => [o.metadata.namespace ?? '']
 *   labels      o => ['app=web', 'tier=front', ...]           (one value per label, "key=value")
 *   custom      e.g. o => [o.spec.nodeName]                    (objects by node)
 *
 * The indexer only stores keys; the store holds the objects and calls update() on every change with the
 * old and the new object, so each index moves the key from the old values to the new ones.
 */
import type { KubeObject } from '../resources/types.js'

export type IndexFunc<T> = (object: T) => string[]

/** The namespace index (cluster-scoped objects are filed under ''). */
export const NAMESPACE_INDEX = 'namespace'
/** The label index: one value per label, "key=value". */
export const LABEL_INDEX = 'labels'

export function namespaceIndexFunc(o: KubeObject): string[] {
  return [o.metadata.namespace ?? '']
}

export function labelIndexFunc(o: KubeObject): string[] {
  return Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`)
}

/** An index on one label's value, e.g. labelValueIndexFunc('app') files an object with app=web under 'web'. */
export function labelValueIndexFunc(label: string): IndexFunc<KubeObject> {
  return (o) => {
    const v = o.metadata.labels?.[label]
    return v === undefined ? [] : [v]
  }
}

export class Indexer<T> {
  private readonly funcs = new Map<string, IndexFunc<T>>()
  /** index name → index value → object keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>()

  constructor(funcs: Record<string, IndexFunc<T>> = {}) {
    for (const [name, f] of Object.entries(funcs)) this.define(name, f)
  }

  get names(): string[] {
    return [...this.funcs.keys()]
  }

  /**
   * Adds an index. `existing` are the (key, object) pairs already cached: they are filed at once, so an
   * index added late answers like one defined from the start. A name can be defined once.
   */
  define(name: string, f: IndexFunc<T>, existing: Iterable<[string, T]> = []): void {
    if (this.funcs.has(name)) throw new TypeError(`index ${JSON.stringify(name)} already exists`)
    this.funcs.set(name, f)
    const index = new Map<string, Set<string>>()
    this.indices.set(name, index)
    for (const [key, o] of existing) for (const v of uniq(f(o))) file(index, v, key)
  }

  /** Moves `key` from the values of `old` to those of `next` in every index (undefined = absent). */
  update(key: string, old: T | undefined, next: T | undefined): void {
    for (const [name, f] of this.funcs) {
      const index = this.indices.get(name)!
      const before = old === undefined ? [] : uniq(f(old))
      const after = next === undefined ? [] : uniq(f(next))
      for (const v of before) if (!after.includes(v)) unfile(index, v, key)
      for (const v of after) if (!before.includes(v)) file(index, v, key)
    }
  }

  /** The keys filed under `value` in index `name`, sorted. */
  keys(name: string, value: string): string[] {
    return [...(this.index(name).get(value) ?? [])].sort()
  }

  /** The values index `name` currently has entries for, sorted. */
  values(name: string): string[] {
    return [...this.index(name).keys()].sort()
  }

  clear(): void {
    for (const index of this.indices.values()) index.clear()
  }

  private index(name: string): Map<string, Set<string>> {
    const index = this.indices.get(name)
    if (index === undefined) throw new TypeError(`no index named ${JSON.stringify(name)}`)
    return index
  }
}

function uniq(values: string[]): string[] {
  return values.length < 2 ? values : [...new Set(values)]
}

function file(index: Map<string, Set<string>>, value: string, key: string): void {
  let set = index.get(value)
  if (set === undefined) index.set(value, (set = new Set()))
  set.add(key)
}

function unfile(index: Map<string, Set<string>>, value: string, key: string): void {
  const set = index.get(value)
  if (set === undefined) return
  set.delete(key)
  if (set.size === 0) index.delete(value)
}
