/**
 * A small typed REST client for kvlog's Kubernetes-style resource API (docs/api.md): list with paging,
 * get, create, update (compare-and-swap on metadata.resourceVersion), delete, and watch.
 *
 *   const configmaps = new ResourceClient<ConfigMap>({ endpoint }, { version: 'v1', resource: 'configmaps' })
 *   const list = await configmaps.listAll({ namespace: 'default', labelSelector: 'app=web' })
 *   const w = configmaps.watch({ namespace: 'default', resourceVersion: list.metadata.resourceVersion })
 *   for await (const e of w) ...                 // ADDED / MODIFIED / DELETED / BOOKMARK / ERROR
 *
 * Errors are StatusError (code = the Status reason: NotFound, Conflict, AlreadyExists, Expired, ...).
 * Writes are never retried after an ambiguous failure (OutcomeUnknownError), as in the native client.
 */
import { Endpoints } from '../endpoints.js'
import type { Credentials } from '../auth.js'
import { attachCredentials, exchange, type HttpOptions } from '../http.js'
import type { KubeObject, ObjectList } from './types.js'
import { ResourceWatch, type ResourceWatchOptions } from './watch.js'

/** Which resource: core ('' group, /api/v1) or a named group (/apis/{group}/{version}). */
export interface ResourceType {
  group?: string
  version: string
  /** The plural, lower-case resource name, e.g. 'configmaps'. */
  resource: string
  /** Default true. Cluster-scoped resources (e.g. namespaces) have no namespace segment. */
  namespaced?: boolean
}

export interface ResourceClientOptions {
  endpoint: string
  /** Per-request timeout, ms (default 30 s). Watches are not bound by it. */
  timeoutMs?: number
  /** Retries of reads after a connection failure (default 3). */
  readRetries?: number
  /** With auth enabled on the server: a user and password, or a bearer token (../auth.ts); watches too. */
  credentials?: Credentials
}

/** What to select: a namespace (absent = all namespaces) and label / field selectors. */
export interface Selection {
  namespace?: string
  labelSelector?: string
  fieldSelector?: string
}

export interface ListOptions extends Selection {
  limit?: number
  continue?: string
  /** Unset: the most recent state (a consistent read). "0": any state. N: see resourceVersionMatch. */
  resourceVersion?: string
  resourceVersionMatch?: 'Exact' | 'NotOlderThan'
  /** Cancels the request. */
  signal?: AbortSignal
}

export class ResourceClient<T extends KubeObject = KubeObject> {
  readonly http: HttpOptions

  constructor(
    options: ResourceClientOptions,
    readonly type: ResourceType,
  ) {
    this.http = {
      endpoints: new Endpoints([options.endpoint]),
      timeoutMs: options.timeoutMs ?? 30_000,
      readRetries: options.readRetries ?? 3,
    }
    if (options.credentials !== undefined) attachCredentials(this.http, options.credentials)
  }

  /** The URL path of the collection (no name) or of one object. */
  path(namespace?: string, name?: string): string {
    const t = this.type
    let p = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`
    if (t.namespaced !== false && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`
    p += `/${t.resource}`
    if (name !== undefined) p += `/${encodeURIComponent(name)}`
    return p
  }

  /** One page. */
  async list(options: ListOptions = {}): Promise<ObjectList<T>> {
    const q = selectionQuery(options)
    if (options.limit !== undefined) q.set('limit', String(options.limit))
    if (options.continue) q.set('continue', options.continue)
    if (options.resourceVersion !== undefined) q.set('resourceVersion', options.resourceVersion)
    if (options.resourceVersionMatch) q.set('resourceVersionMatch', options.resourceVersionMatch)
    return exchange<ObjectList<T>>(this.http, {
      method: 'GET',
      path: this.path(options.namespace),
      query: q,
      idempotent: true,
      signal: options.signal,
    })
  }

  /**
   * Every page, as one list: all pages are read at the first page's resourceVersion (one snapshot), which
   * the result carries. An expired continue token (the snapshot was compacted between pages) raises
   * StatusError Expired: list again.
   */
  async listAll(options: Omit<ListOptions, 'limit' | 'continue'> & { pageSize?: number } = {}): Promise<ObjectList<T>> {
    const { pageSize = 500, ...rest } = options
    const first = await this.list({ ...rest, limit: pageSize })
    const items = [...first.items]
    let token = first.metadata.continue
    while (token) {
      const page = await this.list({
        ...rest,
        resourceVersion: undefined,
        resourceVersionMatch: undefined,
        limit: pageSize,
        continue: token,
      })
      items.push(...page.items)
      token = page.metadata.continue
    }
    return { ...first, metadata: { resourceVersion: first.metadata.resourceVersion }, items }
  }

  async get(name: string, namespace?: string): Promise<T> {
    return exchange<T>(this.http, { method: 'GET', path: this.path(namespace, name), idempotent: true })
  }

  /** Creates the object in metadata.namespace; AlreadyExists if the name is taken. */
  async create(object: T): Promise<T> {
    return exchange<T>(this.http, { method: 'POST', path: this.path(object.metadata.namespace), body: object, idempotent: false })
  }

  /** Replaces the object; with metadata.resourceVersion set, only if it is still that version (else Conflict). */
  async update(object: T): Promise<T> {
    const name = object.metadata.name
    if (!name) throw new TypeError('update needs metadata.name')
    return exchange<T>(this.http, { method: 'PUT', path: this.path(object.metadata.namespace, name), body: object, idempotent: false })
  }

  /** Deletes the object; with `resourceVersion`, only if it is still that version (else Conflict). */
  async delete(name: string, namespace?: string, options: { resourceVersion?: string } = {}): Promise<unknown> {
    const body =
      options.resourceVersion === undefined
        ? undefined
        : { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: options.resourceVersion } }
    return exchange(this.http, { method: 'DELETE', path: this.path(namespace, name), body, idempotent: false })
  }

  /** A watch stream of the selection; see ResourceWatch. */
  watch(options: Selection & ResourceWatchOptions = {}): ResourceWatch<T> {
    const q = selectionQuery(options)
    return new ResourceWatch<T>(this.http.endpoints.current, this.path(options.namespace), q, options, this.http.auth)
  }
}

function selectionQuery(s: Selection): URLSearchParams {
  const q = new URLSearchParams()
  if (s.labelSelector) q.set('labelSelector', s.labelSelector)
  if (s.fieldSelector) q.set('fieldSelector', s.fieldSelector)
  return q
}
