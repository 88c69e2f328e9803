/**
 * What differs between kinds (kube's per-resource "strategies"), kept to the few rules a schema-light
 * store needs: namespace names are DNS labels; a namespace is Active, then Terminating; a pod starts
 * Pending; a Secret's type defaults to Opaque and its stringData is folded into data; a
 * CustomResourceDefinition is checked (it defines a kind) and gets the status kube gives it.
 * Every other kind is free-form JSON with validated metadata.
 */
import type { JsonObject } from '../codec.js'
import { timestamp, type K8sObject } from './k8s-object.js'
import { CRD_GROUP, RESERVED_GROUPS, type ResourceType } from './registry.js'
import type { StatusCause } from './status.js'
import { dns1123Label, dns1123Subdomain } from './validation.js'

export interface KindRules {
  /** metadata.name must be a DNS-1123 label (instead of a subdomain). */
  labelName?: boolean
  /** Adjusts a new or updated object before validation (`current` is undefined on create). */
  prepare?(obj: K8sObject, current: K8sObject | undefined): void
  /** Kind-specific problems, as 422 causes. */
  validate?(obj: K8sObject): StatusCause[]
  /** Fields besides metadata.name/namespace that field selectors may use (kube's per-kind field labels). */
  fieldSelectors?: readonly string[]
}

const RULES: Record<string, KindRules> = {
  '/namespaces': {
    labelName: true,
    fieldSelectors: ['status.phase'],
    prepare(obj, current) {
      // Active from the start; Terminating once deleted (namespaces.ts), never set by a client.
      const status = isObject(obj.status) ? obj.status : {}
      const phase =
        current === undefined ? 'Active' : current.metadata.deletionTimestamp !== undefined ? 'Terminating' : (status.phase ?? 'Active')
      obj.status = { ...status, phase }
    },
  },
  // kubectl describe lists an object's events by these.
  '/events': {
    fieldSelectors: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'type',
    ],
  },
  '/pods': {
    fieldSelectors: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    prepare(obj, current) {
      // kube-apiserver starts every pod Pending; later phases come through /status.
      if (current !== undefined) return
      const status = isObject(obj.status) ? obj.status : {}
      obj.status = { ...status, phase: typeof status.phase === 'string' && status.phase !== '' ? status.phase : 'Pending' }
    },
  },
  '/nodes': { fieldSelectors: ['spec.unschedulable'] },
  '/secrets': {
    fieldSelectors: ['type'],
    prepare(obj) {
      if (obj.type === undefined || obj.type === '') obj.type = 'Opaque'
      // Like kube: stringData is write-only convenience, merged into data (base64) on write.
      if (!isObject(obj.stringData)) return
      const data: JsonObject = isObject(obj.data) ? { ...obj.data } : {}
      for (const [k, v] of Object.entries(obj.stringData)) if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64')
      obj.data = data
      delete obj.stringData
    },
  },
  [`${CRD_GROUP}/customresourcedefinitions`]: { prepare: prepareCrd, validate: validateCrd },
}

export function kindRules(rt: ResourceType): KindRules {
  return RULES[`${rt.group}/${rt.resource}`] ?? {}
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function prepareCrd(obj: K8sObject): void {
  const spec = isObject(obj.spec) ? obj.spec : {}
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObject) : []
  const now = timestamp()
  const condition = (type: string, reason: string) => ({ type, status: 'True', lastTransitionTime: now, reason, message: '' })
  obj.status = {
    conditions: [condition('NamesAccepted', 'NoConflicts'), condition('Established', 'InitialNamesAccepted')],
    acceptedNames: spec.names,
    storedVersions: versions.filter((v) => v.storage === true).map((v) => v.name),
  }
}

function validateCrd(obj: K8sObject): StatusCause[] {
  const causes: StatusCause[] = []
  const bad = (field: string, message: string, reason = 'FieldValueInvalid') => causes.push({ reason, field, message })
  const spec = obj.spec
  if (!isObject(spec)) {
    bad('spec', 'Required value', 'FieldValueRequired')
    return causes
  }
  const { group, names, scope, versions } = spec
  if (typeof group !== 'string' || group === '') bad('spec.group', 'Required value', 'FieldValueRequired')
  else if (!group.includes('.')) bad('spec.group', `Invalid value: ${JSON.stringify(group)}: should be a domain with at least one dot`)
  else if (RESERVED_GROUPS.has(group)) bad('spec.group', `Invalid value: ${JSON.stringify(group)}: is served by kvlog itself`)
  else for (const m of dns1123Subdomain(group)) bad('spec.group', `Invalid value: ${JSON.stringify(group)}: ${m}`)
  if (!isObject(names)) bad('spec.names', 'Required value', 'FieldValueRequired')
  else {
    if (typeof names.plural !== 'string' || names.plural === '') bad('spec.names.plural', 'Required value', 'FieldValueRequired')
    else for (const m of dns1123Label(names.plural)) bad('spec.names.plural', `Invalid value: ${JSON.stringify(names.plural)}: ${m}`)
    if (typeof names.kind !== 'string' || names.kind === '') bad('spec.names.kind', 'Required value', 'FieldValueRequired')
    for (const field of ['singular', 'listKind'] as const) {
      if (names[field] !== undefined && typeof names[field] !== 'string') bad(`spec.names.${field}`, 'Invalid value: must be a string')
    }
    if (names.shortNames !== undefined && (!Array.isArray(names.shortNames) || names.shortNames.some((n) => typeof n !== 'string'))) {
      bad('spec.names.shortNames', 'Invalid value: must be a list of strings')
    }
    if (typeof names.plural === 'string' && typeof group === 'string' && obj.metadata.name !== `${names.plural}.${group}`) {
      bad('metadata.name', `Invalid value: ${JSON.stringify(obj.metadata.name)}: must be spec.names.plural+"."+spec.group`)
    }
  }
  if (scope !== 'Namespaced' && scope !== 'Cluster')
    bad('spec.scope', `Unsupported value: ${JSON.stringify(scope)}: supported values: "Cluster", "Namespaced"`, 'FieldValueNotSupported')
  if (!Array.isArray(versions) || versions.length === 0)
    bad('spec.versions', 'Required value: must have exactly one version marked as storage version', 'FieldValueRequired')
  else {
    versions.forEach((v, i) => {
      if (!isObject(v) || typeof v.name !== 'string' || dns1123Label(v.name).length > 0)
        bad(`spec.versions[${i}].name`, 'Invalid value: must be a DNS-1123 label')
    })
    if (versions.filter((v) => isObject(v) && v.storage === true).length !== 1) {
      bad('spec.versions', 'Invalid value: must have exactly one version marked as storage version')
    }
  }
  return causes
}
