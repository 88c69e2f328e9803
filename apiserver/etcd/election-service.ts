/**
 * etcd's v3election service over the contenders recipe (contenders.ts): Campaign waits server-side until
 * the caller leads `name` and answers its LeaderKey {name, key, rev (the key's create revision), lease};
 * Proclaim changes the leader's value, Resign gives up leadership, both only while that LeaderKey still
 * leads; Leader answers the current leader's kv; Observe streams the leader's kv each time the leader or
 * its value changes. A campaign without a lease gets one of LOCK_DEFAULT_TTL seconds, as a lock does.
 * Errors as etcd's server gives them: "election: no leader", "election: not leader" (UNKNOWN).
 */
import { status } from '@grpc/grpc-js'
import type { KeyValue } from '../../log/types.js'
import { Contenders } from './contenders.js'
import { int, int64, kvMessage } from './convert.js'
import type { EtcdDeps } from './deps.js'
import { grpcError, toGrpcError } from './errors.js'
import { LOCK_DEFAULT_TTL } from './lock-service.js'
import type { Message } from './proto.js'
import type { ServiceImplementation } from './transport/grpc-router.js'
import { unary, unaryWithCancel } from './unary.js'

const NO_LEADER = 'election: no leader'
const NOT_LEADER = 'election: not leader'

interface ObserveCall {
  request: Message
  writable: boolean
  write(message: Message): boolean
  destroy(err: unknown): void
  once(event: 'cancelled' | 'close', fn: () => void): void
}

export function electionService({ log, headers }: EtcdDeps, contenders: Contenders): ServiceImplementation {
  /** The LeaderKey of a request, or the error etcd gives without one. */
  const leaderKey = (request: Message) => {
    const l = request.leader as Message | null
    if (l === null || l === undefined) throw grpcError(status.UNKNOWN, '"leader" field must be provided')
    return { key: l.key as Buffer, rev: int(l.rev, 'rev'), lease: int64(l.lease, 'lease') }
  }

  return {
    Campaign: unaryWithCancel(async (request, signal) => {
      const name = request.name as Buffer
      const value = request.value as Buffer
      let lease = int64(request.lease, 'lease')
      if (lease === 0n) lease = (await log.leaseGrant(LOCK_DEFAULT_TTL)).id
      // Campaigning again with the same lease keeps the place in line and takes the new value.
      const { entered, revision } = await contenders.contend(name, lease, value, signal, true)
      return { header: headers.header(revision), leader: { name, key: entered.key, rev: entered.createRevision, lease: lease.toString() } }
    }),

    Proclaim: unary(async (request) => {
      const l = leaderKey(request)
      const r = await log.txn({
        compare: [{ key: l.key, target: 'CREATE', result: 'EQUAL', value: l.rev }],
        success: [{ type: 'put', key: l.key, value: request.value as Buffer, lease: l.lease }],
      })
      if (!r.succeeded) throw grpcError(status.UNKNOWN, NOT_LEADER)
      return { header: headers.header(r.revision) }
    }),

    Leader: unary(async (request) => {
      const { prefix } = Contenders.keyOf(request.name as Buffer, 0n)
      const kv = await contenders.first(prefix)
      if (kv === undefined) throw grpcError(status.UNKNOWN, NO_LEADER)
      return { header: headers.header(), kv: kvMessage(kv) }
    }),

    Observe: (call: ObserveCall) => {
      const { prefix } = Contenders.keyOf(call.request.name as Buffer, 0n)
      let last: KeyValue | undefined
      let busy: Promise<void> = Promise.resolve()
      const check = () => {
        busy = busy
          .then(async () => {
            if (!call.writable) return
            const kv = await contenders.first(prefix)
            if (kv === undefined || (last !== undefined && last.key.equals(kv.key) && last.modRevision === kv.modRevision)) return
            last = kv
            call.write({ header: headers.header(kv.modRevision), kv: kvMessage(kv) })
          })
          .catch((err: unknown) => {
            stop()
            call.destroy(toGrpcError(err))
          })
      }
      const stop = contenders.onChange(prefix, check)
      call.once('cancelled', stop)
      call.once('close', stop)
      check()
    },

    Resign: unary(async (request) => {
      const l = leaderKey(request)
      const r = await log.txn({
        compare: [{ key: l.key, target: 'CREATE', result: 'EQUAL', value: l.rev }],
        success: [{ type: 'delete', key: l.key }],
      })
      return { header: headers.header(r.revision) }
    }),
  }
}
