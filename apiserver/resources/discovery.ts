/**
 * Discovery documents, in the legacy (non-aggregated) forms generic clients fall back to:
 *
 *   /api               APIVersions        ["v1"]
 *   /apis              APIGroupList       every group with its versions (CRD groups included)
 *   /apis/{g}          APIGroup
 *   /api/v1, /apis/{g}/{v}  APIResourceList  the kinds served there, with verbs and short names
 *   /version           version.Info       kvlog reports itself as Kubernetes 1.32
 *
 * Aggregated discovery (apidiscovery.k8s.io/v2) is not served: a client asking for it gets the legacy
 * document with content type application/json, which client-go and kubectl take as "not supported".
 */
import type { JsonObject } from '../codec.js'
import { apiVersionOf } from './paths.js'
import type { Registry, ResourceType } from './registry.js'
import { noSuchPath } from './status.js'

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

export function apiVersions(serverAddress: string): JsonObject {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] }
}

function groupDoc(group: string, versions: string[]): JsonObject {
  const gv = (v: string) => ({ groupVersion: apiVersionOf(group, v), version: v })
  return { name: group, versions: versions.map(gv), preferredVersion: gv(versions[0]) }
}

export function apiGroupList(registry: Registry): JsonObject {
  const groups = registry
    .groups()
    .filter((g) => g.group !== '')
    .map((g) => groupDoc(g.group, g.versions))
  return { kind: 'APIGroupList', apiVersion: 'v1', groups }
}

export function apiGroup(registry: Registry, group: string): JsonObject {
  const found = registry.groups().find((g) => g.group === group && group !== '')
  if (found === undefined) throw noSuchPath()
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(found.group, found.versions) }
}

function resourceDoc(rt: ResourceType): JsonObject {
  return {
    name: rt.resource,
    singularName: rt.singular,
    namespaced: rt.namespaced,
    kind: rt.kind,
    verbs: VERBS,
    ...(rt.shortNames.length > 0 ? { shortNames: rt.shortNames } : {}),
    ...(rt.categories ? { categories: rt.categories } : {}),
  }
}

export function apiResourceList(registry: Registry, group: string, version: string): JsonObject {
  const kinds = registry.all().filter((t) => t.group === group && t.versions.includes(version))
  if (kinds.length === 0) throw noSuchPath()
  const resources = kinds.flatMap((rt) => [
    resourceDoc(rt),
    ...(rt.statusSubresource
      ? [{ name: `${rt.resource}/status`, singularName: '', namespaced: rt.namespaced, kind: rt.kind, verbs: ['get', 'patch', 'update'] }]
      : []),
    ...(rt.scaleSubresource
      ? [
          {
            name: `${rt.resource}/scale`,
            singularName: '',
            namespaced: rt.namespaced,
            group: 'autoscaling',
            version: 'v1',
            kind: 'Scale',
            verbs: ['get', 'patch', 'update'],
          },
        ]
      : []),
  ])
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(group, version), resources }
}

export function versionInfo(): JsonObject {
  return {
    major: '1',
    minor: '32',
    gitVersion: 'v1.32.0-kvlog',
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'kvlog',
    platform: `${process.platform}/${process.arch}`,
  }
}
