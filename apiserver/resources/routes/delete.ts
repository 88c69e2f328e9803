/**
 * DELETE of one object, with DeleteOptions preconditions on uid and resourceVersion (a collection's is
 * delete-collection.ts).
 */
import type { JsonObject } from '../../codec.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import { dryRunOf } from '../context.js'
import type { K8sObject } from '../k8s-object.js'
import type { Target } from '../objects.js'
import { NAMESPACE_TYPE } from '../registry.js'
import { badRequest } from '../status.js'
import type { DeletePreconditions } from '../store.js'

interface DeleteOptions {
  preconditions: DeletePreconditions
  dryRun: boolean
}

/** DeleteOptions from the body (kubectl sends one) and the query. */
export function deleteOptions(req: ResourceRequest, body: unknown): DeleteOptions {
  let dryRun = dryRunOf(req.query)
  if (body === undefined || body === null || body === '') return { preconditions: {}, dryRun }
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be DeleteOptions (a JSON object)')
  const b = body as JsonObject
  if (b.kind !== undefined && b.kind !== 'DeleteOptions')
    throw badRequest(`the body must be DeleteOptions, got kind ${JSON.stringify(b.kind)}`)
  if (Array.isArray(b.dryRun)) {
    if (b.dryRun.some((v) => v !== 'All')) throw badRequest('dryRun: supported values: "All"')
    dryRun ||= b.dryRun.length > 0
  }
  const pre = (b.preconditions ?? {}) as JsonObject
  if (typeof pre !== 'object' || Array.isArray(pre)) throw badRequest('preconditions must be an object')
  const preconditions: DeletePreconditions = {}
  if (typeof pre.uid === 'string') preconditions.uid = pre.uid
  if (typeof pre.resourceVersion === 'string') preconditions.resourceVersion = pre.resourceVersion
  return { preconditions, dryRun }
}

export async function deleteObject(ctx: ApiContext, req: ResourceRequest, body: unknown): Promise<K8sObject> {
  const { preconditions, dryRun } = deleteOptions(req, body)
  return deleteNamed(ctx, req.target, req.name!, preconditions, dryRun)
}

/** Deletes one object (a namespace with its content); answers it as deleted, or marked for deletion. */
export async function deleteNamed(
  ctx: ApiContext,
  target: Target,
  name: string,
  preconditions: DeletePreconditions,
  dryRun: boolean,
): Promise<K8sObject> {
  if (target.rt === NAMESPACE_TYPE) return ctx.namespaces.delete(name, preconditions, dryRun)
  return ctx.store.delete(target, name, preconditions, { dryRun })
}
