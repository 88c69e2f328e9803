/** POST /v1/txn — an etcd-style transaction (shape in txn-body.ts and docs/api.md). */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { txnFromJson, txnResultToJson } from '../txn-body.js'

export function txnRoute(app: FastifyInstance, log: Log): void {
  app.post('/v1/txn', async (request) => txnResultToJson(await log.txn(txnFromJson(request.body))))
}
