/**
 * The sending side of a watch WebSocket, shared by the native watch and the resource API's watch:
 *
 * - cork the socket until the end of the tick, so the frames one commit produces leave in one writev;
 * - backpressure: send() returns false once bufferedAmount exceeds maxBufferedBytes; a timer then
 *   watches the buffer drain below half of that and calls `drained` (paused watches resume);
 * - heartbeat: a ping every `heartbeatInterval`; a peer that did not answer the previous one is
 *   terminated (its watches end; clients resume from their last revision).
 */
import type { Socket } from 'node:net'
import type { WebSocket } from 'ws'

export interface WebSocketSender {
  send(text: string): boolean
  /** Stops the timers (call on close). */
  stop(): void
}

export function webSocketSender(
  ws: WebSocket,
  options: { maxBufferedBytes: number; heartbeatInterval: number },
  drained: () => void,
): WebSocketSender {
  // ws does not expose its socket publicly; this is its documented field.
  const socket = (ws as unknown as { _socket: Socket })._socket
  let corked = false
  const uncork = () => {
    corked = false
    socket.uncork()
  }
  let drainTimer: NodeJS.Timeout | undefined
  const watchDrain = () => {
    drainTimer ??= setInterval(() => {
      if (ws.bufferedAmount > options.maxBufferedBytes / 2) return
      clearInterval(drainTimer)
      drainTimer = undefined
      drained()
    }, 20)
  }
  let alive = true
  ws.on('pong', () => (alive = true))
  const heartbeat = setInterval(() => {
    if (!alive) {
      ws.terminate()
      return
    }
    alive = false
    ws.ping()
  }, options.heartbeatInterval)
  return {
    send(text) {
      if (ws.readyState !== ws.OPEN) return true
      if (!corked) {
        corked = true
        socket.cork()
        process.nextTick(uncork)
      }
      ws.send(text)
      const ok = ws.bufferedAmount <= options.maxBufferedBytes
      if (!ok) watchDrain()
      return ok
    },
    stop() {
      clearInterval(heartbeat)
      if (drainTimer) clearInterval(drainTimer)
    },
  }
}
