/**
 * A minimal OpenAPI v3 (`/openapi/v3`, `/openapi/v3/{api/v1 | apis/g/v}`): one PATCH operation per kind,
 * tagged with its group/version/kind and declaring the `fieldValidation` query parameter. That is what
 * kubectl (1.27+) looks for to hand validation to the server instead of downloading schemas for
 * client-side validation (which needs /openapi/v2 as protobuf, not served).
 *
 * There are no schemas: objects are schema-light, and `fieldValidation` is accepted and ignored
 * (unknown fields are kept). `kubectl explain` therefore has nothing to show.
 */
import type { JsonObject } from '../codec.js'
import { apiVersionOf } from './paths.js'
import type { Registry, ResourceType } from './registry.js'
import { noSuchPath } from './status.js'

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`
}

export function openApiRoot(registry: Registry): JsonObject {
  const paths: JsonObject = {}
  for (const { group, versions } of registry.groups()) {
    for (const v of versions) {
      // The hash only has to change when the document does; the list of kinds is the document.
      const kinds = registry
        .all()
        .filter((t) => t.group === group && t.versions.includes(v))
        .map((t) => t.resource)
        .join(',')
      paths[gvPath(group, v)] = {
        serverRelativeURL: `/openapi/v3/${gvPath(group, v)}?hash=${Buffer.from(kinds).toString('base64url').slice(0, 32)}`,
      }
    }
  }
  return { paths }
}

function objectPath(rt: ResourceType, version: string): string {
  const base = rt.group === '' ? `/api/${version}` : `/apis/${rt.group}/${version}`
  return `${base}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.resource}/{name}`
}

/** The document of one group/version (`rest` is the path after /openapi/v3/). */
export function openApiGroupVersion(registry: Registry, rest: string): JsonObject {
  const parts = rest.split('/')
  const [group, version] =
    parts[0] === 'api' && parts.length === 2
      ? ['', parts[1]]
      : parts[0] === 'apis' && parts.length === 3
        ? [parts[1], parts[2]]
        : [undefined, undefined]
  if (group === undefined || version === undefined) throw noSuchPath()
  const kinds = registry.all().filter((t) => t.group === group && t.versions.includes(version))
  if (kinds.length === 0) throw noSuchPath()
  const paths: JsonObject = {}
  for (const rt of kinds) {
    paths[objectPath(rt, version)] = {
      patch: {
        operationId: `patch${rt.kind}`,
        'x-kubernetes-group-version-kind': { group: rt.group, version, kind: rt.kind },
        parameters: [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }],
        requestBody: { content: { 'application/merge-patch+json': { schema: { type: 'object' } } } },
        responses: { '200': { description: 'OK' } },
      },
    }
  }
  return { openapi: '3.0.0', info: { title: 'kvlog', version: apiVersionOf(group, version) }, paths }
}
