/**
 * Namespace lifecycle, as kube-apiserver's NamespaceLifecycle admission and namespace controller:
 *
 * - Creating an object in a namespace that has no Namespace object is 404 NotFound (`namespaces "x"
 *   not found`), unless resourceNamespaceMustExist is false. default, kube-system, kube-public and
 *   kube-node-lease always exist (kube-apiserver creates them at start; kvlog writes nothing at start).
 * - Creating in a namespace that is terminating is 403 Forbidden (`unable to create new content in
 *   namespace x because it is being terminated`). The create compares the namespace's mod revision in
 *   its transaction, so a create racing a namespace delete cannot slip in after the content was removed.
 * - Deleting a namespace: (1) it is written with deletionTimestamp and status.phase Terminating (a
 *   MODIFIED event); (2) every namespaced object in it, of every kind the registry knows (CRDs too), is
 *   removed with one range delete per kind (a DELETED event per object); (3) the namespace is removed,
 *   unless metadata.finalizers remain (then the update that clears them removes it). The answer is the
 *   Terminating namespace, as kube-apiserver answers. Finalizers of the objects inside are not waited for.
 *   A namespace left Terminating by a crash is finished when the server starts.
 * - default, kube-system and kube-public may not be deleted (403 Forbidden), as in kube-apiserver.
 */
import type { Log } from '../../log/backend.js'
import { KvlogError } from '../../log/errors.js'
import { prefixEnd } from '../../log/keys.js'
import type { Op } from '../../log/types.js'
import { scanPrefix } from './list.js'
import { timestamp, type K8sObject } from './k8s-object.js'
import { decodeStored, encodeForStorage, notAnObject, type Target } from './objects.js'
import { collectionPrefix, objectKey } from './paths.js'
import { NAMESPACE_TYPE, type Registry } from './registry.js'
import { conflict, notFound } from './status.js'
import type { DeletePreconditions } from './store.js'

/** Namespaces that exist without a Namespace object. */
const IMPLICIT = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease'])
/** Namespaces that may not be deleted. */
const PROTECTED = new Set(['default', 'kube-system', 'kube-public'])
/** Range deletes per transaction while removing a namespace's content (below any maxTxnOps). */
const OPS_PER_TXN = 64
const MAX_RETRIES = 16

const TARGET: Target = { rt: NAMESPACE_TYPE, version: 'v1' }

export function isTerminating(ns: K8sObject): boolean {
  return ns.metadata.deletionTimestamp !== undefined || (ns.status as { phase?: unknown } | undefined)?.phase === 'Terminating'
}

export class Namespaces {
  constructor(
    private readonly log: Log,
    private readonly registry: Registry,
    private readonly mustExist: boolean,
  ) {}

  /**
   * The guard of a create in `namespace` (store.ts WriteOptions.guard): the namespace key at the
   * revision read. Throws 404 for a missing namespace (when they must exist), 403 for a terminating one.
   */
  async createGuard(namespace: string): Promise<{ key: string; modRevision: number }> {
    const key = objectKey(NAMESPACE_TYPE, undefined, namespace)
    const kv = await this.log.get(key)
    if (kv === undefined) {
      if (this.mustExist && !IMPLICIT.has(namespace)) throw notFound(NAMESPACE_TYPE, namespace)
      return { key, modRevision: 0 }
    }
    const ns = decodeStored(kv, TARGET)
    if (ns !== undefined && isTerminating(ns)) {
      throw new KvlogError('FORBIDDEN', `unable to create new content in namespace ${namespace} because it is being terminated`, {
        k8s: { name: namespace, kind: 'namespaces', group: '' },
      })
    }
    return { key, modRevision: kv.modRevision }
  }

  /** DELETE of a namespace: Terminating, its content removed, then itself removed. */
  async delete(name: string, pre: DeletePreconditions, dryRun: boolean): Promise<K8sObject> {
    if (PROTECTED.has(name)) {
      throw new KvlogError('FORBIDDEN', `namespaces "${name}" is forbidden: this namespace may not be deleted`, {
        k8s: { name, kind: 'namespaces', group: '' },
      })
    }
    const key = objectKey(NAMESPACE_TYPE, undefined, name)
    for (let attempt = 0; ; attempt++) {
      const kv = await this.log.get(key)
      if (kv === undefined) throw notFound(NAMESPACE_TYPE, name)
      const current = decodeStored(kv, TARGET)
      if (current === undefined) throw notAnObject(key)
      if (pre.uid !== undefined && pre.uid !== current.metadata.uid) {
        throw conflict(
          NAMESPACE_TYPE,
          name,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(current.metadata.uid)}`,
        )
      }
      if (pre.resourceVersion !== undefined && pre.resourceVersion !== current.metadata.resourceVersion)
        throw conflict(NAMESPACE_TYPE, name)
      if (dryRun) return current
      if (isTerminating(current) && current.metadata.deletionTimestamp !== undefined) {
        await this.finish(name)
        return current
      }
      const terminating: K8sObject = {
        ...current,
        metadata: { ...current.metadata, deletionTimestamp: timestamp() },
        status: { ...(current.status as object | undefined), phase: 'Terminating' },
      }
      const result = await this.log.txn({
        compare: [{ key, target: 'MOD', result: 'EQUAL', value: kv.modRevision }],
        success: [{ type: 'put', key, value: encodeForStorage(terminating) }],
      })
      if (result.succeeded) {
        await this.finish(name)
        return { ...terminating, metadata: { ...terminating.metadata, resourceVersion: String(result.revision) } }
      }
      if (pre.resourceVersion !== undefined || attempt >= MAX_RETRIES) throw conflict(NAMESPACE_TYPE, name)
    }
  }

  /** Finishes every namespace a crash left Terminating (called once at start, after CRDs are loaded). */
  async resume(): Promise<void> {
    const pending: string[] = []
    await scanPrefix(this.log, collectionPrefix(NAMESPACE_TYPE, undefined), (kv) => {
      const ns = decodeStored(kv, TARGET)
      if (ns?.metadata.deletionTimestamp !== undefined && typeof ns.metadata.name === 'string') pending.push(ns.metadata.name)
    })
    for (const name of pending) await this.finish(name)
  }

  /** Steps (2) and (3) for a namespace already marked Terminating. */
  private async finish(name: string): Promise<void> {
    const ops: Op[] = []
    for (const rt of this.registry.all()) {
      if (!rt.namespaced) continue
      const prefix = collectionPrefix(rt, name)
      ops.push({ type: 'delete', key: prefix, rangeEnd: prefixEnd(Buffer.from(prefix)) })
    }
    for (let i = 0; i < ops.length; i += OPS_PER_TXN) await this.log.txn({ compare: [], success: ops.slice(i, i + OPS_PER_TXN) })
    const key = objectKey(NAMESPACE_TYPE, undefined, name)
    for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
      const kv = await this.log.get(key)
      const ns = kv === undefined ? undefined : decodeStored(kv, TARGET)
      if (kv === undefined || ns === undefined || ns.metadata.deletionTimestamp === undefined) return
      if ((ns.metadata.finalizers ?? []).length > 0) return
      const result = await this.log.txn({
        compare: [{ key, target: 'MOD', result: 'EQUAL', value: kv.modRevision }],
        success: [{ type: 'delete', key }],
      })
      if (result.succeeded) return
    }
    throw conflict(NAMESPACE_TYPE, name)
  }
}
