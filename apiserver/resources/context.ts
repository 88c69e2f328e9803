/**
 * What every route of the resource API works with: the services (one per server), and one request
 * resolved from its path (parsePath + the registry) into the kind, version, namespace and name.
 */
import type { Log } from '../../log/backend.js'
import type { WatchHub } from '../../log/watch/hub.js'
import type { Query } from '../params.js'
import { queryString } from '../params.js'
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
  /** Periodic BOOKMARK events of watches with allowWatchBookmarks, ms (0 = none). */
  bookmarkInterval: number
}

export interface ResourceRequest {
  target: Target
  name?: string
  query: Query
}

/** The kind and scope a resource path names; 404 for unknown kinds, subresources and misplaced scopes. */
export function resolveResource(registry: Registry, path: Extract<ApiPath, { type: 'resource' }>, query: Query): ResourceRequest {
  const rt = registry.lookup(path.group, path.version, path.resource)
  if (rt === undefined || path.subresource !== undefined) throw noSuchPath()
  if (!rt.namespaced && path.namespace !== undefined) throw noSuchPath()
  return { target: { rt, version: path.version, ...(path.namespace === undefined ? {} : { namespace: path.namespace }) }, ...(path.name === undefined ? {} : { name: path.name }), query }
}

/** dryRun=All: validate and answer, but write nothing. */
export function dryRunOf(q: Query): boolean {
  const v = queryString(q, 'dryRun')
  if (v === undefined || v === '') return false
  if (v !== 'All') throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`)
  return true
}
