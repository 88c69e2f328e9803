/**
 * Server-side printing (meta.k8s.io/v1 Table), what `kubectl get` asks for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Columns: kube-apiserver's for built-in kinds
 * (printers.ts); for custom resources Name, the CRD's additionalPrinterColumns (simple `.a.b.c` JSON
 * paths), Age. Each row carries the object's metadata (includeObject=Metadata, the
 * default), the whole object (Object) or nothing (None).
 */
import type { JsonObject } from '../codec.js'
import { queryString, type Query } from '../params.js'
import type { K8sObject } from './k8s-object.js'
import type { ResourceType } from './registry.js'
import { age, AGE_COLUMN, builtinColumns, NAME_COLUMN, type PrintColumn } from './printers.js'
import { badRequest } from './status.js'

export type IncludeObject = 'None' | 'Metadata' | 'Object'

/** Whether the Accept header asks for a Table (kubectl lists it first, with JSON as the fallback). */
export function wantsTable(accept: string | undefined): boolean {
  if (accept === undefined) return false
  return accept.split(',').some((part) => {
    const params = part.split(';').map((p) => p.trim())
    return params.includes('as=Table') && params.includes('g=meta.k8s.io') && (params.includes('v=v1') || params.includes('v=v1beta1'))
  })
}

export function includeObjectOf(q: Query): IncludeObject {
  const v = queryString(q, 'includeObject')
  if (v === undefined || v === '') return 'Metadata'
  if (v !== 'None' && v !== 'Metadata' && v !== 'Object') throw badRequest(`includeObject: must be None, Metadata or Object`)
  return v
}

/** A built-in kind's printer columns; for a custom resource Name, its additionalPrinterColumns, Age. */
function columnsOf(rt: ResourceType): PrintColumn[] {
  const builtin = builtinColumns(rt.group, rt.resource, rt.crd)
  if (builtin !== undefined) return builtin
  const extra = (rt.printerColumns ?? []).map((c): PrintColumn => ({
    name: c.name,
    type: c.type === 'date' ? 'string' : c.type,
    format: '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
    cell: (obj) => cell(obj, c.jsonPath, c.type),
  }))
  return [NAME_COLUMN, ...extra, AGE_COLUMN]
}

export function toTable(rt: ResourceType, items: K8sObject[], listMeta: JsonObject, include: IncludeObject): JsonObject {
  const { columnDefinitions, row } = tableOf(rt, include)
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: listMeta, columnDefinitions, rows: items.map(row) }
}

/** A Table's parts for a kind: its column definitions, and the row of an object. */
export function tableOf(
  rt: ResourceType,
  include: IncludeObject,
): { columnDefinitions: JsonObject[]; row: (obj: K8sObject) => JsonObject } {
  const columns = columnsOf(rt)
  return {
    columnDefinitions: columns.map(({ cell: _c, ...definition }) => definition),
    row: (obj) => ({
      cells: columns.map((c) => c.cell(obj)),
      ...(include === 'None'
        ? {}
        : { object: include === 'Object' ? obj : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata } }),
    }),
  }
}

function cell(obj: K8sObject, jsonPath: string, type: string): unknown {
  let node: unknown = obj
  for (const part of jsonPath
    .replace(/^\{?\.?/, '')
    .replace(/\}$/, '')
    .split('.')) {
    if (part === '') continue
    node = typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as JsonObject)[part] : undefined
  }
  if (node === undefined || node === null) return null
  if (type === 'date' && typeof node === 'string') return age(node)
  return typeof node === 'object' ? JSON.stringify(node) : node
}
