/**
 * kvlog's HTTP/2 server connection (RFC 7540), for the etcd client port: one per socket that opened with
 * the client preface. It is the part of HTTP/2 a gRPC and gateway server needs, on the socket itself:
 * frames are read straight from the socket's chunks and everything one tick produces leaves in one socket
 * write (a unary answer's HEADERS, DATA and trailers together).
 *
 * - SETTINGS: the client's are applied (initial window, largest frame, header table size) and
 *   acknowledged; kvlog announces a 1 MiB stream window and raises the connection window to 16 MiB, and
 *   gives both back as handlers consume the data.
 * - Flow control both ways; a client's window going over 2^31-1 is FLOW_CONTROL_ERROR.
 * - HPACK with the client's dynamic table; CONTINUATION; padding; PRIORITY is read and ignored; a client
 *   may not push.
 * - PING is answered; with keepalive on, kvlog pings every `keepaliveIntervalMs` and drops a connection
 *   that does not answer within `keepaliveTimeoutMs` (etcd's --grpc-keepalive-interval/-timeout).
 * - A protocol error ends the connection with GOAWAY and the error code; a stream's error resets only it.
 * - `goAway()` refuses new streams (REFUSED_STREAM) and closes the socket once open streams end.
 */
import type { IncomingHttpHeaders } from 'node:http2'
import type { Socket } from 'node:net'
import {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_BYTES,
  DEFAULT_WINDOW_BYTES,
  FLAG,
  FRAME,
  FRAME_HEADER_BYTES,
  H2_ERROR,
  MAX_WINDOW_BYTES,
  SETTING,
  frame,
  uint32Frame,
} from './frames.js'
import { HpackDecoder } from './hpack.js'
import { HpackError } from './hpack-error.js'
import { H2Stream, type StreamOwner } from './stream.js'

/** The window kvlog announces for each stream, and the one it keeps for the whole connection. */
const STREAM_RECEIVE_WINDOW = 1 << 20
const CONNECTION_RECEIVE_WINDOW = 1 << 24
/** A header block larger than this ends the connection (its HPACK state must be decoded in full). */
const MAX_HEADER_BLOCK_BYTES = 1 << 20
/** Unsent socket bytes beyond which DATA waits for 'drain' (control frames and headers still go). */
const SOCKET_HIGH_WATER = 1 << 20
/** Output of one tick up to this size is joined into one buffer; larger output is written as a vector. */
const JOIN_BYTES = 64 * 1024

export interface H2ConnectionOptions {
  keepaliveIntervalMs: number
  keepaliveTimeoutMs: number
  /** A new stream, its request headers decoded. Listeners attached now see all of its data. */
  onStream(stream: H2Stream, headers: IncomingHttpHeaders): void
}

class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

export class H2Connection implements StreamOwner {
  sendWindow = DEFAULT_WINDOW_BYTES
  peerMaxFrameBytes = DEFAULT_MAX_FRAME_BYTES
  private peerInitialWindow = DEFAULT_WINDOW_BYTES
  private readonly streams = new Map<number, H2Stream>()
  private readonly waiting = new Set<H2Stream>()
  /** Streams written to during this tick: framed just before the tick's output is written. */
  private readonly written = new Set<H2Stream>()
  private readonly decoder = new HpackDecoder()
  private input: Buffer | undefined
  private prefaceSeen = false
  private lastStreamId = 0
  private closing = false
  private destroyed = false
  /** A header block spread over HEADERS and CONTINUATION frames. */
  private continued: { streamId: number; flags: number; parts: Buffer[]; bytes: number } | undefined
  private receivedUnacked = 0
  private readonly out: Buffer[] = []
  private outBytes = 0
  /** Write callbacks of the bytes in `out`: they run when the socket has written them. */
  private afterOut: Array<(err?: Error | null) => void> = []
  private flushQueued = false
  private keepaliveTimer: NodeJS.Timeout | undefined
  private pingTimeout: NodeJS.Timeout | undefined
  private readonly closeListeners: Array<() => void> = []

  constructor(
    readonly socket: Socket,
    private readonly options: H2ConnectionOptions,
  ) {
    const settings = Buffer.alloc(12)
    settings.writeUInt16BE(SETTING.MAX_CONCURRENT_STREAMS, 0)
    settings.writeUInt32BE(MAX_WINDOW_BYTES, 2)
    settings.writeUInt16BE(SETTING.INITIAL_WINDOW_SIZE, 6)
    settings.writeUInt32BE(STREAM_RECEIVE_WINDOW, 8)
    this.send(frame(FRAME.SETTINGS, 0, 0, settings))
    this.send(uint32Frame(FRAME.WINDOW_UPDATE, 0, CONNECTION_RECEIVE_WINDOW - DEFAULT_WINDOW_BYTES))
    socket.on('data', (chunk: Buffer) => this.receive(chunk))
    socket.on('drain', () => this.flushWaiting())
    socket.on('close', () => this.closed())
    socket.on('error', () => undefined)
    socket.on('end', () => socket.end())
    this.startKeepalive()
  }

