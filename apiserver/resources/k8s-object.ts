/**
 * A Kubernetes object as the resource API stores and serves it: apiVersion, kind, metadata, and any other
 * JSON fields (schema-light), and the timestamps kube writes into metadata.
 */
import type { JsonObject } from '../codec.js'

export interface ObjectMeta extends JsonObject {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  finalizers?: string[]
}

export interface K8sObject extends JsonObject {
  apiVersion: string
  kind: string
  metadata: ObjectMeta
}

/** RFC 3339 with second precision, as Kubernetes writes timestamps. */
export function timestamp(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}
