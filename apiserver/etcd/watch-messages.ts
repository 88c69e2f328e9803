/**
 * etcd's WatchResponse encoding for the shared watch stream (apiserver/watch/stream.ts).
 *
 * Encode once: protobuf messages are concatenations of their fields, so an events response is its small
 * per-watch head (header, watch_id) followed by the events fields, and those are encoded once per event
 * (wire.ts) and joined once per batch, shared by every watch the hub handed the same batch to. Events
 * responses are not finished here: the outbox (watch-outbox.ts) adds the head when the response leaves,
 * after joining the batches that queued up behind it.
 *
 * Fragments: a watch created with `fragment` whose response would exceed the request size limit gets it
 * split into several responses, all but the last with fragment = true (etcd's rule; clients join them).
 */
import type { KvlogError } from '../../log/errors.js'
import type { WatchBatch } from '../../log/watch/types.js'
import type { WatchMessages } from '../watch/stream.js'
import type { Headers } from './identity.js'
import { encode, messageType, type Message } from './proto.js'
import { eventsField, eventsFields, watchHead } from './wire.js'
import { authReason } from '../auth/errors.js'
import { ETCD_AUTH_ERRORS } from './errors.js'

/** etcd 3.4's cancel reason for a watch refused or ended by authorization, whatever the auth reason. */
export const WATCH_PERMISSION_DENIED = `rpc error: code = PermissionDenied desc = ${ETCD_AUTH_ERRORS.PERMISSION_DENIED[1]}`

const WatchResponse = messageType('etcdserverpb.WatchResponse')

/** What the stream hands the transport: finished responses, or one batch's events for the outbox. */
export type WatchOutput =
  { kind: 'responses'; id: number; responses: Buffer[] } | { kind: 'events'; id: number; revision: number; fields: Buffer }

export class EtcdWatchMessages implements WatchMessages<WatchOutput> {
  private readonly encoded = new WeakMap<WatchBatch, Buffer>()
  /** Watches that asked for fragmented responses. */
  readonly fragmenting = new Set<number>()

  constructor(
    private readonly headers: Headers,
    private readonly maxResponseBytes: number,
  ) {}

  response(fields: Message): Buffer {
    return encode(WatchResponse, fields)
  }

  /** The head of an events response: header at `revision`, watch_id. */
  head(id: number, revision: number): Buffer {
    return watchHead(this.headers.encoded(revision), id)
  }

  created(id: number, revision: number): WatchOutput {
    return this.finished(id, { header: this.headers.header(revision), watch_id: id, created: true })
  }

  events(id: number, batch: WatchBatch): WatchOutput {
    let fields = this.encoded.get(batch)
    if (fields === undefined) {
      fields = eventsFields(batch.events)
      this.encoded.set(batch, fields)
    }
    if (this.fragmenting.has(id) && fields.length + 64 > this.maxResponseBytes) {
      return { kind: 'responses', id, responses: this.fragments(id, batch) }
    }
    return { kind: 'events', id, revision: batch.revision, fields }
  }

  private fragments(id: number, batch: WatchBatch): Buffer[] {
    const out: Buffer[] = []
    let part: Buffer[] = []
    let size = 0
    const flush = (last: boolean) => {
      const head = last
        ? this.head(id, batch.revision)
        : this.response({ header: this.headers.header(batch.revision), watch_id: id, fragment: true })
      out.push(Buffer.concat([head, ...part]))
      part = []
      size = 0
    }
    for (const e of batch.events) {
      const field = eventsField(e)
      if (part.length > 0 && size + field.length > this.maxResponseBytes) flush(false)
      part.push(field)
      size += field.length
    }
    flush(true)
    return out
  }

  progress(id: number, revision: number): WatchOutput {
    return this.finished(id, { header: this.headers.header(revision), watch_id: id })
  }

  canceled(id: number, err: KvlogError | undefined): WatchOutput {
    this.fragmenting.delete(id)
    const fields: Message = { header: this.headers.header(), watch_id: id, canceled: true }
    // A compacted start or resume carries the floor; etcd's clients turn it into ErrCompacted. etcd
    // sends that response with a header without a revision.
    if (err?.code === 'COMPACTED') {
      fields.compact_revision = err.details.compactRevision
      fields.header = this.headers.header(0)
    } else if (err !== undefined) {
      fields.cancel_reason = authReason(err) !== undefined ? WATCH_PERMISSION_DENIED : err.message
    }
    return this.finished(id, fields)
  }

  private finished(id: number, fields: Message): WatchOutput {
    return { kind: 'responses', id, responses: [this.response(fields)] }
  }
}
