/**
 * WebSocket watch: `GET /v1/watch` with `Upgrade: websocket`, many watches per connection (messages.ts).
 *
 * - maxPayload (wsMaxPayload) bounds a client frame; permessage-deflate stays off.
 * - Heartbeat and backpressure (wsHeartbeatInterval, wsMaxBufferedBytes): ws-sender.ts. Paused
 *   watches resume once the buffer drains and catch up from the log.
 * - Bad input (malformed JSON, binary frames, unknown ops, bad fields) gets an `error` message with a
 *   code; the connection and its other watches carry on.
 */
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, type WebSocket } from 'ws'
import { invalid, isKvlogError, KvlogError } from '../../log/errors.js'
import type { Authorizer, Identity } from '../auth/authorizer.js'
import { asCaller } from '../auth/guarded-log.js'
import type { JsonObject } from '../codec.js'
import { ERROR_STATUS } from '../errors.js'
import { httpCaller, TOKEN_PROTOCOL_PREFIX } from '../http-caller.js'
import { asObject, bodyInt, onlyFields } from '../params.js'
import { errorMessage } from './messages.js'
import { createFromJson } from './request.js'
import type { WatchService } from './service.js'
import { JSON_MESSAGES, type WatchStream } from './stream.js'
import { onUpgrade } from './upgrade.js'
import { webSocketSender } from './ws-sender.js'

export interface WebSocketOptions {
  maxPayload: number
  heartbeatInterval: number
  maxBufferedBytes: number
}

export const WATCH_PATH = '/v1/watch'
/** The subprotocol the server answers with when the client offers it (next to a token subprotocol). */
export const WATCH_PROTOCOL = 'kvlog.watch'

/** How long a closing connection may take to finish the close handshake before it is cut. */
const CLOSE_GRACE_MS = 1000

export function attachWebSocketWatch(
  server: Server,
  service: WatchService,
  auth: Authorizer,
  options: WebSocketOptions,
): { close(): Promise<void> } {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayload,
    perMessageDeflate: false,
    // Never answer with the token subprotocol: that would send the credential back in the response.
    handleProtocols: (offered) =>
      offered.has(WATCH_PROTOCOL) ? WATCH_PROTOCOL : ([...offered].find((p) => !p.startsWith(TOKEN_PROTOCOL_PREFIX)) ?? false),
  })
  onUpgrade(
    server,
    (path) => path === WATCH_PATH,
    (request, socket, head) => {
      const who = upgradeCaller(auth, request, socket)
      // Each create identifies the caller again from the upgrade's credentials: a token that expired or
      // was revoked, or a JWT older than the auth state, opens no new watch on a connection opened with it.
      const caller = () => httpCaller(auth, request)
      if (who !== undefined)
        asCaller(who, () => wss.handleUpgrade(request, socket, head, (ws) => serveConnection(ws, service, options, caller)))
    },
  )
  return {
    /** Closes every connection with 1001; a peer that stopped reading is cut after a short grace period. */
    async close() {
      const open = [...wss.clients]
      await Promise.all(
        open.map(
          (ws) =>
            new Promise<void>((resolve) => {
              if (ws.readyState === ws.CLOSED) return resolve()
              const cut = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS)
              ws.once('close', () => {
                clearTimeout(cut)
                resolve()
              })
              ws.close(1001, 'server shutting down')
            }),
        ),
      )
      wss.close()
    },
  }
}

/**
 * The caller of a WebSocket upgrade (Authorization: Bearer, a token subprotocol, or the client certificate), or undefined
 * after answering the upgrade with 401 and the error body, as the native API answers a bad token.
 */
export function upgradeCaller(auth: Authorizer, request: IncomingMessage, socket: Duplex): Identity | undefined {
  try {
    return httpCaller(auth, request)
  } catch (err) {
    const e = isKvlogError(err) ? err : new KvlogError('INTERNAL', String(err))
    const body = JSON.stringify({ error: { code: e.code, message: e.message } })
    const status = ERROR_STATUS[e.code].http
    socket.end(
      `HTTP/1.1 ${status} Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
    return undefined
  }
}

function serveConnection(ws: WebSocket, service: WatchService, options: WebSocketOptions, caller: () => Identity): void {
  // Upgraded while the server drains: turn it away the way every open connection is being closed.
  if (service.draining) {
    ws.close(1001, 'server shutting down')
    return
  }
  // The drain callback only fires after a send, so `stream` exists by then.
  const sender = webSocketSender(ws, options, () => stream.drained())
  const stream = service.open({ send: (text) => sender.send(text) }, { messages: JSON_MESSAGES, firstId: 1, caller })
  ws.on('message', (data, isBinary) => handleMessage(ws, stream, data as Buffer, isBinary))
  ws.on('close', () => {
    sender.stop()
    service.release(stream)
  })
  ws.on('error', () => ws.terminate())
}

function handleMessage(ws: WebSocket, stream: WatchStream, data: Buffer, isBinary: boolean): void {
  let id: number | undefined
  try {
    if (isBinary) throw invalid('frame', 'binary frames are not supported; send JSON text')
    let parsed: unknown
    try {
      parsed = JSON.parse(data.toString('utf8'))
    } catch {
      throw invalid('message', 'is not valid JSON')
    }
    const msg: JsonObject = asObject(parsed, 'message')
    id = typeof msg.id === 'number' ? msg.id : undefined
    switch (msg.op) {
      case 'create':
        stream.create(createFromJson(msg))
        break
      case 'cancel': {
        onlyFields(msg, ['op', 'id'], '')
        const target = bodyInt(msg, 'id', '')
        if (target === undefined) throw invalid('id', 'is required to cancel')
        stream.cancel(target)
        break
      }
      case 'progress':
        onlyFields(msg, ['op'], '')
        stream.requestProgress()
        break
      default:
        throw invalid('op', 'must be create, cancel or progress')
    }
  } catch (err) {
    const e = isKvlogError(err) ? err : new KvlogError('INTERNAL', 'internal error')
    if (ws.readyState === ws.OPEN) ws.send(errorMessage(e, id))
  }
}
