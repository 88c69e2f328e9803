/**
 * The shapes of the Kubernetes-style resource API (/api/v1/..., /apis/{group}/{version}/...), client side.
 * Only the fields the client library reads are typed; everything else travels untouched.
 */

export interface ObjectMeta {
  name?: string
  namespace?: string
  /** Opaque to clients; kvlog sets it to the object's mod revision. Required on update (compare-and-swap). */
  resourceVersion?: string
  uid?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  creationTimestamp?: string
  [field: string]: unknown
}

/** Any resource object: apiVersion, kind, metadata, then whatever the resource carries (spec, data, ...). */
export interface KubeObject {
  apiVersion?: string
  kind?: string
  metadata: ObjectMeta
  [field: string]: unknown
}

export interface ListMeta {
  resourceVersion?: string
  /** Present when more pages follow; pass it back as `continue` (all pages are one snapshot). */
  continue?: string
  remainingItemCount?: number
}

export interface ObjectList<T extends KubeObject = KubeObject> {
  apiVersion?: string
  kind?: string
  metadata: ListMeta
  items: T[]
}

/** A Kubernetes Status (metav1.Status): errors, and the object of an ERROR watch event. */
export interface Status {
  kind: 'Status'
  apiVersion?: string
  metadata?: ListMeta
  status?: 'Success' | 'Failure'
  message?: string
  /** metav1.StatusReason: NotFound, AlreadyExists, Conflict, Expired, Gone, Invalid, BadRequest, ... */
  reason?: string
  details?: Record<string, unknown>
  /** The HTTP status code (410 for Expired). */
  code?: number
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'

/**
 * One event of a watch stream. BOOKMARK carries an object with only metadata.resourceVersion (and maybe
 * annotations); ERROR carries a Status.
 */
export type ResourceWatchEvent<T extends KubeObject = KubeObject> =
  { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T } | { type: 'ERROR'; object: Status }

export function isStatus(o: unknown): o is Status {
  return typeof o === 'object' && o !== null && (o as { kind?: unknown }).kind === 'Status'
}

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones (client-go's MetaNamespaceKeyFunc). */
export function objectKey(o: KubeObject): string {
  const name = o.metadata.name ?? ''
  return o.metadata.namespace ? `${o.metadata.namespace}/${name}` : name
}

/** Splits a key made by objectKey into its namespace ('' when cluster-scoped) and name. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/')
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) }
}
