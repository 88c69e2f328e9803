/**
 * The store as every door sees it while it mirrors an etcd (etcd-follower.ts): reads, watches, status and
 * meta records as usual; every call that would add a revision or change a lease fails with READ_ONLY until
 * `writable()` says otherwise (after the cutover). A transaction is refused only if a branch writes, so
 * read-only transactions (etcd clients read with them) still work. Compaction stays allowed: it adds no
 * revision.
 */
import { KvlogError, type Log, type TxnRequest } from '../../log/index.js'

const WRITES = new Set<string | symbol>(['put', 'delete', 'leaseGrant', 'leaseRevoke', 'leaseKeepAlive'])

function writes(request: Pick<TxnRequest, 'success' | 'failure'>): boolean {
  return [...(request.success ?? []), ...(request.failure ?? [])].some(
    (op) => op.type === 'put' || op.type === 'delete' || (op.type === 'txn' && writes(op)),
  )
}

export function readOnlyUntil<L extends Log>(log: L, writable: () => boolean): L {
  const refuse = () =>
    Promise.reject(new KvlogError('READ_ONLY', 'this server mirrors an etcd and takes no writes until the cutover (kvlog import cutover)'))
  return new Proxy(log, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target)
      if (typeof value !== 'function') return value
      if (WRITES.has(name))
        return (...args: unknown[]) => (writable() ? (value as (...a: unknown[]) => unknown).apply(target, args) : refuse())
      if (name === 'txn')
        return (request: TxnRequest) => (writable() || !writes(request) ? (value as Log['txn']).call(target, request) : refuse())
      return (value as (...a: unknown[]) => unknown).bind(target)
    },
  })
}
