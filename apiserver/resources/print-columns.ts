/**
 * The parts of kube-apiserver's table printers every kind's columns are made of (printers.ts,
 * workload-printers.ts): a column definition with the function computing its cell, and kubectl's ways of
 * showing values (durations, absent values as <none>).
 */
import type { JsonObject } from '../codec.js'
import type { K8sObject } from './k8s-object.js'

export interface PrintColumn {
  name: string
  type: string
  format: string
  description: string
  priority: number
  cell(obj: K8sObject): unknown
}

export const obj = (v: unknown): JsonObject => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {})
export const list = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.map(obj) : [])
export const str = (v: unknown, none = '<none>'): string => (typeof v === 'string' && v !== '' ? v : none)

export function column(
  name: string,
  cell: (o: K8sObject) => unknown,
  options: { type?: string; format?: string; priority?: number; description?: string } = {},
): PrintColumn {
  return {
    name,
    type: options.type ?? 'string',
    format: options.format ?? '',
    description: options.description ?? '',
    priority: options.priority ?? 0,
    cell,
  }
}

export const NAME_COLUMN = column('Name', (o) => o.metadata.name ?? '', {
  format: 'name',
  description: 'Name must be unique within a namespace.',
})
export const AGE_COLUMN = column('Age', (o) => age(o.metadata.creationTimestamp), { description: 'Time since the object was created.' })

/** How long ago `since` was, as kubectl shows an age. */
export function age(since: string | undefined, now = Date.now()): string {
  return since === undefined ? '<unknown>' : duration(Date.parse(since), now)
}

/** kubectl's short human durations from `from` to `to` (ms): 45s, 3m12s, 25m, 5h3m, 3d4h, 120d. */
export function duration(from: number, to: number): string {
  const s = Math.max(0, Math.floor((to - from) / 1000))
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

/** A map as kubectl shows labels and selectors: k=v pairs sorted by key, comma-separated; <none> if empty. */
export function formatLabels(map: unknown): string {
  const entries = Object.entries(obj(map)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${String(v)}`).join(',')
}

/** A LabelSelector as kubectl shows it (matchLabels as k=v, expressions as k in (a,b), k, !k); <none> if empty. */
export function formatSelector(selector: unknown): string {
  const s = obj(selector)
  const parts: Array<[string, string]> = Object.entries(obj(s.matchLabels)).map(([k, v]) => [k, `${k}=${String(v)}`])
  for (const e of list(s.matchExpressions)) {
    const key = String(e.key ?? '')
    const values = (Array.isArray(e.values) ? e.values.map(String) : []).sort().join(',')
    const op = String(e.operator ?? '')
    parts.push([
      key,
      op === 'In' ? `${key} in (${values})` : op === 'NotIn' ? `${key} notin (${values})` : op === 'DoesNotExist' ? `!${key}` : key,
    ])
  }
  parts.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return parts.length === 0 ? '<none>' : parts.map(([, p]) => p).join(',')
}

/** A number field, or `fallback` when absent (the value kube-apiserver's defaulting would have set). */
export const num = (v: unknown, fallback = 0): number => (typeof v === 'number' ? v : fallback)
