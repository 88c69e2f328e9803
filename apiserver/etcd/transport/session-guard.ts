/**
 * What kvlog adds to each HTTP/2 connection of the etcd client port beyond what Node's http2 limits:
 *
 * - keepalive (etcd's --grpc-keepalive-interval/-timeout): the server pings every `intervalMs`; a
 *   connection whose ping is not answered within `timeoutMs` is destroyed;
 * - ping policy (etcd's --grpc-keepalive-min-time, as grpc-go enforces it): a client ping that comes less
 *   than `minTimeMs` after the previous one is a strike; the third strike ends the connection with GOAWAY
 *   ENHANCE_YOUR_CALM and "too_many_pings". A new stream, or data sent by the server since the previous
 *   ping, clears the strikes (grpc-go's clients ping while they receive, to size their windows);
 * - idle timeout: a connection with no open stream for `idleTimeoutMs` is closed with GOAWAY (gRPC's
 *   max connection idle), so connections opened and left cannot pile up.
 */
import { constants, type ServerHttp2Session } from 'node:http2'

export interface SessionGuardOptions {
  keepaliveIntervalMs: number
  keepaliveTimeoutMs: number
  keepaliveMinTimeMs: number
  idleTimeoutMs: number
}

/** grpc-go's maxPingStrikes: pings tolerated below the minimum interval. */
const MAX_PING_STRIKES = 2
const PING_FRAME_BYTES = 17

export function guardSession(session: ServerHttp2Session, options: SessionGuardOptions): void {
  const { keepaliveIntervalMs, keepaliveTimeoutMs, keepaliveMinTimeMs, idleTimeoutMs } = options
  let open = 0
  // One timer per connection, not one per stream: the last stream closing only notes the time, and
  // the timer, when it fires, closes the connection if it has been without streams long enough, else
  // waits for the rest of the time.
  let idleSince = performance.now()
  let idle: NodeJS.Timeout | undefined
  const checkIdle = () => {
    idle = undefined
    if (session.closed || session.destroyed) return
    if (open > 0) return armIdle(idleTimeoutMs)
    const left = idleSince + idleTimeoutMs - performance.now()
    if (left <= 0) session.close()
    else armIdle(left)
  }
  const armIdle = (ms: number) => {
    if (idleTimeoutMs > 0) idle = setTimeout(checkIdle, Math.max(1, Math.ceil(ms))).unref()
  }
  armIdle(idleTimeoutMs)

  let lastPing = -Infinity
  let strikes = 0
  const streamClosed = () => {
    if (--open === 0) idleSince = performance.now()
  }
  session.on('stream', (stream) => {
    open++
    strikes = 0
    stream.on('close', streamClosed)
  })
  let writtenAtPing = 0
  session.on('ping', () => {
    const now = performance.now()
    const early = now - lastPing < keepaliveMinTimeMs
    lastPing = now
    // As grpc-go, a client pinging while the server sends (its flow-control estimates) is not abusing:
    // more written since the previous ping than that ping's acknowledgement clears the strikes.
    const written = session.socket?.bytesWritten ?? 0
    if (written - writtenAtPing > 2 * PING_FRAME_BYTES) strikes = 0
    writtenAtPing = written
    if (early && ++strikes > MAX_PING_STRIKES) {
      session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, Buffer.from('too_many_pings'))
      session.destroy()
    }
  })

  let keepalive: NodeJS.Timeout | undefined
  if (keepaliveIntervalMs > 0) {
    keepalive = setInterval(() => {
      if (session.destroyed) return
      const noAnswer = setTimeout(() => session.destroy(), keepaliveTimeoutMs).unref()
      try {
        session.ping(() => clearTimeout(noAnswer))
      } catch {
        // Too many pings outstanding: the client is not answering; the timer above ends it.
      }
    }, keepaliveIntervalMs).unref()
  }
  session.once('close', () => {
    clearTimeout(idle)
    clearInterval(keepalive)
  })
}
