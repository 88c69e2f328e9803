/**
 * DELETE of one object (with DeleteOptions preconditions on uid and resourceVersion) and of a
 * collection (deletecollection: every object the selectors match, each deleted on its own with a
 * mod-revision compare, as kube-apiserver does).
 */
import { isKvlogError } from '../../../log/errors.js'
import type { JsonObject } from '../../codec.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import { dryRunOf } from '../context.js'
import { listObjects, parseListOptions } from '../list.js'
import type { K8sObject } from '../k8s-object.js'
import { apiVersionOf } from '../paths.js'
import { NAMESPACE_TYPE } from '../registry.js'
import { badRequest } from '../status.js'
import type { DeletePreconditions } from '../store.js'

interface DeleteOptions {
  preconditions: DeletePreconditions
  dryRun: boolean
}

/** DeleteOptions from the body (kubectl sends one) and the query. */
function deleteOptions(req: ResourceRequest, body: unknown): DeleteOptions {
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
  if (req.target.rt === NAMESPACE_TYPE) return ctx.namespaces.delete(req.name!, preconditions, dryRun)
  return ctx.store.delete(req.target, req.name!, preconditions, { dryRun })
}

export async function deleteCollection(ctx: ApiContext, req: ResourceRequest, body: unknown): Promise<JsonObject> {
  const { dryRun } = deleteOptions(req, body)
  const listed = await listObjects(
    ctx.log,
    req.target,
    {
      ...parseListOptions(req.query, req.target.rt),
      limit: undefined,
      continue: undefined,
    },
    ctx.listChunkBytes,
  )
  const deleted: K8sObject[] = []
  for (const obj of listed.items) {
    const target = { ...req.target, namespace: obj.metadata.namespace }
    try {
      const name = obj.metadata.name!
      deleted.push(
        await (target.rt === NAMESPACE_TYPE ? ctx.namespaces.delete(name, {}, dryRun) : ctx.store.delete(target, name, {}, { dryRun })),
      )
    } catch (err) {
      // Deleted meanwhile by someone else: that is what was asked for.
      if (!isKvlogError(err, 'NOT_FOUND')) throw err
    }
  }
  const { rt, version } = req.target
  return {
    kind: rt.listKind,
    apiVersion: apiVersionOf(rt.group, version),
    metadata: { resourceVersion: String(ctx.log.revision) },
    items: deleted,
  }
}
