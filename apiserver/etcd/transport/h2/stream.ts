/**
 * One HTTP/2 stream on the server side: a request's headers and body in, a response's headers, body and
 * trailers out, with HTTP/2's flow control.
 *
 * Out: `respond` sends HEADERS; `write` queues DATA, sent as far as the client's windows (this stream's
 * and the connection's) allow and the socket is not backed up; the rest waits for the client's
 * WINDOW_UPDATE or the socket's 'drain'. `write` returns false once more than WRITE_HIGH_WATER bytes wait,
 * and 'drain' follows when they are sent. A write's callback runs once its bytes are written to the
 * socket (with an error if the stream closes first), so a writer that waits for it (the watch outbox)
 * gathers what comes meanwhile into its next message. `end` (optionally with trailers) ends the stream
 * after what is queued. `unary` sends headers, one DATA frame and trailers in one socket write when the
 * windows allow: a unary gRPC answer in one `write` instead of three.
 *
 * In: 'data' (Buffer) and 'end' events; the client's window is given back as data arrives (the handlers
 * consume synchronously). 'close' fires once, when both sides have ended or the stream is reset.
 */
import { EventEmitter } from 'node:events'
import type { IncomingHttpHeaders } from 'node:http2'
import type { Socket } from 'node:net'
import { FLAG, FRAME, FRAME_HEADER_BYTES, H2_ERROR, headerFrames, uint32Frame, writeFrameHeader } from './frames.js'
import { encodeHeaders } from './hpack.js'

/** Queued bytes beyond which `write` returns false. */
const WRITE_HIGH_WATER = 64 * 1024

/** What a stream needs from its connection. */
export interface StreamOwner {
  readonly socket: Socket
  /** The connection's send window (shared by all streams). */
  sendWindow: number
  /** The client's SETTINGS_MAX_FRAME_SIZE. */
  readonly peerMaxFrameBytes: number
  /** True while the socket holds more unsent bytes than it should: DATA waits for its 'drain'. */
  readonly socketBusy: boolean
  /** Queues bytes for the socket; they leave together at the end of the tick. */
  send(bytes: Buffer): void
  /** Runs `fn` once the bytes queued so far have been written to the socket. */
  afterWrite(fn: Written): void
  /** Asks to be flushed again when the connection's window grows or the socket drains. */
  waitForRoom(stream: H2Stream): void
  /** Asks to be flushed at the end of the tick, before the connection writes to the socket. */
  flushSoon(stream: H2Stream): void
  /** The stream is over: forget it. */
  released(stream: H2Stream): void
}

type Written = (err?: Error | null) => void

interface Chunk {
  bytes: Buffer
  written: Written | undefined
}

export class H2Stream extends EventEmitter {
  /** The client's window for this stream (what kvlog may still send). */
  sendWindow: number
  headersSent = false
  /** The client has sent END_STREAM. */
  remoteEnded = false
  /** kvlog has sent END_STREAM (or queued it behind data). */
  localEnded = false
  closed = false
  /** DATA bytes received and not yet given back to the client with WINDOW_UPDATE (the connection's count). */
  receivedUnacked = 0
  private readonly queue: Chunk[] = []
  private queuedBytes = 0
  private trailers: Buffer | undefined
  private endAfterQueue = false
  private needDrain = false

  constructor(
    readonly id: number,
    readonly headers: IncomingHttpHeaders,
    private readonly owner: StreamOwner,
    initialSendWindow: number,
  ) {
    super()
    this.sendWindow = initialSendWindow
  }

  get socket(): Socket {
    return this.owner.socket
  }

  /** Nothing has ended the response yet. */
  get writable(): boolean {
    return !this.closed && !this.localEnded
  }

  /** Sends the response headers (a block from encodeHeaders, or fields); `endStream` for a headers-only answer. */
  respond(headers: Buffer | ReadonlyArray<readonly [string, string]>, endStream = false): void {
    if (this.headersSent || !this.writable) return
    this.headersSent = true
    const block = Buffer.isBuffer(headers) ? headers : encodeHeaders(headers)
    this.owner.send(headerFrames(this.id, block, endStream, this.owner.peerMaxFrameBytes))
    if (endStream) this.endedLocally()
  }

  write(bytes: Buffer, written?: Written): boolean {
    if (!this.writable) {
      if (written) process.nextTick(written, new Error('stream closed'))
      return false
    }
    this.queue.push({ bytes, written })
    this.queuedBytes += bytes.length
    // Framed at the end of the tick, so that the writes of one tick share DATA frames.
    this.owner.flushSoon(this)
    if (this.queuedBytes > WRITE_HIGH_WATER) this.needDrain = true
    return !this.needDrain
  }

  /** Ends the response after what is queued: with trailers (a header block) or with the last DATA frame. */
  end(trailers?: Buffer): void {
    if (!this.writable) return
    this.localEnded = true
    this.endAfterQueue = true
    this.trailers = trailers
    this.owner.flushSoon(this)
  }

