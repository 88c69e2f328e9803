/**
 * The registry of kinds the resource API serves: a few built-in kinds, plus one per
 * CustomResourceDefinition object stored in the log. The CRD part is derived from the stored CRD objects
 * only (crds.ts keeps it in step through a watch), so it survives a restart and follows writes made
 * through any front door.
 */
import type { JsonObject } from '../codec.js'

export interface PrinterColumn {
  name: string
  type: string
  jsonPath: string
  description?: string
  priority?: number
}

export interface ResourceType {
  /** '' for the core group (/api/v1). */
  group: string
  /** Served versions; the first is the preferred one. */
  versions: string[]
  /** The plural, lower case: the URL segment and the storage key segment. */
  resource: string
  singular: string
  kind: string
  listKind: string
  shortNames: string[]
  namespaced: boolean
  categories?: string[]
  /** Extra table columns (a CRD's additionalPrinterColumns). */
  printerColumns?: PrinterColumn[]
  /** The CRD this kind comes from (its metadata.name), absent for built-ins. */
  crd?: string
  /**
   * Served with a /status subresource: updates there change only .status, updates of the object itself
   * keep the stored .status, and generation counts changes outside metadata and status only.
   */
  statusSubresource?: boolean
  /**
   * Served with a /scale subresource (an autoscaling/v1 Scale over .spec.replicas, .status.replicas and
   * the label selector), as kube serves it for workloads; `kubectl scale` writes there.
   */
  scaleSubresource?: boolean
}

export const CRD_GROUP = 'apiextensions.k8s.io'

function builtin(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  shortNames: string[] = [],
  extra: Partial<ResourceType> = {},
): ResourceType {
  return {
    group,
    versions: [version],
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    shortNames,
    namespaced,
    ...extra,
  }
}

export const CRD_TYPE = builtin(CRD_GROUP, 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, ['crd', 'crds'], {
  categories: ['api-extensions'],
  statusSubresource: true,
})

const RBAC_GROUP = 'rbac.authorization.k8s.io'

/** An apps/v1 kind with replicas: status and scale subresources. */
function workload(resource: string, kind: string, shortNames: string[]): ResourceType {
  return builtin('apps', 'v1', resource, kind, true, shortNames, { categories: ['all'], statusSubresource: true, scaleSubresource: true })
}

export const NAMESPACE_TYPE = builtin('', 'v1', 'namespaces', 'Namespace', false, ['ns'], { statusSubresource: true })

