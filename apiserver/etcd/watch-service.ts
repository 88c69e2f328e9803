/**
 * etcd's Watch service: one bidi stream, many watches, over the shared watch stream (flow control,
 * catch-up, COMPACTED cancels) with etcd's encoding (watch-messages.ts).
 *
 * - Create: watch_id 0 = server-chosen (from 0, as etcd); a rejected create is answered as etcd does:
 *   watch_id -1, created and canceled, with the reason.
 * - Auth: a create needs READ on its whole range (checked at create by the watch service, with the
 *   stream's credentials); a denied one is rejected like any other, with etcd's reason text for it.
 * - Cancel: answered with canceled; an unknown id is ignored (etcd).
 * - Progress request: one response with watch_id -1 and the store revision, sent once every watch on the
 *   stream is synced, so it means "every event up to here was sent" for all of them.
 * - Flow control (watch-outbox.ts): responses queue in the stream's outbox, where a watch's events
 *   coalesce while the stream is backed up; more than grpcMaxQueuedMessages responses or
 *   grpcMaxQueuedBytes bytes queued pause the stream's watches; they catch up from the log when it
 *   drains (nothing is dropped).
 * - Require leader (etcd's clientv3.WithRequireLeader: gRPC metadata `hasleader: true`), cluster mode: a
 *   stream opened on a member that knows no leader, or whose member loses its leader while it is open, ends
 *   with etcd's "no leader" error (UNAVAILABLE, `etcdserver: no leader`), checked every third of
 *   leaderLease, so the client can move to a member that has one.
 */
import { status, type ServerDuplexStream, type UntypedServiceImplementation } from '@grpc/grpc-js'
import { invalid, isKvlogError, KvlogError } from '../../log/errors.js'
import { failpoint, failpointsOn } from '../../log/failpoints.js'
import type { WatchSpec } from '../../log/watch/types.js'
import type { CreateRequest } from '../watch/request.js'
import type { WatchStream } from '../watch/stream.js'
import { int } from './convert.js'
import type { EtcdDeps } from './deps.js'
import { callerOf } from './caller.js'
import { grpcError } from './errors.js'
import { authReason } from '../auth/errors.js'
import type { Message } from './proto.js'
import { EtcdWatchMessages, WATCH_PERMISSION_DENIED, type WatchOutput } from './watch-messages.js'
import { WatchOutbox } from './watch-outbox.js'

/** etcd's clientv3.InvalidWatchID: the id of progress responses and of rejected creates. */
const NO_WATCH = -1
/** Responses handed to grpc-js at a time; the rest wait in the outbox, where they coalesce. */
const OUTBOX_INFLIGHT = 8
/** How often a pending progress request checks whether the stream's watches are synced. */
const PROGRESS_POLL_MS = 10

/** A call that sends a message given as parts (transport/grpc-call.ts). */
interface PartsWriter {
  writeParts(parts: readonly Buffer[], written?: () => void): boolean
}

export function watchService(deps: EtcdDeps): UntypedServiceImplementation {
  return { Watch: (call: ServerDuplexStream<Message, Buffer>) => serveWatch(call, deps) }
}

