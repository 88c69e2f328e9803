/**
 * The scale subresource of workloads (`.../deployments/{name}/scale`), as kube serves it: an
 * autoscaling/v1 Scale whose spec.replicas is the object's .spec.replicas and whose status carries
 * .status.replicas and the label selector (as a string). GET reads it; PUT and PATCH (of the Scale)
 * change .spec.replicas and nothing else. A resourceVersion in the Scale is a precondition.
 */
import type { JsonObject } from '../../codec.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import { dryRunOf } from '../context.js'
import type { K8sObject } from '../k8s-object.js'
import { applyPatch, patchType } from '../patch.js'
import { invalidObject, methodNotAllowed } from '../status.js'

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** matchLabels and matchExpressions (In / NotIn / Exists / DoesNotExist) as a label selector string. */
function selectorString(selector: unknown): string {
  if (!isObject(selector)) return ''
  const parts: string[] = []
  if (isObject(selector.matchLabels)) for (const [k, v] of Object.entries(selector.matchLabels)) parts.push(`${k}=${String(v)}`)
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isObject(e) || typeof e.key !== 'string') continue
    const values = Array.isArray(e.values) ? e.values.join(',') : ''
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`)
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`)
    else if (e.operator === 'Exists') parts.push(e.key)
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`)
  }
  return parts.join(',')
}

function replicasOf(v: unknown): number {
  return typeof v === 'number' ? v : 0
}

export function scaleOf(obj: K8sObject): K8sObject {
  const spec = isObject(obj.spec) ? obj.spec : {}
  const status = isObject(obj.status) ? obj.status : {}
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata
  // kube reports 1 for a workload whose spec leaves replicas out (its default).
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas },
    status: { replicas: replicasOf(status.replicas), selector: selectorString(spec.selector) },
  }
}

/** The replicas a written Scale asks for: a non-negative integer, else 422. */
function wantedReplicas(req: ResourceRequest, scale: unknown): number {
  const replicas = isObject(scale) && isObject(scale.spec) ? scale.spec.replicas : undefined
  if (typeof replicas === 'number' && Number.isSafeInteger(replicas) && replicas >= 0) return replicas
  throw invalidObject(req.target.rt, req.name!, [
    { reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'must be greater than or equal to 0' },
  ])
}

/** GET, PUT or PATCH of `.../{name}/scale`; answers the Scale. */
export async function serveScale(
  ctx: ApiContext,
  req: ResourceRequest,
  method: string,
  body: unknown,
  contentType?: string,
): Promise<K8sObject> {
  const name = req.name!
  if (method === 'GET') return scaleOf(await ctx.store.get(req.target, name))
  if (method !== 'PUT' && method !== 'PATCH') throw methodNotAllowed()
  const updated = await ctx.store.update(
    req.target,
    name,
    (current) => {
      const scale = method === 'PUT' ? body : applyPatch(patchType(contentType), scaleOf(current), body)
      const replicas = wantedReplicas(req, scale)
      const wanted = isObject(scale) && isObject(scale.metadata) ? scale.metadata.resourceVersion : undefined
      const spec = isObject(current.spec) ? current.spec : {}
      const { resourceVersion: _rv, ...metadata } = current.metadata
      if (typeof wanted === 'string') metadata.resourceVersion = wanted
      return { ...current, metadata, spec: { ...spec, replicas } }
    },
    { dryRun: dryRunOf(req.query) },
  )
  return scaleOf(updated)
}