const BUILTINS: readonly ResourceType[] = [
  NAMESPACE_TYPE,
  builtin('', 'v1', 'configmaps', 'ConfigMap', true, ['cm']),
  builtin('', 'v1', 'secrets', 'Secret', true),
  builtin('', 'v1', 'events', 'Event', true, ['ev']),
  builtin('', 'v1', 'pods', 'Pod', true, ['po'], { categories: ['all'], statusSubresource: true }),
  builtin('', 'v1', 'nodes', 'Node', false, ['no'], { statusSubresource: true }),
  builtin('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  // The kinds `kubectl create` makes, stored as objects: no controller acts on them.
  builtin('', 'v1', 'services', 'Service', true, ['svc'], { categories: ['all'], statusSubresource: true }),
  builtin('', 'v1', 'serviceaccounts', 'ServiceAccount', true, ['sa']),
  builtin('', 'v1', 'endpoints', 'Endpoints', true, ['ep'], { singular: 'endpoints' }),
  builtin('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, ['pvc'], { statusSubresource: true }),
  workload('deployments', 'Deployment', ['deploy']),
  workload('replicasets', 'ReplicaSet', ['rs']),
  workload('statefulsets', 'StatefulSet', ['sts']),
  builtin('apps', 'v1', 'daemonsets', 'DaemonSet', true, ['ds'], { categories: ['all'], statusSubresource: true }),
  builtin('batch', 'v1', 'jobs', 'Job', true, [], { categories: ['all'], statusSubresource: true }),
  builtin('batch', 'v1', 'cronjobs', 'CronJob', true, ['cj'], { categories: ['all'], statusSubresource: true }),
  builtin(RBAC_GROUP, 'v1', 'roles', 'Role', true),
  builtin(RBAC_GROUP, 'v1', 'rolebindings', 'RoleBinding', true),
  builtin(RBAC_GROUP, 'v1', 'clusterroles', 'ClusterRole', false),
  builtin(RBAC_GROUP, 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  CRD_TYPE,
]

/** Groups kvlog defines itself; a CRD may not claim them. */
export const RESERVED_GROUPS: ReadonlySet<string> = new Set(BUILTINS.map((t) => t.group))

export class Registry {
  /**
   * CRD name → its kind (undefined once deleted) and the revision of the CRD write it was derived from.
   * Deleted CRDs stay as tombstones so a late, older update cannot bring them back.
   */
  private readonly custom = new Map<string, { type?: ResourceType; revision: number }>()

  /** The kind served at group/version/resource, if any. */
  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.all().find((t) => t.group === group && t.resource === resource && t.versions.includes(version))
  }

  all(): ResourceType[] {
    const custom: ResourceType[] = []
    for (const c of this.custom.values()) if (c.type !== undefined) custom.push(c.type)
    return [...BUILTINS, ...custom]
  }

  /** Every group with its served versions (preferred first), core ('') first. */
  groups(): { group: string; versions: string[] }[] {
    const out = new Map<string, string[]>()
    for (const t of this.all()) {
      const versions = out.get(t.group) ?? []
      for (const v of t.versions) if (!versions.includes(v)) versions.push(v)
      out.set(t.group, versions)
    }
    return [...out].map(([group, versions]) => ({ group, versions }))
  }

  /**
   * Registers (or updates) the kind a stored CRD defines. `revision` is the CRD's mod revision: an
   * update older than what is registered is ignored, so the watch and the writer can both call this.
   * A CRD that defines no usable kind (or one with a deletionTimestamp) is removed instead.
   */
  applyCrd(crd: JsonObject, revision: number): void {
    const name = (crd.metadata as JsonObject | undefined)?.name
    if (typeof name !== 'string') return
    const known = this.custom.get(name)
    if (known !== undefined && known.revision > revision) return
    const type = crdToType(crd)
    this.custom.set(name, type === undefined ? { revision } : { type, revision })
  }

  /** The CRD was deleted at `revision`. */
  removeCrd(name: string, revision: number): void {
    const known = this.custom.get(name)
    if (known !== undefined && known.revision > revision) return
    this.custom.set(name, { revision })
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

/** The kind a CRD object defines (validated on write by crds.ts), or undefined if it defines none. */
function crdToType(crd: JsonObject): ResourceType | undefined {
  const spec = crd.spec as JsonObject | undefined
  const names = spec?.names as JsonObject | undefined
  const meta = crd.metadata as JsonObject | undefined
  if (spec === undefined || names === undefined || meta?.deletionTimestamp !== undefined) return undefined
  const versions = Array.isArray(spec.versions) ? (spec.versions as JsonObject[]) : []
  const served = versions.filter((v) => v.served !== false && typeof v.name === 'string')
  if (typeof spec.group !== 'string' || typeof names.plural !== 'string' || typeof names.kind !== 'string' || served.length === 0)
    return undefined
  // The storage version is preferred (kube sorts by version priority; this is close enough for discovery).
  served.sort((a, b) => Number(b.storage === true) - Number(a.storage === true))
  const columns = served[0].additionalPrinterColumns
  const subresources = served[0].subresources
  const status = typeof subresources === 'object' && subresources !== null && (subresources as JsonObject).status !== undefined
  return {
    group: spec.group,
    versions: served.map((v) => v.name as string),
    resource: names.plural,
    singular: typeof names.singular === 'string' ? names.singular : names.kind.toLowerCase(),
    kind: names.kind,
    listKind: typeof names.listKind === 'string' ? names.listKind : `${names.kind}List`,
    shortNames: strings(names.shortNames),
    namespaced: spec.scope !== 'Cluster',
    ...(Array.isArray(names.categories) ? { categories: strings(names.categories) } : {}),
    ...(Array.isArray(columns) ? { printerColumns: columns as PrinterColumn[] } : {}),
    crd: meta?.name as string,
    ...(status ? { statusSubresource: true } : {}),
  }
}
