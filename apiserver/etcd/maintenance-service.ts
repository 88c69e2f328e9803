/**
 * etcd's Maintenance service for one member: Status, Alarm (NOSPACE from the quota), Defragment (gives
 * space back), Hash/HashKV (CRC-32 of the state), Snapshot (the store as an etcd bbolt file, which
 * `etcdctl snapshot status` and `snapshot restore` read; `kvlog snapshot save` keeps kvlog's own format).
 * With auth enabled, as etcd's current releases: Defragment, Hash, HashKV, Snapshot, MoveLeader, Downgrade
 * and changing an alarm need role root (a snapshot or a hash covers every key); Status and listing alarms
 * need an authenticated caller (etcd's "user name is empty" otherwise; kube-apiserver asks Status for the
 * version as its own, usually not root, user). Every call reads the log as its
 * caller (auth/guarded-log.ts).
 * MoveLeader: there is no other member (FAILED_PRECONDITION, etcd's "bad leader transferee") unless the
 * target is this member. Downgrade: not served (kvlog has no cluster version to downgrade); role root is
 * still checked first.
 */
import { status, type ServerWritableStream, type UntypedServiceImplementation } from '@grpc/grpc-js'
import type { Log } from '../../log/backend.js'
import { KvlogError } from '../../log/errors.js'
import { hashState } from '../../log/state-hash.js'
import type { EtcdDeps } from './deps.js'
import { int } from './convert.js'
import { grpcError, toGrpcError, unimplemented } from './errors.js'
import { ALARM_NAMES, alarmMessage } from './alarms.js'
import type { Message } from './proto.js'
import { authenticated, callerOf, type CredentialCarrier } from './caller.js'
import { unary } from './unary.js'
import { memberIdOf, nameId } from '../cluster-info.js'
import { exportEtcdSnapshot } from '../etcd-snapshot/export.js'
import { drainedOrGone } from '../drained.js'

/** The door name recorded with this door's writes. */
const DOOR = 'etcd'
/** Bytes per Snapshot message (etcd sends 32 KiB). */
const SNAPSHOT_CHUNK = 32 * 1024

export function maintenanceService(deps: EtcdDeps): UntypedServiceImplementation {
  const { logs, headers, config, auth, alarms, cluster } = deps
  const memberId = headers.identity.memberId
  const idOf = (clusterName: string, name: string) => (cluster === undefined ? nameId(clusterName, name) : memberIdOf(cluster, name))
  // The leader's corruption check: a CORRUPT alarm for the member whose copy differs, as etcd raises one.
  logs.onCorrupt((report) => {
    alarms.activate(logs.own, idOf(report.clusterName, report.member), 'CORRUPT').catch(() => undefined)
  })
  /** The caller, with role root; and the log as that caller. */
  const asAdmin = (call: CredentialCarrier) => {
    const who = callerOf(auth, call)
    auth.checkAdmin(who)
    return logs.as(who, DOOR)
  }
  return {
    Status: unary(async (_request, call) => {
      const log = logs.as(authenticated(auth, call), DOOR)
      const s = await log.status()
      // Cluster mode: the leader's id, the applied stream sequence as raft index, the leader's term.
      const c = s.cluster
      const leader = c === undefined ? memberId : c.leader === '' ? '0' : idOf(c.clusterName, c.leader)
      return {
        header: headers.header(s.revision),
        version: config.etcdVersion,
        dbSize: s.dbSize,
        dbSizeInUse: s.dbSize,
        leader,
        raftIndex: c?.applied ?? s.revision,
        raftTerm: c?.term ?? headers.header().raft_term,
        raftAppliedIndex: c?.applied ?? s.revision,
        errors: log.alarms().map((a) => `memberID:${memberId} alarm:${a} `),
        isLearner: false,
      }
    }),

    Alarm: unary(async (request, call) => {
      const log = request.action === 'GET' ? logs.as(authenticated(auth, call), DOOR) : asAdmin(call)
      const kind = ALARM_NAMES.find((a) => a === request.alarm)
      switch (request.action) {
        case 'GET':
          return { alarms: (await alarms.list(log)).filter((a) => request.alarm === 'NONE' || a.alarm === request.alarm).map(alarmMessage) }
        case 'ACTIVATE':
        case 'DEACTIVATE': {
          if (kind === undefined) return { alarms: [] }
          const changed =
            request.action === 'ACTIVATE'
              ? await alarms.activate(log, String(request.memberID), kind)
              : await alarms.deactivate(log, String(request.memberID), kind)
          return { alarms: changed === undefined ? [] : [alarmMessage(changed)] }
        }
        default:
          throw new KvlogError('INVALID_ARGUMENT', `unknown alarm action ${String(request.action)}`, { field: 'action' })
      }
    }),

    Defragment: unary(async (_request, call) => {
      await asAdmin(call).reclaimSpace()
      return { header: headers.header() }
    }),

    Hash: unary(async (_request, call) => {
      const { hash, revision } = await hashState(asAdmin(call), 0)
      return { header: headers.header(revision), hash }
    }),

    HashKV: unary(async (request, call) => {
      const log = asAdmin(call)
      const asked = int(request.revision, 'revision')
      const { hash, revision } = await hashState(log, asked > 0 ? asked : 0)
      return { header: headers.header(), hash, compact_revision: log.compactRevision, hash_revision: revision }
    }),

    Snapshot: (call: ServerWritableStream<Message, Message>) => void streamSnapshot(call, asAdmin, deps),

    MoveLeader: unary((request, call) => {
      asAdmin(call)
      if (String(request.targetID) === memberId) return { header: headers.header() }
      throw grpcError(status.FAILED_PRECONDITION, 'etcdserver: bad leader transferee')
    }),

    // etcd (3.5, where it exists) lets only role root downgrade.
    Downgrade: unary((_request, call) => {
      asAdmin(call)
      throw unimplemented('Downgrade: kvlog has no cluster version to downgrade')
    }),
  }
}

/**
 * etcd's snapshot: a bbolt database in etcd's layout followed by its sha256 (../etcd-snapshot/export.ts),
 * in chunks of SNAPSHOT_CHUNK bytes, each with the bytes still to come; a last empty message says none.
 */
async function streamSnapshot(
  call: ServerWritableStream<Message, Message>,
  asAdmin: (call: CredentialCarrier) => Log,
  { headers, config }: EtcdDeps,
): Promise<void> {
  try {
    const snap = await exportEtcdSnapshot(asAdmin(call))
    let sent = 0
    for (const blob of chunks(snap.parts, SNAPSHOT_CHUNK)) {
      if (call.cancelled) break
      sent += blob.length
      const ok = call.write({ header: headers.header(snap.revision), remaining_bytes: snap.size - sent, blob, version: config.etcdVersion })
      if (!ok) await drainedOrGone(call)
    }
    if (!call.cancelled) call.write({ header: headers.header(snap.revision), remaining_bytes: 0, blob: Buffer.alloc(0) })
    call.end()
  } catch (err) {
    call.destroy(toGrpcError(err) as unknown as Error)
  }
}

/** The parts regrouped into buffers of `size` bytes (the last one shorter). */
function* chunks(parts: readonly Buffer[], size: number): Generator<Buffer> {
  let pending: Buffer[] = []
  let bytes = 0
  for (const part of parts) {
    pending.push(part)
    bytes += part.length
    while (bytes >= size) {
      const all = Buffer.concat(pending)
      yield all.subarray(0, size)
      pending = [all.subarray(size)]
      bytes -= size
    }
  }
  if (bytes > 0) yield Buffer.concat(pending)
}
