/**
 * URL paths of the resource API and the storage keys behind them.
 *
 *   /api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]                core group
 *   /apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
 *   /api/v1/namespaces[/{name}[/{subresource}]]                                  the namespaces themselves
 *
 * Storage keys (what the etcd and native APIs see):
 *
 *   /registry/[{group}/]{resource}/[{namespace}/]{name}
 *             └ absent for the core group      └ absent for cluster-scoped kinds
 *
 * A collection prefix always ends in '/', so namespace "a" never matches keys of namespace "ab".
 */
import { noSuchPath } from './status.js'
import type { ResourceType } from './registry.js'

export type ApiPath =
  | { type: 'discovery'; what: 'api' | 'apis' | 'group' | 'groupVersion'; group: string; version: string }
  | { type: 'resource'; group: string; version: string; resource: string; namespace?: string; name?: string; subresource?: string }

/** Parses a path under /api or /apis; throws NOT_FOUND for anything else. */
export function parsePath(path: string): ApiPath {
  const segments = path.split('/').slice(1).map(decodeSegment)
  if (segments.at(-1) === '') segments.pop()
  let group: string
  let version: string
  let rest: string[]
  if (segments[0] === 'api') {
    if (segments.length === 1) return { type: 'discovery', what: 'api', group: '', version: '' }
    ;[group, version, rest] = ['', segments[1], segments.slice(2)]
  } else if (segments[0] === 'apis') {
    if (segments.length === 1) return { type: 'discovery', what: 'apis', group: '', version: '' }
    if (segments.length === 2) return { type: 'discovery', what: 'group', group: segments[1], version: '' }
    ;[group, version, rest] = [segments[1], segments[2], segments.slice(3)]
  } else {
    throw noSuchPath()
  }
  if (rest.length === 0) return { type: 'discovery', what: 'groupVersion', group, version }
  if (rest.some((s) => s === '')) throw noSuchPath()
  // /namespaces/{ns}/{resource}/... — unless it addresses a namespace itself (or its status/finalize).
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !(group === '' && rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))
  ) {
    if (rest.length > 5) throw noSuchPath()
    return { type: 'resource', group, version, namespace: rest[1], resource: rest[2], name: rest[3], subresource: rest[4] }
  }
  if (rest.length > 3) throw noSuchPath()
  return { type: 'resource', group, version, resource: rest[0], name: rest[1], subresource: rest[2] }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw noSuchPath()
  }
}

/** The key prefix of a collection: every object of the kind, or of one namespace of it. */
export function collectionPrefix(rt: ResourceType, namespace: string | undefined): string {
  const base = `/registry/${rt.group === '' ? '' : `${rt.group}/`}${rt.resource}/`
  return rt.namespaced && namespace !== undefined ? `${base}${namespace}/` : base
}

export function objectKey(rt: ResourceType, namespace: string | undefined, name: string): string {
  return `${collectionPrefix(rt, namespace)}${name}`
}

/** The apiVersion of a group and version: "v1" for the core group, else "group/version". */
export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`
}
