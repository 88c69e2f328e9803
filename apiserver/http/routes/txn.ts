/** POST /v1/txn — an etcd-style transaction (shape in txn-body.ts and docs/api.md). */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { onlyFields, type Query } from '../../params.js'
import { txnFromJson, txnResultToJson } from '../txn-body.js'

export function txnRoute(app: FastifyInstance, log: Log, maxTxnDepth: number): void {
  app.post('/v1/txn', async (request) => {
    onlyFields(request.query as Query, [], '')
    const txn = txnFromJson(request.body, maxTxnDepth)
    return txnResultToJson(await log.txn(txn), txn)
  })
}
