/**
 * etcd's v3election service over the contenders recipe (contenders.ts): Campaign waits server-side until
 * the caller leads `name` and answers its LeaderKey {name, key, rev (the key's create revision), lease};
 * Proclaim changes the leader's value, Resign gives up leadership, both only while that LeaderKey still
 * leads; Leader answers the current leader's kv; Observe streams the leader's kv each time the leader or
 * its value changes. A campaign without a lease gets one of LOCK_DEFAULT_TTL seconds, as a lock does.
 * Errors as etcd's server gives them: "election: no leader", "election: not leader" (UNKNOWN).
 *
 * Every key is checked as the KV operation it is, with the caller's identity, as etcd's server runs the
 * recipe through a client carrying the caller's credentials: Campaign writes its key and reads `name/`;
 * Proclaim and Resign are transactions comparing and writing (or deleting) the leader's key; Leader and
 * Observe read `name/`. Writes are recorded with the caller as author. With auth enabled an anonymous
 * caller is refused ("user name is empty"); an Observe whose caller loses READ on `name/` ends with
 * PERMISSION_DENIED at the next change it would report.
 */
import { status } from '@grpc/grpc-js'
import type { Log } from '../../log/backend.js'
import type { KeyValue } from '../../log/types.js'
import { authenticated, logAsCaller, type CredentialCarrier } from './caller.js'
import { Contenders } from './contenders.js'
import { int, int64, kvMessage } from './convert.js'
import type { EtcdDeps } from './deps.js'
import { grpcError, toGrpcError } from './errors.js'
import { DOOR } from './kv-service.js'
import { withSession } from './lock-service.js'
import type { Message } from './proto.js'
import type { ServiceImplementation } from './transport/grpc-router.js'
import { unary, unaryWithCancel } from './unary.js'

const NO_LEADER = 'election: no leader'
const NOT_LEADER = 'election: not leader'

interface ObserveCall extends CredentialCarrier {
  request: Message
  writable: boolean
  write(message: Message): boolean
  destroy(err: unknown): void
  once(event: 'cancelled' | 'close', fn: () => void): void
}

export function electionService(deps: EtcdDeps, contenders: Contenders): ServiceImplementation {
  const { headers } = deps
  const as = logAsCaller(deps, DOOR, authenticated)
  /** The LeaderKey of a request, or the error etcd gives without one. */
  const leaderKey = (request: Message) => {
    const l = request.leader as Message | null
    if (l === null || l === undefined) throw grpcError(status.UNKNOWN, '"leader" field must be provided')
    return { key: l.key as Buffer, rev: int(l.rev, 'rev'), lease: int64(l.lease, 'lease') }
  }

  return {
    Campaign: unaryWithCancel(async (request, signal, call) => {
      const log = as(call)
      const name = request.name as Buffer
      const value = request.value as Buffer
      // Campaigning again with the same lease keeps the place in line and takes the new value.
      const { lease, entered, revision } = await withSession(log, int64(request.lease, 'lease'), async (lease) => ({
        lease,
        ...(await contenders.contend(log, name, lease, value, signal, true)),
      }))
      return { header: headers.header(revision), leader: { name, key: entered.key, rev: entered.createRevision, lease: lease.toString() } }
    }),

    Proclaim: unary(async (request, call) => {
      const log = as(call)
      const l = leaderKey(request)
      const r = await log.txn({
        compare: [{ key: l.key, target: 'CREATE', result: 'EQUAL', value: l.rev }],
        success: [{ type: 'put', key: l.key, value: request.value as Buffer, lease: l.lease }],
      })
      if (!r.succeeded) throw grpcError(status.UNKNOWN, NOT_LEADER)
      return { header: headers.header(r.revision) }
    }),

    Leader: unary(async (request, call) => {
      const log = as(call)
      const { prefix } = Contenders.keyOf(request.name as Buffer, 0n)
      const kv = await contenders.first(log, prefix)
      if (kv === undefined) throw grpcError(status.UNKNOWN, NO_LEADER)
      return { header: headers.header(), kv: kvMessage(kv) }
    }),

    Observe: (call: ObserveCall) => {
      let log: Log
      try {
        log = as(call)
      } catch (err) {
        call.destroy(toGrpcError(err))
        return
      }
      const { prefix } = Contenders.keyOf(call.request.name as Buffer, 0n)
      let last: KeyValue | undefined
      let busy: Promise<void> = Promise.resolve()
      const check = () => {
        busy = busy
          .then(async () => {
            if (!call.writable) return
            const kv = await contenders.first(log, prefix)
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

    Resign: unary(async (request, call) => {
      const log = as(call)
      const l = leaderKey(request)
      const r = await log.txn({
        compare: [{ key: l.key, target: 'CREATE', result: 'EQUAL', value: l.rev }],
        success: [{ type: 'delete', key: l.key }],
      })
      return { header: headers.header(r.revision) }
    }),
  }
}
