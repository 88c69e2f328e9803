/**
 * DELETE of a collection (deletecollection): every object the label and field selectors match, each
 * deleted on its own with a mod-revision compare, answered as kube-apiserver answers: a List of the
 * objects deleted (or marked for deletion, with finalizers).
 *
 * The collection is walked, never held: a page of at most deleteCollectionPage matching objects is read at
 * one revision, about listChunkBytes at a time (list.ts), each step's objects deleted before the next step
 * is read; the next page reads at the latest revision from the key after the last object handled. The
 * answer is streamed as the objects are deleted (streamed-body.ts), so the server holds about one step
 * whatever the collection holds. Under concurrent writes: an object created meanwhile is deleted only if
 * its key comes after where the walk is (kube-apiserver does not promise to delete it either); one already
 * deleted by someone else is skipped. With resourceVersion and resourceVersionMatch=Exact every page reads
 * that revision (410 Expired once it is compacted); else a page whose revision is compacted while it is
 * read is read again at the latest revision from where it was.
 *
 * The first step is done before the answer starts: a bad option, a refused first object (403) or a missing
 * namespace are answered as error statuses. A later error (a refused object further on) ends the body
 * broken, as a streamed list's does; what was deleted before it stays deleted, as with kube-apiserver.
 */
import type { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { isKvlogError } from '../../../log/errors.js'
import { streamedBody } from '../../streamed-body.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import type { K8sObject } from '../k8s-object.js'
import { listSteps, parseListOptions, type ListMeta, type ListOptions } from '../list.js'
import type { Target } from '../objects.js'
import { apiVersionOf, objectKey } from '../paths.js'
import { deleteNamed, deleteOptions } from './delete.js'

export async function deleteCollection(ctx: ApiContext, req: ResourceRequest, body: unknown, reply: FastifyReply): Promise<Readable> {
  const { dryRun } = deleteOptions(req, body)
  // limit and continue do not apply: the whole collection is deleted.
  const options: ListOptions = { ...parseListOptions(req.query, req.target.rt), limit: undefined, continue: undefined }
  const answer = await streamedBody(deletedList(ctx, req.target, options, dryRun))
  void reply.type('application/json; charset=utf-8')
  return answer
}

/** The List of the deleted objects' JSON, a step of the walk at a time. */
async function* deletedList(
  ctx: ApiContext,
  target: Target,
  options: ListOptions,
  dryRun: boolean,
): AsyncGenerator<string, void, undefined> {
  const { rt, version } = target
  let text = `${JSON.stringify({ kind: rt.listKind, apiVersion: apiVersionOf(rt.group, version) }).slice(0, -1)},"items":[`
  let comma = ''
  for await (const obj of deletedObjects(ctx, target, options, dryRun)) {
    if (obj === undefined) {
      yield text
      text = ''
      continue
    }
    text += comma + JSON.stringify(obj)
    comma = ','
  }
  // The store's revision once every delete is done, as kube-apiserver answers.
  yield `${text}],"metadata":${JSON.stringify({ resourceVersion: String(ctx.log.revision) })}}`
}

/**
 * The walk: yields each object as deleted (or marked for deletion), and undefined after each step's
 * deletes (where the answer may be written out).
 */
async function* deletedObjects(
  ctx: ApiContext,
  target: Target,
  options: ListOptions,
  dryRun: boolean,
): AsyncGenerator<K8sObject | undefined, void, undefined> {
  const read: K8sObject[] = []
  // Where the next read starts: the key after the last object handled (undefined: the collection's start).
  let from: Buffer | undefined
  // The first page checks resourceVersion (NotOlderThan); later pages read the latest or the Exact revision.
  let page: ListOptions = { ...options, limit: ctx.deleteCollectionPage }
  for (;;) {
    const steps = listSteps(ctx.log, target, page, ctx.listChunkBytes, (obj) => void read.push(obj))
    let meta: ListMeta | undefined
    try {
      for (;;) {
        const step = await steps.next()
        for (const obj of read.splice(0)) {
          const { name, namespace } = obj.metadata
          const deleted = await deleteListed(ctx, { ...target, namespace }, name!, dryRun)
          from = Buffer.from(`${objectKey(target.rt, namespace, name!)}\0`)
          if (deleted !== undefined) yield deleted
        }
        if (step.done === true) {
          meta = step.value
          break
        }
        yield undefined
      }
    } catch (err) {
      // The page's revision was compacted while it was read: read on at the latest, unless a revision was asked for.
      if (!isKvlogError(err, 'COMPACTED') || options.revision !== undefined) throw err
      read.length = 0
    }
    if (meta !== undefined && meta.continue === undefined) return
    page = { selector: options.selector, limit: ctx.deleteCollectionPage, revision: options.revision, from }
  }
}

/** One listed object deleted; undefined when it was deleted meanwhile by someone else (what was asked for). */
async function deleteListed(ctx: ApiContext, target: Target, name: string, dryRun: boolean): Promise<K8sObject | undefined> {
  try {
    return await deleteNamed(ctx, target, name, {}, dryRun)
  } catch (err) {
    if (isKvlogError(err, 'NOT_FOUND')) return undefined
    throw err
  }
}
