/**
 * GET /v1/kv — read a key or a range, at the latest or a given revision, with paging.
 *
 * Query: key|keyBase64, [prefix | fromKey | rangeEnd|rangeEndBase64], revision, limit, continue, keysOnly,
 * countOnly, sortOrder, sortTarget, min/maxModRevision, min/maxCreateRevision.
 * Paging: when `more` is true for a key-ordered read, the response carries `continue`; pass it back with
 * the same key selection to get the next page from the same revision.
 * A range in key order without revision filters is streamed (range-steps.ts, streamed-body.ts): the
 * same JSON, written a chunk of about `chunkBytes` at a time as it is read.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import type { RangeOptions, SortOrder, SortTarget } from '../../../log/types.js'
import { kvJsonText, kvToJson } from '../../codec.js'
import { decodeContinue, encodeContinue } from '../../paging.js'
import { rangeSteps, type RangeStep } from '../../range-steps.js'
import { streamedBody } from '../../streamed-body.js'
import { KEY_SELECTION_PARAMS, keySelection, onlyFields, queryBool, queryEnum, queryInt, queryString, type Query } from '../../params.js'

const SORT_ORDERS: readonly SortOrder[] = ['NONE', 'ASCEND', 'DESCEND']
const SORT_TARGETS: readonly SortTarget[] = ['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE']
const PARAMS = [
  ...KEY_SELECTION_PARAMS,
  'revision',
  'limit',
  'continue',
  'keysOnly',
  'countOnly',
  'sortOrder',
  'sortTarget',
  'minModRevision',
  'maxModRevision',
  'minCreateRevision',
  'maxCreateRevision',
]

export function kvRangeRoute(app: FastifyInstance, log: Log, chunkBytes: number): void {
  app.get('/v1/kv', async (request, reply) => {
    const q = request.query as Query
    onlyFields(q, PARAMS, '')
    const { key, rangeEnd } = keySelection(q, { prefix: queryBool(q, 'prefix'), fromKey: queryBool(q, 'fromKey') })
    const options: RangeOptions = {
      rangeEnd,
      revision: queryInt(q, 'revision'),
      limit: queryInt(q, 'limit'),
      keysOnly: queryBool(q, 'keysOnly'),
      countOnly: queryBool(q, 'countOnly'),
      sortOrder: queryEnum(q, 'sortOrder', SORT_ORDERS),
      sortTarget: queryEnum(q, 'sortTarget', SORT_TARGETS),
      minModRevision: queryInt(q, 'minModRevision'),
      maxModRevision: queryInt(q, 'maxModRevision'),
      minCreateRevision: queryInt(q, 'minCreateRevision'),
      maxCreateRevision: queryInt(q, 'maxCreateRevision'),
    }
    let start = key
    const token = queryString(q, 'continue')
    if (token !== undefined) {
      if (options.revision !== undefined) throw invalid('revision', 'cannot be combined with continue (the token holds the revision)')
      const page = decodeContinue(token, key, rangeEnd)
      start = page.start
      options.revision = page.revision
    }
    if (streamable(options, rangeEnd)) return streamRange(reply, log, key, start, rangeEnd!, options, chunkBytes)
    const r = await log.range(start, options)
    const keyOrdered = (options.sortOrder ?? 'NONE') !== 'DESCEND' && (options.sortTarget ?? 'KEY') === 'KEY' && rangeEnd !== undefined
    const body: Record<string, unknown> = {
      header: { revision: r.revision },
      kvs: r.kvs.map((kv) => kvToJson(kv, options.keysOnly)),
      more: r.more,
      count: r.count,
    }
    if (r.more && keyOrdered && r.kvs.length > 0) {
      body.continue = encodeContinue(r.revision, r.kvs[r.kvs.length - 1].key, key, rangeEnd)
    }
    return body
  })
}

/** A range read in key order with nothing to sort or filter: its steps can be written as they are read. */
function streamable(o: RangeOptions, rangeEnd: Buffer | undefined): boolean {
  const keyOrder = (o.sortOrder ?? 'NONE') !== 'DESCEND' && (o.sortTarget ?? 'KEY') === 'KEY'
  const filtered = o.minModRevision || o.maxModRevision || o.minCreateRevision || o.maxCreateRevision
  return rangeEnd !== undefined && keyOrder && !filtered && o.countOnly !== true
}

/** The range's JSON (the same bytes as the unstreamed answer) written a step at a time. */
async function streamRange(
  reply: FastifyReply,
  log: Log,
  key: Buffer,
  start: Buffer,
  rangeEnd: Buffer,
  options: RangeOptions,
  chunkBytes: number,
): Promise<FastifyReply> {
  const body = streamedBody(
    (async function* () {
      let text = ''
      let comma = ''
      const steps = rangeSteps(log, start, options, chunkBytes, (k, v, c, m, ver, lease) => {
        text += comma + kvJsonText(k, v, c, m, ver, lease, options.keysOnly)
        comma = ','
        return true
      })
      let end: RangeStep | undefined
      for await (const step of steps) {
        const head = end === undefined ? `{"header":{"revision":${step.revision}},"kvs":[` : ''
        end = step
        yield head + text
        text = ''
      }
      const { revision, count, taken } = end!
      const more = count > taken
      let tail = `],"more":${more},"count":${count}`
      if (more && taken > 0) tail += `,"continue":${JSON.stringify(encodeContinue(revision, end!.lastKey(), key, rangeEnd))}`
      yield `${tail}}`
    })(),
  )
  return reply.type('application/json; charset=utf-8').send(await body)
}
