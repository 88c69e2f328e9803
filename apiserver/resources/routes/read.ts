/**
 * GET of one object and of a collection (list), as JSON or as a Table (kubectl's server-side printing).
 * A whole list as JSON (no limit) is streamed: the same List object, written as its objects are read,
 * about listChunkBytes at a time (streamed-body.ts).
 */
import type { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import type { JsonObject } from '../../codec.js'
import { streamedBody } from '../../streamed-body.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import { listObjects, listSteps, parseListOptions, type ListOptions } from '../list.js'
import { apiVersionOf } from '../paths.js'
import { includeObjectOf, toTable } from '../table.js'

export async function getObject(ctx: ApiContext, req: ResourceRequest, table: boolean): Promise<JsonObject> {
  const obj = await ctx.store.get(req.target, req.name!)
  if (!table) return obj
  return toTable(req.target.rt, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObjectOf(req.query))
}

export async function listCollection(
  ctx: ApiContext,
  req: ResourceRequest,
  table: boolean,
  reply: FastifyReply,
): Promise<JsonObject | Readable> {
  const include = table ? includeObjectOf(req.query) : undefined
  const options = parseListOptions(req.query, req.target.rt)
  // A page (limit) puts its continue token before its items: known only once the page is read.
  if (include === undefined && options.limit === undefined) {
    const body = await streamedBody(streamList(ctx, req, options))
    void reply.type('application/json; charset=utf-8')
    return body
  }
  const result = await listObjects(ctx.log, req.target, options, ctx.listChunkBytes)
  const metadata: JsonObject = { resourceVersion: String(result.revision) }
  if (result.continue !== undefined) metadata.continue = result.continue
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount
  const { rt, version } = req.target
  if (include !== undefined) return toTable(rt, result.items, metadata, include)
  return { kind: rt.listKind, apiVersion: apiVersionOf(rt.group, version), metadata, items: result.items }
}

/** The List object's JSON (JSON.stringify's bytes), a step of the list at a time. */
async function* streamList(ctx: ApiContext, req: ResourceRequest, options: ListOptions): AsyncGenerator<string, void, undefined> {
  const { rt, version } = req.target
  let text = ''
  let comma = ''
  const steps = listSteps(ctx.log, req.target, options, ctx.listChunkBytes, (obj) => {
    text += comma + JSON.stringify(obj)
    comma = ','
  })
  let first = true
  for (;;) {
    const step = await steps.next()
    if (step.done === true) break
    if (first) {
      const head = { kind: rt.listKind, apiVersion: apiVersionOf(rt.group, version), metadata: { resourceVersion: String(step.value) } }
      text = `${JSON.stringify(head).slice(0, -1)},"items":[${text}`
      first = false
    }
    yield text
    text = ''
  }
  yield ']}'
}
