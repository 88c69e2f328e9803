/**
 * etcd's v3lock service: Lock waits server-side until `name` is held by the caller's lease and answers
 * the key that holds it (`name/<lease hex>`); Unlock deletes that key. The wait ends early when the
 * client goes away (the key is removed, the next contender goes) or when the lease expires (the key is
 * gone: LEASE_NOT_FOUND). A request without a lease gets a lease of LOCK_DEFAULT_TTL seconds granted for
 * it (etcd's server creates a session with the default TTL), which then keeps the lock until it expires
 * or the key is unlocked.
 */
import type { Contenders } from './contenders.js'
import { int64 } from './convert.js'
import type { EtcdDeps } from './deps.js'
import type { ServiceImplementation } from './transport/grpc-router.js'
import { unary, unaryWithCancel } from './unary.js'

/** etcd's concurrency session default TTL, seconds. */
export const LOCK_DEFAULT_TTL = 60

export function lockService({ log, headers }: EtcdDeps, contenders: Contenders): ServiceImplementation {
  return {
    Lock: unaryWithCancel(async (request, signal) => {
      const name = request.name as Buffer
      let lease = int64(request.lease, 'lease')
      if (lease === 0n) lease = (await log.leaseGrant(LOCK_DEFAULT_TTL)).id
      const { entered, revision } = await contenders.contend(name, lease, Buffer.alloc(0), signal)
      return { header: headers.header(revision), key: entered.key }
    }),

    Unlock: unary(async (request) => {
      const r = await log.delete(request.key as Buffer)
      return { header: headers.header(r.revision) }
    }),
  }
}
