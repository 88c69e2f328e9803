/**
 * Create, read, update and delete of one object, over the log with exactly the transactions
 * kube-apiserver uses on etcd (k8s.io/apiserver/pkg/storage/etcd3/store.go):
 *
 *   create  Txn(If(mod_revision(key) == 0)).Then(Put(key, obj))                    else 409 AlreadyExists
 *   update  Txn(If(mod_revision(key) == rv)).Then(Put(key, obj))                   else reread and retry,
 *   delete  Txn(If(mod_revision(key) == rv)).Then(DeleteRange(key))                 or 409 Conflict when
 *                                                                                   the client gave a rv
 *
 * Updates are read-modify-write loops (kube's GuaranteedUpdate): without a resourceVersion precondition
 * a lost race is retried on the fresh object; with one it is a Conflict. An update that changes nothing
 * writes nothing. Deleting an object that still has finalizers only sets its deletionTimestamp; the
 * update that removes the last finalizer then deletes it.
 */
import type { Log } from '../../log/backend.js'
import { prefixEnd } from '../../log/keys.js'
import type { KeyValue, Op } from '../../log/types.js'
import { decodeStored, encodeForStorage, notAnObject, prepareCreate, prepareUpdate, type Target } from './objects.js'
import { timestamp, type K8sObject } from './k8s-object.js'
import { objectKey } from './paths.js'
import { CRD_TYPE, type ResourceType } from './registry.js'
import { alreadyExists, conflict, notFound } from './status.js'

/** How often an update without a precondition is retried after losing a race. */
const MAX_RETRIES = 16

export interface WriteOptions {
  /** dryRun=All: everything but the write. */
  dryRun?: boolean
  /** Updates: the subresource written (only .status changes). */
  subresource?: 'status'
  /**
   * Creates: a key whose mod revision must not change between this read and the write (the object's
   * namespace), read again on each attempt. It throws when the create must not happen at all.
   */
  guard?: () => Promise<{ key: string; modRevision: number } | undefined>
}

export interface DeletePreconditions {
  uid?: string
  resourceVersion?: string
}

/** Called after every committed write of an object (undefined = deleted), e.g. to update the CRD registry. */
export type WriteHook = (rt: ResourceType, name: string, obj: K8sObject | undefined, revision: number) => void

export class ObjectStore {
  constructor(
    private readonly log: Log,
    private readonly onWrite: WriteHook,
  ) {}

  async get(target: Target, name: string): Promise<K8sObject> {
    return (await this.read(target, name)).current
  }

  /** The stored kv and the object it holds; 404 if there is none. */
  private async read(target: Target, name: string): Promise<{ key: string; kv: KeyValue; current: K8sObject }> {
    const key = objectKey(target.rt, target.namespace, name)
    const kv = await this.log.get(key)
    if (kv === undefined) throw notFound(target.rt, name)
    const current = decodeStored(kv, target)
    if (current === undefined) throw notAnObject(key)
    return { key, kv, current }
  }

  async create(target: Target, body: unknown, options: WriteOptions = {}): Promise<K8sObject> {
    const obj = prepareCreate(body, target)
    const name = obj.metadata.name!
    const key = objectKey(target.rt, target.namespace, name)
    for (let attempt = 0; ; attempt++) {
      const guard = await options.guard?.()
      if (options.dryRun) {
        if ((await this.log.get(key)) !== undefined) throw alreadyExists(target.rt, name)
        return obj
      }
      const result = await this.log.txn({
        compare: [
          { key, target: 'MOD', result: 'EQUAL', value: 0 },
          ...(guard === undefined ? [] : [{ key: guard.key, target: 'MOD' as const, result: 'EQUAL' as const, value: guard.modRevision }]),
        ],
        success: [{ type: 'put', key, value: encodeForStorage(obj) }],
      })
      if (result.succeeded) {
        this.onWrite(target.rt, name, obj, result.revision)
        return withVersion(obj, result.revision)
      }
      // The guard's key changed (e.g. the namespace began terminating): decide again on a fresh read.
      if (guard === undefined || (await this.log.get(key)) !== undefined) throw alreadyExists(target.rt, name)
      if (attempt >= MAX_RETRIES) throw conflict(target.rt, name)
    }
  }

