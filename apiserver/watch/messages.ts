/**
 * The watch protocol's messages (WebSocket frames and NDJSON lines share them; docs/api.md).
 *
 * Client → server (WebSocket only; NDJSON takes the create fields as query parameters):
 *   { "op": "create", "id"?: n, key selection, "startRevision"?, "prevKv"?, "noPut"?, "noDelete"?,
 *     "progressNotify"?, "cursor"? }
 *   { "op": "cancel", "id": n }
 *   { "op": "progress" }                          progress notices for every watch on the connection
 *
 * Server → client:
 *   { "type": "created",  "id", "revision", "startRevision" } revision = the store's revision at creation;
 *                                                            startRevision = the first revision delivered
 *   { "type": "events",   "id", "revision", "events": [...] } whole revisions; revision = the last one
 *   { "type": "progress", "id", "revision" }                 every matching event <= revision was sent
 *   { "type": "canceled", "id", "code"?, "reason", "compactRevision"? }  code absent for a client cancel
 *   { "type": "error",    "code", "message", "id"?, "details"? }  a bad request; the connection stays
 *
 * Encoding once: the hub hands the same batch object to every watcher with the same range and options,
 * so the events array is serialized once per batch (WeakMap) and spliced into each watcher's frame.
 */
import type { KvlogError } from '../../log/errors.js'
import type { WatchBatch } from '../../log/watch/types.js'
import { eventToJson } from '../codec.js'

const encoded = new WeakMap<WatchBatch, string>()

function encodeEvents(batch: WatchBatch): string {
  let text = encoded.get(batch)
  if (text === undefined) {
    const events = new Array(batch.events.length)
    for (let i = 0; i < batch.events.length; i++) {
      const e = batch.events[i]
      const json = eventToJson(e, e.kv.modRevision, e.prevKv !== undefined)
      json.time = new Date(batch.times[i]).toISOString()
      const author = batch.authors[i]
      if (author !== undefined) json.author = author
      events[i] = json
    }
    text = JSON.stringify(events)
    encoded.set(batch, text)
  }
  return text
}

export function eventsMessage(id: number, batch: WatchBatch): string {
  return `{"type":"events","id":${id},"revision":${batch.revision},"events":${encodeEvents(batch)}}`
}

/** `startRevision`: the first revision the watch delivers (where "from now" or a cursor put it). */
export function createdMessage(id: number, revision: number, startRevision?: number): string {
  return JSON.stringify(startRevision === undefined ? { type: 'created', id, revision } : { type: 'created', id, revision, startRevision })
}

export function progressMessage(id: number, revision: number): string {
  return JSON.stringify({ type: 'progress', id, revision })
}

export function canceledMessage(id: number, err: KvlogError | undefined): string {
  // A cancel the client asked for is not an error, so it carries no code.
  if (err === undefined) return JSON.stringify({ type: 'canceled', id, reason: 'canceled by the client' })
  const out: Record<string, unknown> = { type: 'canceled', id, code: err.code, reason: err.message }
  if (err.details.compactRevision !== undefined) out.compactRevision = err.details.compactRevision
  return JSON.stringify(out)
}

export function errorMessage(err: KvlogError, id?: number): string {
  const out: Record<string, unknown> = { type: 'error', code: err.code, message: err.message }
  if (id !== undefined) out.id = id
  if (Object.keys(err.details).length > 0) out.details = err.details
  return JSON.stringify(out)
}
