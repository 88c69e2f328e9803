/**
 * etcd's Lease service over the log's leases. As etcd answers: a keep-alive or time-to-live for a lease
 * that does not exist is not an error (TTL 0 and -1), a revoke of one is (NOT_FOUND).
 *
 * With auth enabled (as etcd): a revoke needs WRITE on every key attached to the lease (it deletes them);
 * a time-to-live that lists keys needs READ on them (auth/guarded-log.ts checks both, as the caller).
 * Grant, keep-alive and list need no permission.
 */
import type { ServerDuplexStream, UntypedServiceImplementation } from '@grpc/grpc-js'
import type { Log } from '../../log/backend.js'
import { isKvlogError } from '../../log/errors.js'
import type { EtcdDeps } from './deps.js'
import { int, int64 } from './convert.js'
import { toGrpcError } from './errors.js'
import type { Message } from './proto.js'
import { logAsCaller } from './caller.js'
import { DOOR } from './kv-service.js'
import { unary } from './unary.js'

export function leaseService(deps: EtcdDeps): UntypedServiceImplementation {
  const { headers } = deps
  const as = logAsCaller(deps, DOOR)
  return {
    LeaseGrant: unary(async (request, call) => {
      const g = await as(call).leaseGrant(int(request.TTL, 'TTL'), int64(request.ID, 'ID'))
      return { header: headers.header(), ID: g.id.toString(), TTL: g.ttl }
    }),

    LeaseRevoke: unary(async (request, call) => {
      const r = await as(call).leaseRevoke(int64(request.ID, 'ID'))
      return { header: headers.header(r.revision) }
    }),

    LeaseTimeToLive: unary((request, call) => {
      const id = int64(request.ID, 'ID')
      const t = as(call).leaseTimeToLive(id, { keys: request.keys === true })
      if (t === undefined) return { header: headers.header(), ID: id.toString(), TTL: -1 }
      return { header: headers.header(), ID: id.toString(), TTL: t.ttl, grantedTTL: t.grantedTtl, keys: t.keys ?? [] }
    }),

    LeaseLeases: unary((_request, call) => ({
      header: headers.header(),
      leases: as(call)
        .leases()
        .map((id) => ({ ID: id.toString() })),
    })),

    LeaseKeepAlive: (call: ServerDuplexStream<Message, Message>) => {
      let log: Log
      try {
        log = as(call)
      } catch (err) {
        call.destroy(toGrpcError(err) as unknown as Error)
        return
      }
      // Answers go out in request order: each waits for the one before.
      let previous: Promise<void> = Promise.resolve()
      call.on('data', (request: Message) => {
        const answer = (async (): Promise<Message> => {
          const id = int64(request.ID, 'ID')
          try {
            const k = await log.leaseKeepAlive(id)
            return { header: headers.header(), ID: id.toString(), TTL: k.ttl }
          } catch (err) {
            if (isKvlogError(err, 'LEASE_NOT_FOUND')) return { header: headers.header(), ID: id.toString(), TTL: 0 }
            throw err
          }
        })()
        answer.catch(() => undefined)
        previous = previous
          .then(() => answer)
          .then(
            (response) => void (call.writable && call.write(response)),
            (err) => {
              if (call.writable) call.destroy(toGrpcError(err) as unknown as Error)
            },
          )
      })
      call.on('end', () => void previous.then(() => call.end()))
      call.on('error', () => undefined)
    },
  }
}