  /**
   * Headers, one message and trailers in one socket write, when the windows and the frame size allow
   * (else as respond + write + end). `message` is written after `prefix` (a gRPC length prefix).
   */
  unary(headers: Buffer, prefix: Buffer, message: Buffer, trailers: Buffer): void {
    if (!this.writable || this.headersSent) return
    const dataBytes = prefix.length + message.length
    const owner = this.owner
    const fits =
      dataBytes <= this.sendWindow &&
      dataBytes <= owner.sendWindow &&
      dataBytes <= owner.peerMaxFrameBytes &&
      headers.length <= owner.peerMaxFrameBytes &&
      trailers.length <= owner.peerMaxFrameBytes &&
      !owner.socketBusy
    if (!fits) {
      this.respond(headers)
      this.write(prefix)
      this.write(message)
      this.end(trailers)
      return
    }
    this.headersSent = true
    const out = Buffer.allocUnsafe(3 * FRAME_HEADER_BYTES + headers.length + dataBytes + trailers.length)
    let at = 0
    writeFrameHeader(out, at, headers.length, FRAME.HEADERS, FLAG.END_HEADERS, this.id)
    at += FRAME_HEADER_BYTES
    at += headers.copy(out, at)
    writeFrameHeader(out, at, dataBytes, FRAME.DATA, 0, this.id)
    at += FRAME_HEADER_BYTES
    at += prefix.copy(out, at)
    at += message.copy(out, at)
    writeFrameHeader(out, at, trailers.length, FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, this.id)
    at += FRAME_HEADER_BYTES
    trailers.copy(out, at)
    this.sendWindow -= dataBytes
    owner.sendWindow -= dataBytes
    owner.send(out)
    this.endedLocally()
  }

  /** Ends the stream at once with RST_STREAM (CANCEL unless said): nothing more is sent or received. */
  reset(code: number = H2_ERROR.CANCEL): void {
    if (this.closed) return
    this.owner.send(uint32Frame(FRAME.RST_STREAM, this.id, code))
    this.close()
  }

  // ---- called by the connection ----

  /** DATA from the client. */
  receive(bytes: Buffer): void {
    if (bytes.length > 0) this.emit('data', bytes)
  }

  /** END_STREAM from the client. */
  receiveEnd(): void {
    if (this.remoteEnded) return
    this.remoteEnded = true
    this.emit('end')
  }

  /**
   * Sends what the windows allow now; called again by the connection when they grow. Each DATA frame
   * takes as many queued chunks as fit (small writes, e.g. a watch response's parts, share a frame), and
   * chunks go to the socket as they are, not copied.
   */
  flush(): void {
    const owner = this.owner
    while (this.queue.length > 0) {
      const room = Math.min(this.sendWindow, owner.sendWindow, owner.peerMaxFrameBytes)
      if (owner.socketBusy || (room <= 0 && this.queuedBytes > 0)) {
        owner.waitForRoom(this)
        return
      }
      const pieces: Buffer[] = []
      let size = 0
      while (this.queue.length > 0 && (size < room || this.queue[0]!.bytes.length === 0)) {
        const chunk = this.queue[0]!
        const n = Math.min(room - size, chunk.bytes.length)
        if (n < chunk.bytes.length) {
          pieces.push(chunk.bytes.subarray(0, n))
          chunk.bytes = chunk.bytes.subarray(n)
          size += n
          break
        }
        pieces.push(chunk.bytes)
        size += n
        this.queue.shift()
        if (chunk.written) owner.afterWrite(chunk.written)
      }
      this.queuedBytes -= size
      const endNow = this.queue.length === 0 && this.endAfterQueue && this.trailers === undefined
      this.sendData(pieces, size, endNow)
      if (endNow) {
        this.endAfterQueue = false
        return this.endedLocally()
      }
    }
    if (this.needDrain) {
      this.needDrain = false
      process.nextTick(() => this.emit('drain'))
    }
    if (this.endAfterQueue) {
      this.endAfterQueue = false
      if (this.trailers !== undefined) {
        owner.send(headerFrames(this.id, this.trailers, true, owner.peerMaxFrameBytes))
        this.trailers = undefined
      } else {
        this.sendData([], 0, true)
      }
      this.endedLocally()
    }
  }

  /** The stream is gone (reset by either side, or the connection closed). */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.localEnded = true
    for (const chunk of this.queue.splice(0)) if (chunk.written) process.nextTick(chunk.written, new Error('stream closed'))
    this.queuedBytes = 0
    this.trailers = undefined
    this.owner.released(this)
    this.emit('close')
  }

  /** A DATA frame: its header, then the payload's pieces as they are (not copied). */
  private sendData(pieces: readonly Buffer[], size: number, endStream: boolean): void {
    const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES)
    writeFrameHeader(header, 0, size, FRAME.DATA, endStream ? FLAG.END_STREAM : 0, this.id)
    this.sendWindow -= size
    this.owner.sendWindow -= size
    this.owner.send(header)
    for (const piece of pieces) if (piece.length > 0) this.owner.send(piece)
  }

  /**
   * kvlog's side has ended. A client that is still sending is told to stop with RST_STREAM(NO_ERROR)
   * (RFC 7540 8.1: a complete response may come before the request is complete), as gRPC servers do.
   */
  private endedLocally(): void {
    this.localEnded = true
    if (this.remoteEnded) return this.close()
    this.reset(H2_ERROR.NO_ERROR)
  }
}