  get socketBusy(): boolean {
    return this.socket.writableLength + this.outBytes > SOCKET_HIGH_WATER
  }

  onClose(fn: () => void): void {
    this.closeListeners.push(fn)
  }

  send(bytes: Buffer): void {
    if (this.destroyed) return
    this.out.push(bytes)
    this.outBytes += bytes.length
    this.scheduleFlush()
  }

  flushSoon(stream: H2Stream): void {
    if (this.destroyed) return
    this.written.add(stream)
    this.scheduleFlush()
  }

  private scheduleFlush(): void {
    if (!this.flushQueued) {
      this.flushQueued = true
      process.nextTick(() => this.flushOut())
    }
  }

  afterWrite(fn: (err?: Error | null) => void): void {
    if (this.destroyed) process.nextTick(fn, new Error('connection closed'))
    else this.afterOut.push(fn)
  }

  waitForRoom(stream: H2Stream): void {
    this.waiting.add(stream)
  }

  released(stream: H2Stream): void {
    this.streams.delete(stream.id)
    this.waiting.delete(stream)
    this.written.delete(stream)
    if (this.closing && this.streams.size === 0) this.endSocket()
  }

  /** Refuses new streams and closes the connection once the open ones end (GOAWAY, NO_ERROR). */
  goAway(): void {
    if (this.closing || this.destroyed) return
    this.closing = true
    this.sendGoAway(H2_ERROR.NO_ERROR)
    if (this.streams.size === 0) this.endSocket()
  }

  destroy(): void {
    this.socket.destroy()
  }

  // ---- input ----

