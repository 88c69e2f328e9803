/**
 * Server-side printing (meta.k8s.io/v1 Table), what `kubectl get` asks for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Columns: Name, a CRD's additionalPrinterColumns
 * (simple `.a.b.c` JSON paths), Age. Each row carries the object's metadata (includeObject=Metadata, the
 * default), the whole object (Object) or nothing (None).
 */
import type { JsonObject } from '../codec.js'
import { queryString, type Query } from '../params.js'
import type { K8sObject } from './k8s-object.js'
import type { ResourceType } from './registry.js'
import { badRequest } from './status.js'

export type IncludeObject = 'None' | 'Metadata' | 'Object'

interface Column {
  name: string
  type: string
  format: string
  description: string
  priority: number
}

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

function columnsOf(rt: ResourceType): Column[] {
  const extra = (rt.printerColumns ?? []).map((c) => ({
    name: c.name, type: c.type === 'date' ? 'string' : c.type, format: '', description: c.description ?? '', priority: c.priority ?? 0,
  }))
  return [
    { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
    ...extra,
    { name: 'Age', type: 'string', format: '', description: 'Time since the object was created.', priority: 0 },
  ]
}

export function toTable(rt: ResourceType, items: K8sObject[], listMeta: JsonObject, include: IncludeObject): JsonObject {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columnsOf(rt),
    rows: items.map((obj) => ({
      cells: [
        obj.metadata.name ?? '',
        ...(rt.printerColumns ?? []).map((c) => cell(obj, c.jsonPath, c.type)),
        age(obj.metadata.creationTimestamp),
      ],
      ...(include === 'None' ? {} : { object: include === 'Object' ? obj : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata } }),
    })),
  }
}

function cell(obj: K8sObject, jsonPath: string, type: string): unknown {
  let node: unknown = obj
  for (const part of jsonPath.replace(/^\{?\.?/, '').replace(/\}$/, '').split('.')) {
    if (part === '') continue
    node = typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as JsonObject)[part] : undefined
  }
  if (node === undefined || node === null) return null
  if (type === 'date' && typeof node === 'string') return age(node)
  return typeof node === 'object' ? JSON.stringify(node) : node
}

/** kubectl's short human durations: 45s, 3m12s, 25m, 5h3m, 3d4h, 120d. */
function age(since: string | undefined, now = Date.now()): string {
  if (since === undefined) return '<unknown>'
  const s = Math.max(0, Math.floor((now - Date.parse(since)) / 1000))
  if (Number.isNaN(s)) return '<unknown>'
  const m = Math.floor(s / 60)
  const h = Math.floor(m / 60)
  const d = Math.floor(h / 24)
  if (s < 120) return `${s}s`
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`
  if (h < 3) return `${m}m`
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`
  if (h < 48) return `${h}h`
  if (d < 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`
  return `${d}d`
}
