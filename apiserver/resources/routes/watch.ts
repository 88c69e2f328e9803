/**
 * The two transports of a resource watch (watch.ts):
 *
 * - HTTP: `GET ...?watch=true` answers 200 with a chunked stream, one JSON watch event per line
 *   (`{"type":"ADDED","object":{...}}`), as kube-apiserver does; it ends at timeoutSeconds, on a
 *   too-old ERROR, or when the server drains.
 * - WebSocket: the same URL with `Upgrade: websocket`; one text frame per event. Bad requests are
 *   answered as HTTP errors (a Status) before the upgrade.
 *
 * Named watches (`GET .../pods/foo?watch=true`) watch the collection with fieldSelector metadata.name.
 */
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { WebSocketServer } from 'ws'
import { asCaller, currentCaller } from '../../auth/guarded-log.js'
import type { Identity } from '../../auth/authorizer.js'
import { collectionPrefix } from '../paths.js'
import { statusOf } from '../status.js'
import { webSocketSender } from '../../watch/ws-sender.js'
import type { Query } from '../../params.js'
import type { ApiContext, ResourceRequest } from '../context.js'
import { both, parseFieldSelector } from '../selectors.js'
import { includeObjectOf } from '../table.js'
import { queryFlag } from '../query.js'
import { parseWatchOptions, ResourceWatch, type EventSink } from '../watch.js'

/** Is this a watch request (`watch` true in any of the spellings kube accepts)? */
export function isWatch(q: Query): boolean {
  return queryFlag(q, 'watch') === true
}

function newWatch(ctx: ApiContext, req: ResourceRequest, table: boolean, sink: EventSink): ResourceWatch {
  const options = parseWatchOptions(req.query, req.target.rt)
  if (req.name !== undefined) options.selector = both(options.selector, parseFieldSelector(`metadata.name=${req.name}`))
  const tableMode = table ? { include: includeObjectOf(req.query) } : undefined
  return new ResourceWatch(ctx.log, ctx.hub, req.target, options, sink, tableMode, ctx.bookmarkInterval)
}

/** A watch reads its whole collection (or namespace of it): READ on that prefix, checked before it starts. */
function authorizeWatch(ctx: ApiContext, req: ResourceRequest, who: Identity): void {
  ctx.authorizeRead(who, collectionPrefix(req.target.rt, req.target.namespace))
}

/**
 * Ends a running watch with an ERROR event (a Forbidden Status) once its caller may no longer read its
 * collection (deleted, password changed, permission revoked); returns the function that stops checking.
 */
function endWhenDenied(
  ctx: ApiContext,
  req: ResourceRequest,
  who: Identity,
  watch: ResourceWatch,
  send: (text: string) => void,
): () => void {
  return ctx.whileAuthorized(who, collectionPrefix(req.target.rt, req.target.namespace), (err) => {
    send(JSON.stringify({ type: 'ERROR', object: statusOf(err) }))
    watch.close()
  })
}

export async function serveHttpWatch(ctx: ApiContext, req: ResourceRequest, table: boolean, reply: FastifyReply): Promise<void> {
  const res = reply.raw
  let ended = false
  const who = currentCaller()
  authorizeWatch(ctx, req, who)
  const watch = newWatch(ctx, req, table, {
    send: (text) => (ended ? true : res.write(text + '\n')),
    end: () => {
      if (ended) return
      ended = true
      res.end()
    },
  })
  // Options were valid: from here on the response is a stream.
  reply.hijack()
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
  // Clients wait for the headers before they read events; a quiet watch must not leave them waiting.
  res.flushHeaders()
  res.on('drain', () => watch.drained())
  // 'close' on the response: it finished, or the connection went away (kept-alive sockets outlive it).
  const stopChecking = endWhenDenied(ctx, req, who, watch, (text) => void (ended || res.write(text + '\n')))
  res.on('close', () => {
    stopChecking()
    watch.close()
  })
  try {
    await watch.start()
  } catch (err) {
    res.write(JSON.stringify({ type: 'ERROR', object: statusOf(err) }) + '\n')
    watch.close()
  }
}

export interface WsWatchOptions {
  maxPayload: number
  heartbeatInterval: number
  maxBufferedBytes: number
}

/** Upgrade handler for resource watches over WebSocket; `resolve` turns the request into a watch request. */
export function webSocketWatchHandler(ctx: ApiContext, options: WsWatchOptions, resolve: (request: IncomingMessage) => ResourceRequest) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload, perMessageDeflate: false })
  return (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    let req: ResourceRequest
    let who: Identity
    try {
      req = resolve(request)
      parseWatchOptions(req.query, req.target.rt)
      who = ctx.callerOf(request)
      authorizeWatch(ctx, req, who)
    } catch (err) {
      const status = statusOf(err)
      const body = JSON.stringify(status)
      socket.end(
        `HTTP/1.1 ${status.code} ${status.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
      return
    }
    // The watch's reads (its initial list) are made as the caller: the callback runs synchronously.
    asCaller(who, () =>
      wss.handleUpgrade(request, socket, head, (ws) => {
        // The drain callback only fires after a send, so `watch` exists by then.
        const sender = webSocketSender(ws, options, () => watch.drained())
        const watch = newWatch(ctx, req, false, {
          send: (text) => sender.send(text),
          end: () => {
            if (ws.readyState === ws.OPEN) ws.close(1000)
          },
        })
        const stopChecking = endWhenDenied(ctx, req, who, watch, (text) => sender.send(text))
        ws.on('close', () => {
          stopChecking()
          sender.stop()
          watch.close()
        })
        ws.on('error', () => ws.terminate())
        watch.start().catch((err: unknown) => {
          sender.send(JSON.stringify({ type: 'ERROR', object: statusOf(err) }))
          watch.close()
        })
      }),
    )
  }
}
