/**
 * POST /v1/revert — put a key or range back to its state at an earlier revision, in one new transaction
 * (apiserver/revert.ts). Body: key selection (`key`|`keyBase64` with `prefix`, `fromKey` or `rangeEnd`),
 * `revision` (required), `dryRun` (only say what would change).
 * Answers `{ header, fromRevision, revision?, changes: [{ change, key, value?, previousValue? }] }`:
 * `change` is what happened since the target revision (`added`: deleted by the revert, `removed`: put back,
 * `modified`: its old value put back); `value` is the value the revert writes, `previousValue` the one it
 * replaces.
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { invalid } from '../../../log/errors.js'
import { putBytes, type JsonObject } from '../../codec.js'
import { asObject, bodyBool, bodyInt, KEY_SELECTION_PARAMS, keySelection, onlyFields, type Query } from '../../params.js'
import { revert } from '../../revert.js'

export function revertRoute(app: FastifyInstance, log: Log): void {
  app.post('/v1/revert', async (request) => {
    onlyFields(request.query as Query, [], '')
    const body = asObject(request.body, 'body')
    onlyFields(body, [...KEY_SELECTION_PARAMS, 'revision', 'dryRun'], '')
    const { key, rangeEnd } = keySelection(body, { prefix: bodyBool(body, 'prefix', ''), fromKey: bodyBool(body, 'fromKey', '') })
    const revision = bodyInt(body, 'revision', '')
    if (revision === undefined) throw invalid('revision', 'is required')
    const r = await revert(log, key, rangeEnd, revision, bodyBool(body, 'dryRun', ''))
    return {
      header: { revision: r.revision ?? log.revision },
      fromRevision: r.fromRevision,
      ...(r.revision !== undefined ? { revision: r.revision } : {}),
      changes: r.changes.map((c) => {
        const out: JsonObject = { change: c.change }
        putBytes(out, 'key', c.key)
        if (c.then) putBytes(out, 'value', c.then.value)
        if (c.now) putBytes(out, 'previousValue', c.now.value)
        return out
      }),
    }
  })
}
