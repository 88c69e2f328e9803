/**
 * GET of one object and of a collection (list), as JSON or as a Table (kubectl's server-side printing).
 */
import type { JsonObject } from '../../codec.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import { listObjects, parseListOptions } from '../list.js'
import { apiVersionOf } from '../paths.js'
import { includeObjectOf, toTable } from '../table.js'

export async function getObject(ctx: ApiContext, req: ResourceRequest, table: boolean): Promise<JsonObject> {
  const obj = await ctx.store.get(req.target, req.name!)
  if (!table) return obj
  return toTable(req.target.rt, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObjectOf(req.query))
}

export async function listCollection(ctx: ApiContext, req: ResourceRequest, table: boolean): Promise<JsonObject> {
  const include = table ? includeObjectOf(req.query) : undefined
  const result = await listObjects(ctx.log, req.target, parseListOptions(req.query))
  const metadata: JsonObject = { resourceVersion: String(result.revision) }
  if (result.continue !== undefined) metadata.continue = result.continue
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount
  const { rt, version } = req.target
  if (include !== undefined) return toTable(rt, result.items, metadata, include)
  return { kind: rt.listKind, apiVersion: apiVersionOf(rt.group, version), metadata, items: result.items }
}
