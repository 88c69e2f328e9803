/**
 * POST (create), PUT (replace) and PATCH of one object. A resourceVersion in a PUT body, or one a patch
 * sets, is a precondition (409 Conflict when stale); without one, a lost race is retried (store.ts).
 */
import type { K8sObject } from '../k8s-object.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import { dryRunOf } from '../context.js'
import { applyPatch, patchType } from '../patch.js'
import { methodNotAllowed } from '../status.js'
import type { WriteOptions } from '../store.js'

export async function createObject(ctx: ApiContext, req: ResourceRequest, body: unknown): Promise<K8sObject> {
  const { rt, namespace } = req.target
  if (req.name !== undefined || (rt.namespaced && namespace === undefined)) throw methodNotAllowed()
  const guard = rt.namespaced && namespace !== undefined ? () => ctx.namespaces.createGuard(namespace) : undefined
  return ctx.store.create(req.target, body, { dryRun: dryRunOf(req.query), ...(guard ? { guard } : {}) })
}

/** PUT of an object or of its status. */
export async function replaceObject(ctx: ApiContext, req: ResourceRequest, body: unknown): Promise<K8sObject> {
  if (req.name === undefined) throw methodNotAllowed()
  return ctx.store.update(req.target, req.name, () => body, updateOptions(req))
}

/** PATCH of an object or of its status (the patch applies to the whole object; only .status is kept). */
export async function patchObject(
  ctx: ApiContext,
  req: ResourceRequest,
  body: unknown,
  contentType: string | undefined,
): Promise<K8sObject> {
  if (req.name === undefined) throw methodNotAllowed()
  const type = patchType(contentType)
  return ctx.store.update(req.target, req.name, (current) => applyPatch(type, current, body), updateOptions(req))
}

function updateOptions(req: ResourceRequest): WriteOptions {
  return { dryRun: dryRunOf(req.query), ...(req.subresource === 'status' ? { subresource: req.subresource } : {}) }
}
