/**
 * etcd's v3lock service: Lock waits server-side until `name` is held by the caller's lease and answers
 * the key that holds it (`name/<lease hex>`); Unlock deletes that key. The wait ends early when the
 * client goes away (the key is removed, the next contender goes) or when the lease expires (the key is
 * gone: LEASE_NOT_FOUND). A request without a lease gets a lease of LOCK_DEFAULT_TTL seconds granted for
 * it (etcd's server creates a session with the default TTL), which then keeps the lock until it expires
 * or the key is unlocked.
 *
 * As etcd's server, which runs the recipe through a client carrying the caller's credentials, every key is
 * checked as the KV operation it is (contenders.ts): a Lock needs WRITE on its key and READ on `name/`;
 * Unlock is a delete (WRITE on the key). With auth enabled an anonymous caller is refused before anything
 * is granted or written ("user name is empty").
 */
import type { Log } from '../../log/backend.js'
import { authenticated, logAsCaller } from './caller.js'
import type { Contenders } from './contenders.js'
import { int64 } from './convert.js'
import type { EtcdDeps } from './deps.js'
import { DOOR } from './kv-service.js'
import type { ServiceImplementation } from './transport/grpc-router.js'
import { unary, unaryWithCancel } from './unary.js'

/** etcd's concurrency session default TTL, seconds. */
export const LOCK_DEFAULT_TTL = 60

export function lockService(deps: EtcdDeps, contenders: Contenders): ServiceImplementation {
  const { headers } = deps
  const as = logAsCaller(deps, DOOR, authenticated)
  return {
    Lock: unaryWithCancel(async (request, signal, call) => {
      const log = as(call)
      const name = request.name as Buffer
      const lease = int64(request.lease, 'lease')
      const { entered, revision } = await withSession(log, lease, (id) => contenders.contend(log, name, id, Buffer.alloc(0), signal))
      return { header: headers.header(revision), key: entered.key }
    }),

    Unlock: unary(async (request, call) => {
      const r = await as(call).delete(request.key as Buffer)
      return { header: headers.header(r.revision) }
    }),
  }
}

/**
 * Runs `fn` with the caller's lease, or with a lease of LOCK_DEFAULT_TTL granted for it when there is
 * none (0). A granted lease is revoked again when `fn` fails before it holds anything, so that a refused
 * request leaves no lease behind.
 */
export async function withSession<T>(log: Log, lease: bigint, fn: (lease: bigint) => Promise<T>): Promise<T> {
  if (lease !== 0n) return fn(lease)
  const granted = (await log.leaseGrant(LOCK_DEFAULT_TTL)).id
  try {
    return await fn(granted)
  } catch (err) {
    await log.leaseRevoke(granted).catch(() => undefined)
    throw err
  }
}
