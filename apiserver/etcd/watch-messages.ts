/**
 * etcd's WatchResponse encoding for the shared watch stream (apiserver/watch/stream.ts).
 *
 * Encode once: protobuf messages are concatenations of their fields, so a response is encoded as its
 * small per-watch part (header, watch_id) followed by the events part, and the events part is encoded once
 * per batch and shared by every watch the hub handed the same batch to.
 *
 * Fragments: a watch created with `fragment` whose response would exceed the request size limit gets it
 * split into several responses, all but the last with fragment = true (etcd's rule; clients join them).
 */
import type { KvlogError } from '../../log/errors.js'
import type { Event } from '../../log/types.js'
import type { WatchBatch } from '../../log/watch/types.js'
import type { WatchMessages } from '../watch/stream.js'
import { kvMessage } from './convert.js'
import type { Headers } from './identity.js'
import { encode, EVENT_TYPE, messageType, type Message } from './proto.js'

const WatchResponse = messageType('etcdserverpb.WatchResponse')

/** One or more encoded WatchResponses, written in order. */
export type EncodedResponses = Buffer | Buffer[]

function eventMessage(e: Event): Message {
  const m: Message = { kv: kvMessage(e.kv) }
  if (e.type === 'DELETE') m.type = EVENT_TYPE.DELETE
  if (e.prevKv !== undefined) m.prev_kv = kvMessage(e.prevKv)
  return m
}

export class EtcdWatchMessages implements WatchMessages<EncodedResponses> {
  private readonly encoded = new WeakMap<WatchBatch, Buffer>()
  /** Watches that asked for fragmented responses. */
  readonly fragmenting = new Set<number>()

  constructor(private readonly headers: Headers, private readonly maxResponseBytes: number) {}

  response(fields: Message): Buffer {
    return encode(WatchResponse, fields)
  }

  created(id: number, revision: number): Buffer {
    return this.response({ header: this.headers.header(revision), watch_id: id, created: true })
  }

  events(id: number, batch: WatchBatch): EncodedResponses {
    let events = this.encoded.get(batch)
    if (events === undefined) {
      events = encode(WatchResponse, { events: batch.events.map(eventMessage) })
      this.encoded.set(batch, events)
    }
    const head = this.response({ header: this.headers.header(batch.revision), watch_id: id })
    if (!this.fragmenting.has(id) || head.length + events.length <= this.maxResponseBytes) return Buffer.concat([head, events])
    return this.fragments(id, batch)
  }

  private fragments(id: number, batch: WatchBatch): Buffer[] {
    const out: Buffer[] = []
    let part: Message[] = []
    let size = 0
    const flush = (last: boolean) => {
      const fields: Message = { header: this.headers.header(batch.revision), watch_id: id, events: part }
      if (!last) fields.fragment = true
      out.push(this.response(fields))
      part = []
      size = 0
    }
    for (const e of batch.events) {
      const m = eventMessage(e)
      const bytes = encode(WatchResponse, { events: [m] }).length
      if (part.length > 0 && size + bytes > this.maxResponseBytes) flush(false)
      part.push(m)
      size += bytes
    }
    flush(true)
    return out
  }

  progress(id: number, revision: number): Buffer {
    return this.response({ header: this.headers.header(revision), watch_id: id })
  }

  canceled(id: number, err: KvlogError | undefined): Buffer {
    this.fragmenting.delete(id)
    const fields: Message = { header: this.headers.header(), watch_id: id, canceled: true }
    // A compacted start or resume carries the floor; etcd's clients turn it into ErrCompacted.
    if (err?.code === 'COMPACTED') fields.compact_revision = err.details.compactRevision
    else if (err !== undefined) fields.cancel_reason = err.message
    return this.response(fields)
  }
}