  /**
   * Replaces the object with what `mutate` makes of the current one (PUT: the body; PATCH: the patched
   * object). A metadata.resourceVersion in the result is a precondition.
   */
  async update(target: Target, name: string, mutate: (current: K8sObject) => unknown, options: WriteOptions = {}): Promise<K8sObject> {
    for (let attempt = 0; ; attempt++) {
      const { key, kv, current } = await this.read(target, name)
      const body = mutate(current)
      const wanted = (body as K8sObject | undefined)?.metadata?.resourceVersion
      const precondition = wanted !== undefined && wanted !== ''
      if (precondition && wanted !== current.metadata.resourceVersion) throw conflict(target.rt, name)
      const next = prepareUpdate(body, current, target, name, options.subresource)
      const finalized = next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0
      const text = encodeForStorage(next)
      if (!finalized && text === kv.value.toString('utf8')) return current
      if (options.dryRun) return next
      const ops: Op[] = finalized ? this.deleteOps(target.rt, key, name) : [{ type: 'put', key, value: text }]
      const result = await this.log.txn({ compare: [{ key, target: 'MOD', result: 'EQUAL', value: kv.modRevision }], success: ops })
      if (result.succeeded) {
        this.onWrite(target.rt, name, finalized ? undefined : next, result.revision)
        return withVersion(next, result.revision)
      }
      if (precondition || attempt >= MAX_RETRIES) throw conflict(target.rt, name)
    }
  }

  /** Deletes (or, with finalizers, marks for deletion); returns the object as it was last stored. */
  async delete(target: Target, name: string, pre: DeletePreconditions = {}, options: WriteOptions = {}): Promise<K8sObject> {
    for (let attempt = 0; ; attempt++) {
      const { key, kv, current } = await this.read(target, name)
      if (pre.uid !== undefined && pre.uid !== current.metadata.uid) {
        throw conflict(
          target.rt,
          name,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(current.metadata.uid)}`,
        )
      }
      if (pre.resourceVersion !== undefined && pre.resourceVersion !== current.metadata.resourceVersion) throw conflict(target.rt, name)
      const pending = (current.metadata.finalizers ?? []).length > 0
      if (pending && current.metadata.deletionTimestamp !== undefined) return current
      if (options.dryRun) return current
      const next = pending
        ? { ...current, metadata: { ...current.metadata, deletionTimestamp: timestamp(), deletionGracePeriodSeconds: 0 } }
        : undefined
      const ops: Op[] = next ? [{ type: 'put', key, value: encodeForStorage(next) }] : this.deleteOps(target.rt, key, name)
      const result = await this.log.txn({ compare: [{ key, target: 'MOD', result: 'EQUAL', value: kv.modRevision }], success: ops })
      if (result.succeeded) {
        this.onWrite(target.rt, name, next, result.revision)
        return next ? withVersion(next, result.revision) : current
      }
      if (pre.resourceVersion !== undefined || attempt >= MAX_RETRIES) throw conflict(target.rt, name)
    }
  }

  /** Deleting a CRD deletes every object of its kind in the same transaction (kube cleans them up too). */
  private deleteOps(rt: ResourceType, key: string, name: string): Op[] {
    const ops: Op[] = [{ type: 'delete', key }]
    if (rt === CRD_TYPE) {
      const plural = name.slice(0, name.indexOf('.'))
      const group = name.slice(name.indexOf('.') + 1)
      const prefix = `/registry/${group}/${plural}/`
      ops.push({ type: 'delete', key: prefix, rangeEnd: prefixEnd(Buffer.from(prefix)) })
    }
    return ops
  }
}

function withVersion(obj: K8sObject, revision: number): K8sObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }
}