  private receive(chunk: Buffer): void {
    if (this.destroyed) return
    let buf = this.input === undefined ? chunk : Buffer.concat([this.input, chunk])
    let at = 0
    try {
      if (!this.prefaceSeen) {
        if (buf.length < CLIENT_PREFACE.length) {
          this.input = buf
          return
        }
        if (!buf.subarray(0, CLIENT_PREFACE.length).equals(CLIENT_PREFACE))
          throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'bad preface')
        this.prefaceSeen = true
        at = CLIENT_PREFACE.length
      }
      while (buf.length - at >= FRAME_HEADER_BYTES) {
        const length = (buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!
        if (length > DEFAULT_MAX_FRAME_BYTES) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'frame over SETTINGS_MAX_FRAME_SIZE')
        if (buf.length - at - FRAME_HEADER_BYTES < length) break
        const type = buf[at + 3]!
        const flags = buf[at + 4]!
        const streamId = buf.readUInt32BE(at + 5) & 0x7fffffff
        const payload = buf.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length)
        at += FRAME_HEADER_BYTES + length
        this.frame(type, flags, streamId, payload)
        if (this.destroyed) return
      }
    } catch (err) {
      const code =
        err instanceof ConnectionError ? err.code : err instanceof HpackError ? H2_ERROR.COMPRESSION_ERROR : H2_ERROR.INTERNAL_ERROR
      this.fail(code)
      return
    }
    buf = buf.subarray(at)
    this.input = buf.length > 0 ? buf : undefined
  }

  private frame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.continued !== undefined && type !== FRAME.CONTINUATION) {
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'expected CONTINUATION')
    }
    switch (type) {
      case FRAME.DATA:
        return this.data(flags, streamId, payload)
      case FRAME.HEADERS:
        return this.headers(flags, streamId, payload)
      case FRAME.CONTINUATION:
        return this.continuation(flags, streamId, payload)
      case FRAME.PRIORITY:
        if (streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'PRIORITY on stream 0')
        return
      case FRAME.RST_STREAM:
        if (streamId === 0 || payload.length !== 4) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'bad RST_STREAM')
        this.streams.get(streamId)?.close()
        return
      case FRAME.SETTINGS:
        return this.settings(flags, streamId, payload)
      case FRAME.PUSH_PROMISE:
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a client may not push')
      case FRAME.PING:
        return this.ping(flags, streamId, payload)
      case FRAME.GOAWAY:
        if (streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'GOAWAY on a stream')
        if (this.streams.size === 0) this.endSocket()
        return
      case FRAME.WINDOW_UPDATE:
        return this.windowUpdate(streamId, payload)
      default:
        return // unknown frame types are ignored (RFC 7540 4.1)
    }
  }

  private data(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'DATA on stream 0')
    if (streamId > this.lastStreamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'DATA on an idle stream')
    // Flow control counts the whole payload, padding included; the connection's window is given back
    // even for a stream already gone.
    this.receivedUnacked += payload.length
    if (this.receivedUnacked >= CONNECTION_RECEIVE_WINDOW / 2) {
      this.send(uint32Frame(FRAME.WINDOW_UPDATE, 0, this.receivedUnacked))
      this.receivedUnacked = 0
    }
    const stream = this.streams.get(streamId)
    if (stream === undefined) return
    if (stream.remoteEnded) return stream.reset(H2_ERROR.STREAM_CLOSED)
    const body = unpad(flags, payload)
    stream.receivedUnacked += payload.length
    if (stream.receivedUnacked >= STREAM_RECEIVE_WINDOW / 2 && (flags & FLAG.END_STREAM) === 0) {
      this.send(uint32Frame(FRAME.WINDOW_UPDATE, streamId, stream.receivedUnacked))
      stream.receivedUnacked = 0
    }
    stream.receive(body)
    if (flags & FLAG.END_STREAM) stream.receiveEnd()
  }

  private headers(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0 || streamId % 2 === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'HEADERS on a server stream id')
    let block = unpad(flags, payload)
    if (flags & FLAG.PRIORITY) {
      if (block.length < 5) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'short PRIORITY fields')
      block = block.subarray(5)
    }
    if (flags & FLAG.END_HEADERS) return this.headerBlock(streamId, flags, block)
    this.continued = { streamId, flags, parts: [Buffer.from(block)], bytes: block.length }
  }

  private continuation(flags: number, streamId: number, payload: Buffer): void {
    const c = this.continued
    if (c === undefined || c.streamId !== streamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'unexpected CONTINUATION')
    c.parts.push(Buffer.from(payload))
    c.bytes += payload.length
    if (c.bytes > MAX_HEADER_BLOCK_BYTES) throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, 'header block too large')
    if ((flags & FLAG.END_HEADERS) === 0) return
    this.continued = undefined
    this.headerBlock(streamId, c.flags, Buffer.concat(c.parts))
  }

  private headerBlock(streamId: number, flags: number, block: Buffer): void {
    // Decoded even for a stream that is refused or gone: the dynamic table must stay in step.
    const headers = this.decoder.decode(block)
    const endStream = (flags & FLAG.END_STREAM) !== 0
    const existing = this.streams.get(streamId)
    if (existing !== undefined) {
      // Trailers from the client: they must end the stream; gRPC sends none, so they are dropped.
      if (!endStream || existing.remoteEnded) return existing.reset(H2_ERROR.PROTOCOL_ERROR)
      return existing.receiveEnd()
    }
    if (streamId <= this.lastStreamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'HEADERS on a closed stream')
    this.lastStreamId = streamId
    if (this.closing) {
      this.send(uint32Frame(FRAME.RST_STREAM, streamId, H2_ERROR.REFUSED_STREAM))
      return
    }
    const stream = new H2Stream(streamId, headers, this, this.peerInitialWindow)
    this.streams.set(streamId, stream)
    this.options.onStream(stream, headers)
    if (endStream) stream.receiveEnd()
  }

  private settings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'SETTINGS on a stream')
    if (flags & FLAG.ACK) {
      if (payload.length !== 0) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload')
      return
    }
    if (payload.length % 6 !== 0) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'SETTINGS length')
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at)
      const value = payload.readUInt32BE(at + 2)
      if (id === SETTING.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW_BYTES) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'initial window too large')
        const delta = value - this.peerInitialWindow
        this.peerInitialWindow = value
        for (const stream of this.streams.values()) stream.sendWindow += delta
      } else if (id === SETTING.MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME_BYTES || value > 16_777_215) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'bad max frame size')
        this.peerMaxFrameBytes = value
      } else if (id === SETTING.ENABLE_PUSH && value > 1) {
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'bad ENABLE_PUSH')
      }
      // HEADER_TABLE_SIZE: kvlog's encoder uses no dynamic table, so any size suits it. The rest do not
      // concern a server that never pushes.
    }
    this.send(frame(FRAME.SETTINGS, FLAG.ACK, 0))
    this.flushWaiting()
  }

  private ping(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'PING on a stream')
    if (payload.length !== 8) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'PING length')
    if (flags & FLAG.ACK) {
      clearTimeout(this.pingTimeout)
      this.pingTimeout = undefined
      return
    }
    this.send(frame(FRAME.PING, FLAG.ACK, 0, payload))
  }

  private windowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'WINDOW_UPDATE length')
    const increment = payload.readUInt32BE(0) & 0x7fffffff
    if (streamId === 0) {
      if (increment === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0')
      this.sendWindow += increment
      if (this.sendWindow > MAX_WINDOW_BYTES) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'connection window over 2^31-1')
      return this.flushWaiting()
    }
    const stream = this.streams.get(streamId)
    if (stream === undefined) return
    if (increment === 0) return stream.reset(H2_ERROR.PROTOCOL_ERROR)
    stream.sendWindow += increment
    if (stream.sendWindow > MAX_WINDOW_BYTES) return stream.reset(H2_ERROR.FLOW_CONTROL_ERROR)
    this.waiting.delete(stream)
    stream.flush()
  }

  // ---- output ----

  /** Streams waiting for room try again, oldest first; those still without room wait on. */
  private flushWaiting(): void {
    if (this.waiting.size === 0) return
    const streams = [...this.waiting]
    this.waiting.clear()
    for (const stream of streams) stream.flush()
  }

  private flushOut(): void {
    this.flushQueued = false
    if (this.destroyed) return
    if (this.written.size > 0) {
      const streams = [...this.written]
      this.written.clear()
      for (const stream of streams) if (!this.waiting.has(stream)) stream.flush()
    }
    if (this.out.length === 0) return
    const parts = this.out.splice(0)
    const bytes = this.outBytes
    this.outBytes = 0
    const callbacks = this.afterOut
    this.afterOut = []
    const written =
      callbacks.length === 0
        ? undefined
        : (err?: Error | null) => {
            for (const fn of callbacks) fn(err)
          }
    if (parts.length === 1) this.socket.write(parts[0]!, written)
    else if (bytes <= JOIN_BYTES) this.socket.write(Buffer.concat(parts, bytes), written)
    else {
      this.socket.cork()
      for (let i = 0; i < parts.length; i++) this.socket.write(parts[i]!, i === parts.length - 1 ? written : undefined)
      this.socket.uncork()
    }
    // Streams that waited because this output was large: the socket took it without filling its buffer
    // (so it will not emit 'drain'), and they may go on.
    if (this.waiting.size > 0 && !this.socketBusy) process.nextTick(() => this.flushWaiting())
  }

  /** Sends what is queued, then closes kvlog's side of the socket. */
  private endSocket(): void {
    this.flushOut()
    this.socket.end()
  }

  private sendGoAway(code: number): void {
    const payload = Buffer.alloc(8)
    payload.writeUInt32BE(this.lastStreamId, 0)
    payload.writeUInt32BE(code, 4)
    this.send(frame(FRAME.GOAWAY, 0, 0, payload))
  }

  /** A connection error: GOAWAY with its code, then the socket closes. */
  private fail(code: number): void {
    this.sendGoAway(code)
    this.closing = true
    this.endSocket()
    setTimeout(() => this.socket.destroy(), 1000).unref()
    this.closed()
  }

  private closed(): void {
    if (this.destroyed) return
    this.destroyed = true
    clearInterval(this.keepaliveTimer)
    clearTimeout(this.pingTimeout)
    for (const stream of [...this.streams.values()]) stream.close()
    this.waiting.clear()
    this.written.clear()
    for (const fn of this.afterOut.splice(0)) process.nextTick(fn, new Error('connection closed'))
    for (const fn of this.closeListeners.splice(0)) fn()
  }

  private startKeepalive(): void {
    const { keepaliveIntervalMs, keepaliveTimeoutMs } = this.options
    if (keepaliveIntervalMs <= 0) return
    this.keepaliveTimer = setInterval(() => {
      if (this.pingTimeout !== undefined || this.destroyed) return
      this.pingTimeout = setTimeout(() => this.socket.destroy(), keepaliveTimeoutMs)
      this.pingTimeout.unref()
      this.send(frame(FRAME.PING, 0, 0, Buffer.alloc(8)))
    }, keepaliveIntervalMs)
    this.keepaliveTimer.unref()
  }
}

/** A DATA or HEADERS payload without its padding (RFC 7540 6.1). */
function unpad(flags: number, payload: Buffer): Buffer {
  if ((flags & FLAG.PADDED) === 0) return payload
  if (payload.length < 1) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'short padded frame')
  const pad = payload[0]!
  if (pad >= payload.length) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'padding exceeds the payload')
  return payload.subarray(1, payload.length - pad)
}
