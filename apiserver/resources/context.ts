/**
 * What every route of the resource API works with: the services (one per server), and one request
 * resolved from its path (parsePath + the registry) into the kind, version, namespace and name.
 */
import type { IncomingMessage } from 'node:http'
import type { Log } from '../../log/backend.js'
import type { Identity } from '../auth/authorizer.js'
import type { WatchHub } from '../../log/watch/hub.js'
import type { Query } from '../params.js'
import { queryString } from '../params.js'
import type { Namespaces } from './namespaces.js'
import type { Target } from './objects.js'
import type { ApiPath } from './paths.js'
import type { Registry } from './registry.js'
import { badRequest, noSuchPath } from './status.js'
import type { ObjectStore } from './store.js'

export interface ApiContext {
  log: Log
  hub: WatchHub
  store: ObjectStore
  registry: Registry
  namespaces: Namespaces
  /** Periodic BOOKMARK events of watches with allowWatchBookmarks, ms (0 = none). */
  bookmarkInterval: number
  /** A list reads and writes its objects about this many bytes at a time (range-steps.ts). */
  listChunkBytes: number
  /** A DELETE of a collection reads at most this many matching objects at one revision (routes/delete-collection.ts). */
  deleteCollectionPage: number
  /** The caller of a request that is not served inside a route (a WebSocket upgrade); throws UNAUTHENTICATED. */
  callerOf(request: IncomingMessage): Identity
  /** Throws PERMISSION_DENIED (or UNAUTHENTICATED) unless `who` may read every key of the prefix. */
  authorizeRead(who: Identity, prefix: string): void
  /**
   * For a running watch, after each change of the auth state: throws PERMISSION_DENIED once `who` was
   * deleted, changed password or may no longer read the prefix. Returns the function that stops it.
   */
  whileAuthorized(who: Identity, prefix: string, denied: (err: unknown) => void): () => void
}

export interface ResourceRequest {
  target: Target
  name?: string
  /** The status or scale subresource (`.../{name}/status`), for kinds that have one. */
  subresource?: 'status' | 'scale'
  query: Query
}

/**
 * The kind and scope a resource path names; 404 for unknown kinds, unknown subresources and misplaced
 * scopes. The subresources are status (kinds with statusSubresource) and scale (with scaleSubresource).
 */
export function resolveResource(registry: Registry, path: Extract<ApiPath, { type: 'resource' }>, query: Query): ResourceRequest {
  const rt = registry.lookup(path.group, path.version, path.resource)
  if (rt === undefined) throw noSuchPath()
  const subresource = path.subresource
  if (subresource !== undefined && !(subresource === 'status' ? rt.statusSubresource : subresource === 'scale' && rt.scaleSubresource))
    throw noSuchPath()
  if (!rt.namespaced && path.namespace !== undefined) throw noSuchPath()
  return {
    target: { rt, version: path.version, ...(path.namespace === undefined ? {} : { namespace: path.namespace }) },
    ...(path.name === undefined ? {} : { name: path.name }),
    ...(subresource === 'status' || subresource === 'scale' ? { subresource } : {}),
    query,
  }
}

/** dryRun=All: validate and answer, but write nothing. */
export function dryRunOf(q: Query): boolean {
  const v = queryString(q, 'dryRun')
  if (v === undefined || v === '') return false
  if (v !== 'All') throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`)
  return true
}
