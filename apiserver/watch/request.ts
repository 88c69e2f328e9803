/**
 * A watch create request, from a WebSocket message (JSON) or the NDJSON route's query string, checked
 * and turned into the hub's WatchSpec.
 */
import { invalid } from '../../log/errors.js'
import type { WatchSpec } from '../../log/watch/types.js'
import type { JsonObject } from '../codec.js'
import {
  bodyBool,
  bodyInt,
  KEY_SELECTION_PARAMS,
  keySelection,
  onlyFields,
  queryBool,
  queryInt,
  queryString,
  type Query,
} from '../params.js'

export interface CreateRequest {
  /** Client-chosen id, or undefined for a server-chosen one. */
  id?: number
  spec: WatchSpec
  /** Send progress notices while idle (every watchProgressInterval). */
  progressNotify: boolean
  /** Start after this consumer cursor's committed revision (instead of startRevision). */
  cursor?: string
}

const CREATE_FIELDS = [...KEY_SELECTION_PARAMS, 'startRevision', 'prevKv', 'noPut', 'noDelete', 'progressNotify', 'cursor']

function cursorOption(value: unknown, startRevision: number | undefined): { cursor?: string } {
  if (value === undefined) return {}
  if (typeof value !== 'string' || value === '') throw invalid('cursor', 'must be a cursor name')
  if (startRevision !== undefined) throw invalid('cursor', 'give cursor or startRevision, not both')
  return { cursor: value }
}

export function createFromJson(msg: JsonObject): CreateRequest {
  onlyFields(msg, ['op', 'id', ...CREATE_FIELDS], '')
  const { key, rangeEnd } = keySelection(msg, { prefix: bodyBool(msg, 'prefix', ''), fromKey: bodyBool(msg, 'fromKey', '') })
  const id = bodyInt(msg, 'id', '')
  if (id !== undefined && id > 0x7fffffff) throw invalid('id', 'must be at most 2^31-1')
  return {
    ...(id === undefined ? {} : { id }),
    ...cursorOption(msg.cursor, bodyInt(msg, 'startRevision', '')),
    spec: {
      key,
      rangeEnd,
      startRevision: bodyInt(msg, 'startRevision', ''),
      prevKv: bodyBool(msg, 'prevKv', ''),
      filters: { noPut: bodyBool(msg, 'noPut', ''), noDelete: bodyBool(msg, 'noDelete', '') },
    },
    progressNotify: bodyBool(msg, 'progressNotify', ''),
  }
}

export function createFromQuery(q: Query): CreateRequest {
  onlyFields(q, CREATE_FIELDS, '')
  const { key, rangeEnd } = keySelection(q, { prefix: queryBool(q, 'prefix'), fromKey: queryBool(q, 'fromKey') })
  return {
    ...cursorOption(queryString(q, 'cursor'), queryInt(q, 'startRevision')),
    spec: {
      key,
      rangeEnd,
      startRevision: queryInt(q, 'startRevision'),
      prevKv: queryBool(q, 'prevKv'),
      filters: { noPut: queryBool(q, 'noPut'), noDelete: queryBool(q, 'noDelete') },
    },
    progressNotify: queryBool(q, 'progressNotify'),
  }
}