function serveWatch(call: ServerDuplexStream<Message, Buffer>, deps: EtcdDeps): void {
  const { watch, headers, config, auth } = deps
  const messages = new EtcdWatchMessages(headers, config.maxRequestBytes)
  let closed = false
  const outbox = new WatchOutbox(
    {
      inflight: OUTBOX_INFLIGHT,
      maxMessages: config.grpcMaxQueuedMessages,
      maxBytes: config.grpcMaxQueuedBytes,
      maxResponseBytes: config.maxRequestBytes,
    },
    (parts, written) => {
      if (closed || !call.writable) return
      // kvlog's transport writes the parts as they are; grpc-js takes one buffer.
      const writeParts = (call as Partial<PartsWriter>).writeParts
      if (writeParts !== undefined) writeParts.call(call, parts, written)
      else call.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts), written)
    },
    (id, revision) => messages.head(id, revision),
    () => stream.drained(),
  )
  const stream: WatchStream<WatchOutput> = watch.open<WatchOutput>(
    {
      send(output) {
        if (failpointsOn) failpoint('beforeWatchSend')
        if (output.kind === 'events') return outbox.events(output.id, output.revision, output.fields)
        let ok = true
        for (const r of output.responses) ok = outbox.response(output.id, r) && ok
        return ok
      },
      // The server is draining (or the call ended): end the call so the client reconnects and resumes.
      closed() {
        if (!closed && call.writable) call.end()
        close()
      },
    },
    { messages, firstId: 0, caller: () => callerOf(auth, call) },
  )

  let progressTimer: NodeJS.Timeout | undefined
  const answerProgress = () => {
    progressTimer = undefined
    if (closed) return
    if (!stream.allSynced) {
      progressTimer = setTimeout(answerProgress, PROGRESS_POLL_MS)
      return
    }
    if (failpointsOn) failpoint('beforeProgress')
    outbox.response(undefined, messages.response({ header: headers.header(stream.revision), watch_id: NO_WATCH }))
  }

  call.on('data', (request: Message) => {
    try {
      switch (request.request_union) {
        case 'create_request':
          create(request.create_request as Message)
          break
        case 'cancel_request': {
          const id = int((request.cancel_request as Message).watch_id, 'watch_id')
          try {
            stream.cancel(id)
          } catch (err) {
            if (!isKvlogError(err, 'UNKNOWN_WATCH')) throw err
          }
          break
        }
        case 'progress_request':
          progressTimer ??= setTimeout(answerProgress, 0)
          break
        default:
          break // an empty WatchRequest: nothing to do (etcd ignores it too)
      }
    } catch (err) {
      reject(err)
    }
  })

  const create = (c: Message) => {
    const request = createRequest(c)
    try {
      const id = stream.create(request)
      if (c.fragment === true) messages.fragmenting.add(id)
    } catch (err) {
      reject(err)
    }
  }
  const reject = (err: unknown) => {
    const e = isKvlogError(err) ? err : new KvlogError('INTERNAL', String(err))
    outbox.response(
      undefined,
      messages.response({ header: headers.header(), watch_id: NO_WATCH, created: true, canceled: true, cancel_reason: etcdReason(e) }),
    )
  }

  const close = () => {
    if (closed) return
    closed = true
    outbox.close()
    if (progressTimer) clearTimeout(progressTimer)
    clearInterval(leaderTimer)
    watch.release(stream)
  }
  const leaderTimer = requireLeader(call, deps, () => {
    close()
    call.destroy(grpcError(status.UNAVAILABLE, NO_LEADER))
  })
  call.on('end', () => {
    close()
    call.end()
  })
  call.on('cancelled', close)
  call.on('close', close)
  call.on('error', close)
}

/** etcd's rpctypes.ErrGRPCNoLeader. */
const NO_LEADER = 'etcdserver: no leader'

/**
 * With `hasleader: true` metadata in cluster mode: `end()` now if this member knows no leader, or once it
 * stops knowing one (checked every third of leaderLease). The timer to clear when the stream closes.
 */
function requireLeader(call: ServerDuplexStream<Message, Buffer>, deps: EtcdDeps, end: () => void): NodeJS.Timeout | undefined {
  const cluster = deps.cluster
  if (cluster === undefined || call.metadata.get('hasleader')[0] !== 'true') return undefined
  if (!cluster.hasLeader()) {
    setImmediate(end)
    return undefined
  }
  return setInterval(
    () => {
      if (!cluster.hasLeader()) end()
    },
    Math.max(50, Math.floor(deps.config.leaderLease / 3)),
  )
}

/** etcd's wording for the create errors its clients may see. */
function etcdReason(err: KvlogError): string {
  // etcd 3.4 answers any failed authorization of a create with its permission-denied status, as text.
  if (authReason(err) !== undefined) return WATCH_PERMISSION_DENIED
  switch (err.code) {
    case 'WATCH_ID_EXISTS':
      return 'mvcc: duplicate watch ID provided on the WatchStream'
    case 'EMPTY_KEY':
      return 'mvcc: watcher range is empty'
    default:
      return err.message
  }
}

function createRequest(c: Message): CreateRequest {
  const key = c.key as Buffer
  const rangeEnd = c.range_end as Buffer
  const id = int(c.watch_id, 'watch_id')
  if (id < 0) throw invalid('watch_id', 'must not be negative')
  const filters = (c.filters as string[]) ?? []
  const startRevision = int(c.start_revision, 'start_revision')
  const spec: WatchSpec = {
    key,
    rangeEnd: rangeEnd.length > 0 ? rangeEnd : undefined,
    startRevision: startRevision > 0 ? startRevision : undefined,
    prevKv: c.prev_kv === true,
    filters: { noPut: filters.includes('NOPUT'), noDelete: filters.includes('NODELETE') },
  }
  return { ...(id > 0 ? { id } : {}), spec, progressNotify: c.progress_notify === true }
}
