/**
 * etcd's Maintenance service for one member: Status, Alarm (NOSPACE from the quota), Defragment (gives
 * space back), Hash/HashKV (CRC-32 of the state), Snapshot (the store as an etcd bbolt file, which
 * `etcdctl snapshot status` and `snapshot restore` read; `kvlog snapshot save` keeps kvlog's own format).
 * With auth enabled, Defragment, Hash, HashKV, Snapshot, MoveLeader and changing an alarm need role root
 * (a snapshot or a hash covers every key); Status and listing alarms need nothing, as in etcd.
 * MoveLeader: there is no other member (FAILED_PRECONDITION, etcd's "bad leader transferee") unless the
 * target is this member. Downgrade: not served (kvlog has no cluster version to downgrade).
 */
import { crc32 } from 'node:zlib'
import { status, type sendUnaryData, type ServerWritableStream, type UntypedServiceImplementation } from '@grpc/grpc-js'
import type { Log } from '../../log/backend.js'
import { KvlogError } from '../../log/errors.js'
import type { EtcdDeps } from './deps.js'
import { int } from './convert.js'
import { grpcError, toGrpcError, unimplemented } from './errors.js'
import { ALARM_NAMES, alarmMessage } from './alarms.js'
import type { Message } from './proto.js'
import { callerOf } from './caller.js'
import { unary } from './unary.js'
import { nameId } from '../cluster-info.js'
import { exportEtcdSnapshot } from '../etcd-snapshot/export.js'
import { drainedOrGone } from '../drained.js'

const ALL_KEYS = Buffer.from([0])
/** Bytes per Snapshot message (etcd sends 32 KiB). */
const SNAPSHOT_CHUNK = 32 * 1024
/** Keys per read while hashing, so a big store is hashed in bounded memory. */
const HASH_PAGE = 1000

export function maintenanceService(deps: EtcdDeps): UntypedServiceImplementation {
  const { log, headers, config, auth, alarms } = deps
  const memberId = headers.identity.memberId
  return {
    Status: unary(async () => {
      const s = await log.status()
      // Cluster mode: the leader's id, the applied stream sequence as raft index, the leader epoch as term.
      const c = s.cluster
      const leader = c === undefined ? memberId : c.leader === '' ? '0' : nameId(c.clusterName, c.leader)
      return {
        header: headers.header(s.revision),
        version: config.etcdVersion,
        dbSize: s.dbSize,
        dbSizeInUse: s.dbSize,
        leader,
        raftIndex: c?.applied ?? s.revision,
        raftTerm: c?.epoch ?? headers.header().raft_term,
        raftAppliedIndex: c?.applied ?? s.revision,
        errors: log.alarms().map((a) => `memberID:${memberId} alarm:${a} `),
        isLearner: false,
      }
    }),

    Alarm: unary(async (request, call) => {
      if (request.action !== 'GET') auth.checkAdmin(callerOf(auth, call))
      const kind = ALARM_NAMES.find((a) => a === request.alarm)
      switch (request.action) {
        case 'GET':
          return { alarms: (await alarms.list()).filter((a) => request.alarm === 'NONE' || a.alarm === request.alarm).map(alarmMessage) }
        case 'ACTIVATE':
        case 'DEACTIVATE': {
          if (kind === undefined) return { alarms: [] }
          const changed =
            request.action === 'ACTIVATE'
              ? await alarms.activate(String(request.memberID), kind)
              : await alarms.deactivate(String(request.memberID), kind)
          return { alarms: changed === undefined ? [] : [alarmMessage(changed)] }
        }
        default:
          throw new KvlogError('INVALID_ARGUMENT', `unknown alarm action ${String(request.action)}`, { field: 'action' })
      }
    }),

    Defragment: unary(async (_request, call) => {
      auth.checkAdmin(callerOf(auth, call))
      await log.reclaimSpace()
      return { header: headers.header() }
    }),

    Hash: unary(async (_request, call) => {
      auth.checkAdmin(callerOf(auth, call))
      const { hash, revision } = await hashState(log, 0)
      return { header: headers.header(revision), hash }
    }),

    HashKV: unary(async (request, call) => {
      auth.checkAdmin(callerOf(auth, call))
      const asked = int(request.revision, 'revision')
      const { hash, revision } = await hashState(log, asked > 0 ? asked : 0)
      return { header: headers.header(), hash, compact_revision: log.compactRevision, hash_revision: revision }
    }),

    Snapshot: (call: ServerWritableStream<Message, Message>) => void streamSnapshot(call, deps),

    MoveLeader: unary((request, call) => {
      auth.checkAdmin(callerOf(auth, call))
      if (String(request.targetID) === memberId) return { header: headers.header() }
      throw grpcError(status.FAILED_PRECONDITION, 'etcdserver: bad leader transferee')
    }),

    Downgrade: (_call: unknown, callback: sendUnaryData<Message>) =>
      callback(unimplemented('Downgrade: kvlog has no cluster version to downgrade')),
  }
}

/**
 * CRC-32 (IEEE, as etcd) over every key's key, value, create and mod revision and version at `revision`
 * (0 = the latest), read page by page at one revision. Equal states give equal hashes.
 */
async function hashState(log: Log, revision: number): Promise<{ hash: number; revision: number }> {
  let hash = 0
  let at = revision
  let from = ALL_KEYS
  for (;;) {
    const page = await log.range(from, { rangeEnd: ALL_KEYS, revision: at, limit: HASH_PAGE })
    at = page.revision
    for (const kv of page.kvs) {
      const meta = Buffer.allocUnsafe(24)
      meta.writeBigUInt64BE(BigInt(kv.createRevision), 0)
      meta.writeBigUInt64BE(BigInt(kv.modRevision), 8)
      meta.writeBigUInt64BE(BigInt(kv.version), 16)
      hash = crc32(kv.value, crc32(meta, crc32(kv.key, hash)))
    }
    if (!page.more) return { hash, revision: at }
    from = Buffer.concat([page.kvs[page.kvs.length - 1].key, ALL_KEYS])
  }
}

/**
 * etcd's snapshot: a bbolt database in etcd's layout followed by its sha256 (../etcd-snapshot/export.ts),
 * in chunks of SNAPSHOT_CHUNK bytes, each with the bytes still to come; a last empty message says none.
 */
async function streamSnapshot(call: ServerWritableStream<Message, Message>, { log, headers, config, auth }: EtcdDeps): Promise<void> {
  try {
    auth.checkAdmin(callerOf(auth, call))
    const snap = await exportEtcdSnapshot(log)
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
