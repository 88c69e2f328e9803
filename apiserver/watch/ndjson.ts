/**
 * NDJSON watch: `GET /v1/watch?key=...&prefix=true&startRevision=N&prevKv=true` streams one JSON message
 * per line (the same messages as the WebSocket, messages.ts), so `curl -N` works. One watch per
 * response; it ends after a `canceled` line (e.g. COMPACTED with the floor) or when the server drains.
 * Flow control through the socket: a write that returns false pauses the watch until 'drain'.
 */
import type { FastifyInstance } from 'fastify'
import type { Query } from '../params.js'
import { errorMessage } from './messages.js'
import { createFromQuery } from './request.js'
import type { WatchService } from './service.js'
import { WATCH_PATH } from './websocket.js'
import { isKvlogError, KvlogError } from '../../log/errors.js'

export function ndjsonWatchRoute(app: FastifyInstance, service: WatchService): void {
  app.get(WATCH_PATH, async (request, reply) => {
    const create = createFromQuery(request.query as Query) // bad input: a normal JSON error response
    reply.hijack()
    const res = reply.raw
    res.writeHead(200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    })
    let ended = false
    const stream = service.open({
      send: (text) => (ended ? true : res.write(text + '\n')),
      end: () => {
        if (ended) return
        ended = true
        res.end()
      },
    })
    res.on('drain', () => stream.drained())
    request.raw.socket.on('close', () => service.release(stream))
    try {
      stream.create(create)
    } catch (err) {
      const e = isKvlogError(err) ? err : new KvlogError('INTERNAL', 'internal error')
      res.write(errorMessage(e) + '\n')
      service.release(stream)
    }
  })
}
