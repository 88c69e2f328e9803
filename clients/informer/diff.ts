/**
 * What changed between the informer's cache and a fresh list: the relist after a watch could not resume
 * (410 Expired) turns the missed history into events.
 *
 * - a listed object the cache lacks: added;
 * - a listed object whose resourceVersion differs from the cached one: updated (old, new);
 *   the same resourceVersion means the same object version, so no event;
 * - a cached object the list lacks: deleted. Its last state is unknown (it may have changed several times
 *   before it went), so the delete carries a DeletedFinalStateUnknown tombstone with the last state the
 *   cache saw, as client-go does.
 */
import { objectKey, type KubeObject } from '../resources/types.js'

/** A delete the informer inferred from a relist: `object` is the last state it saw, not the final one. */
export class DeletedFinalStateUnknown<T extends KubeObject = KubeObject> {
  readonly finalStateUnknown = true
  constructor(
    readonly key: string,
    readonly object: T,
  ) {}
}

export interface ListDiff<T extends KubeObject> {
  added: T[]
  updated: Array<{ old: T; object: T }>
  deleted: DeletedFinalStateUnknown<T>[]
  /** Listed objects whose version the cache already had. */
  unchanged: number
}

export function diffList<T extends KubeObject>(
  cached: ReadonlyMap<string, T>,
  listed: readonly T[],
  keyOf: (o: T) => string = objectKey,
): ListDiff<T> {
  const diff: ListDiff<T> = { added: [], updated: [], deleted: [], unchanged: 0 }
  const seen = new Set<string>()
  for (const object of listed) {
    const key = keyOf(object)
    seen.add(key)
    const old = cached.get(key)
    if (old === undefined) diff.added.push(object)
    else if (sameVersion(old, object)) diff.unchanged++
    else diff.updated.push({ old, object })
  }
  for (const [key, old] of cached) if (!seen.has(key)) diff.deleted.push(new DeletedFinalStateUnknown(key, old))
  return diff
}

/** Same object version: equal resourceVersions, or (objects without one) equal JSON. */
function sameVersion(a: KubeObject, b: KubeObject): boolean {
  const ra = a.metadata.resourceVersion
  const rb = b.metadata.resourceVersion
  if (ra !== undefined || rb !== undefined) return ra === rb
  return JSON.stringify(a) === JSON.stringify(b)
}
