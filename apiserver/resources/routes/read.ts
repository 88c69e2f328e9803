/**
 * GET of one object and of a collection (list), as JSON or as a Table (kubectl's server-side printing).
 * A list is streamed, whole or a page (limit): the same List or Table object, written as its objects are
 * read, about listChunkBytes at a time (streamed-body.ts), so the server holds a chunk whatever the list
 * or page adds up to.
 */
import type { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import type { JsonObject } from '../../codec.js'
import { streamedBody } from '../../streamed-body.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import type { K8sObject } from '../k8s-object.js'
import { listSteps, parseListOptions, type ListMeta, type ListOptions } from '../list.js'
import { apiVersionOf } from '../paths.js'
import { includeObjectOf, tableOf, toTable, type IncludeObject } from '../table.js'

export async function getObject(ctx: ApiContext, req: ResourceRequest, table: boolean): Promise<JsonObject> {
  const obj = await ctx.store.get(req.target, req.name!)
  if (!table) return obj
  return toTable(req.target.rt, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObjectOf(req.query))
}

export async function listCollection(ctx: ApiContext, req: ResourceRequest, table: boolean, reply: FastifyReply): Promise<Readable> {
  const include = table ? includeObjectOf(req.query) : undefined
  const options = parseListOptions(req.query, req.target.rt)
  const body = await streamedBody(streamList(ctx, req, options, include))
  void reply.type('application/json; charset=utf-8')
  return body
}

/** The list's metadata as kube-apiserver writes it. */
function listMetadata(meta: ListMeta): JsonObject {
  const metadata: JsonObject = { resourceVersion: String(meta.revision) }
  if (meta.continue !== undefined) metadata.continue = meta.continue
  if (meta.remainingItemCount !== undefined) metadata.remainingItemCount = meta.remainingItemCount
  return metadata
}

/**
 * The List (or Table) object's JSON, a step of the list at a time. A whole list's metadata is its
 * revision, known at the first step, and goes first as kube-apiserver writes it. A page's continue token
 * and remainingItemCount are known only once the page is read: its metadata goes after the items (a JSON
 * object's members have no order for its readers).
 */
async function* streamList(
  ctx: ApiContext,
  req: ResourceRequest,
  options: ListOptions,
  include: IncludeObject | undefined,
): AsyncGenerator<string, void, undefined> {
  const { rt, version } = req.target
  const table = include === undefined ? undefined : tableOf(rt, include)
  const encode: (obj: K8sObject) => string = table === undefined ? (obj) => JSON.stringify(obj) : (obj) => JSON.stringify(table.row(obj))
  const head =
    table === undefined
      ? { kind: rt.listKind, apiVersion: apiVersionOf(rt.group, version) }
      : { kind: 'Table', apiVersion: 'meta.k8s.io/v1' }
  const metadataFirst = options.limit === undefined
  let text = ''
  let comma = ''
  const steps = listSteps(ctx.log, req.target, options, ctx.listChunkBytes, (obj) => {
    text += comma + encode(obj)
    comma = ','
  })
  let first = true
  for (;;) {
    const step = await steps.next()
    if (step.done === true) {
      yield metadataFirst ? ']}' : `],"metadata":${JSON.stringify(listMetadata(step.value))}}`
      return
    }
    if (first) {
      const start: JsonObject = { ...head }
      if (metadataFirst) start.metadata = { resourceVersion: String(step.value) }
      if (table !== undefined) start.columnDefinitions = table.columnDefinitions
      text = `${JSON.stringify(start).slice(0, -1)},"${table === undefined ? 'items' : 'rows'}":[${text}`
      first = false
    }
    yield text
    text = ''
  }
}
