/**
 * An HTTP/2 client that writes raw frames, for attacks a client library refuses to send: header blocks
 * built with a small HPACK encoder (RFC 7541: indexed fields, literals with and without indexing, no
 * Huffman), floods of control frames, malformed frames. It reads the server's frames far enough to see
 * SETTINGS, HEADERS, RST_STREAM and GOAWAY with their codes.
 */
import { connect, type Socket } from 'node:net'

export const FRAME = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const
export const SETTING = { HEADER_TABLE_SIZE: 1, MAX_CONCURRENT_STREAMS: 3, INITIAL_WINDOW_SIZE: 4, MAX_FRAME_SIZE: 5 } as const
export const H2_ERROR = { NO_ERROR: 0, PROTOCOL_ERROR: 1, CANCEL: 8, REFUSED_STREAM: 7, ENHANCE_YOUR_CALM: 11 } as const

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')
const MAX_FRAME_BYTES = 16_384

export interface Frame {
  type: number
  flags: number
  streamId: number
  payload: Buffer
}

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9)
  header.writeUIntBE(payload.length, 0, 3)
  header[3] = type
  header[4] = flags
  header.writeUInt32BE(streamId & 0x7fffffff, 5)
  return Buffer.concat([header, payload])
}

/** A SETTINGS frame with these [id, value] entries. */
export function settingsFrame(entries: ReadonlyArray<readonly [number, number]>): Buffer {
  const payload = Buffer.alloc(entries.length * 6)
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6)
    payload.writeUInt32BE(value, i * 6 + 2)
  })
  return frame(FRAME.SETTINGS, 0, 0, payload)
}

export function rstFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.alloc(4)
  payload.writeUInt32BE(code)
  return frame(FRAME.RST_STREAM, 0, streamId, payload)
}

// ---- HPACK (RFC 7541), no Huffman ----

/** An integer with an N-bit prefix; `first` holds the pattern bits above the prefix. */
function hpackInt(value: number, prefixBits: number, first: number): number[] {
  const max = (1 << prefixBits) - 1
  if (value < max) return [first | value]
  const out = [first | max]
  let rest = value - max
  while (rest >= 128) {
    out.push((rest % 128) + 128)
    rest = Math.floor(rest / 128)
  }
  out.push(rest)
  return out
}

function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1')
  return Buffer.concat([Buffer.from(hpackInt(bytes.length, 7, 0)), bytes])
}

/** An indexed field: a static (1..61) or dynamic (62..) table entry. */
export function indexed(index: number): Buffer {
  return Buffer.from(hpackInt(index, 7, 0x80))
}

/** A literal field with a new name; `incremental` adds it to the dynamic table (it becomes index 62). */
export function literal(name: string, value: string, incremental = false): Buffer {
  return Buffer.concat([Buffer.from([incremental ? 0x40 : 0x00]), hpackString(name), hpackString(value)])
}

/** The request fields of a gRPC call to `path` (literals, no indexing): a block any server accepts. */
export function grpcRequestBlock(path: string): Buffer {
  return Buffer.concat([
    literal(':method', 'POST'),
    literal(':scheme', 'http'),
    literal(':path', path),
    literal(':authority', 'localhost'),
    literal('content-type', 'application/grpc'),
    literal('te', 'trailers'),
  ])
}

/** HEADERS (and CONTINUATION frames when the block is larger than a frame). */
export function headerFrames(streamId: number, block: Buffer, endStream = false): Buffer {
  const frames: Buffer[] = []
  for (let at = 0; at < block.length || at === 0; at += MAX_FRAME_BYTES) {
    const piece = block.subarray(at, at + MAX_FRAME_BYTES)
    const last = at + MAX_FRAME_BYTES >= block.length
    const type = at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION
    const flags = (last ? FLAG.END_HEADERS : 0) | (at === 0 && endStream ? FLAG.END_STREAM : 0)
    frames.push(frame(type, flags, streamId, piece))
    if (block.length === 0) break
  }
  return Buffer.concat(frames)
}

/** One raw connection: frames out as given, the server's frames parsed as they come. */
export class RawH2 {
  readonly frames: Frame[] = []
  closed = false
  private input: Buffer = Buffer.alloc(0)
  private readonly waiters = new Set<() => void>()

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk))
    socket.on('error', () => undefined)
    socket.on('close', () => {
      this.closed = true
      this.wake()
    })
  }

  /** Connects and sends the preface and an empty SETTINGS frame (unless `preface` is false). */
  static async open(address: string, preface = true): Promise<RawH2> {
    const [host, port] = splitAddress(address)
    const socket = connect({ host, port })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    const raw = new RawH2(socket)
    if (preface) raw.send(Buffer.concat([PREFACE, settingsFrame([])]))
    return raw
  }

  /** Writes bytes; resolves once the socket has taken them (or the connection is gone). */
  send(bytes: Buffer): Promise<void> {
    if (this.socket.destroyed) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(onWake)
        resolve()
      }
      const onWake = () => {
        if (this.closed) done()
      }
      this.waiters.add(onWake)
      this.socket.write(bytes, done)
    })
  }

  /**
   * Resolves once the server has read everything sent before (its answer to a PING came back), or has
   * ended the connection (GOAWAY, or closed); rejects after `ms`.
   */
  async sync(ms: number): Promise<void> {
    const payload = Buffer.alloc(8)
    payload.writeDoubleBE(Math.random())
    const acked = () => this.frames.some((f) => f.type === FRAME.PING && (f.flags & FLAG.ACK) !== 0 && f.payload.equals(payload))
    void this.send(frame(FRAME.PING, 0, 0, payload))
    await this.until(() => acked() || this.goAwayCode !== undefined, ms)
  }

  /** Resolves when `test` holds for what has arrived, or the connection closed; rejects after `ms`. */
  until(test: () => boolean, ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!test() && !this.closed) return
        clearTimeout(timer)
        this.waiters.delete(check)
        resolve()
      }
      const timer = setTimeout(() => {
        this.waiters.delete(check)
        reject(new Error(`no such frame within ${ms} ms`))
      }, ms)
      this.waiters.add(check)
      check()
    })
  }

  of(type: number): Frame[] {
    return this.frames.filter((f) => f.type === type)
  }

  /** The error code of the server's GOAWAY, if one came. */
  get goAwayCode(): number | undefined {
    return this.of(FRAME.GOAWAY)[0]?.payload.readUInt32BE(4)
  }

  /** The server's value for a setting in its first SETTINGS frame. */
  serverSetting(id: number): number | undefined {
    const settings = this.frames.find((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0)
    if (settings === undefined) return undefined
    for (let at = 0; at + 6 <= settings.payload.length; at += 6) {
      if (settings.payload.readUInt16BE(at) === id) return settings.payload.readUInt32BE(at + 2)
    }
    return undefined
  }

  /** RST_STREAM codes received, by stream. */
  resets(): Map<number, number> {
    return new Map(this.of(FRAME.RST_STREAM).map((f) => [f.streamId, f.payload.readUInt32BE(0)]))
  }

  close(): void {
    this.socket.destroy()
  }

  private receive(chunk: Buffer): void {
    this.input = this.input.length === 0 ? chunk : Buffer.concat([this.input, chunk])
    while (this.input.length >= 9) {
      const length = this.input.readUIntBE(0, 3)
      if (this.input.length < 9 + length) break
      const f: Frame = {
        type: this.input[3]!,
        flags: this.input[4]!,
        streamId: this.input.readUInt32BE(5) & 0x7fffffff,
        payload: this.input.subarray(9, 9 + length),
      }
      this.input = this.input.subarray(9 + length)
      // Frames kept are the ones tests look at; DATA and acknowledgements are only counted as read.
      if (f.type !== FRAME.DATA) this.frames.push(f)
      if (f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0) void this.send(frame(FRAME.SETTINGS, FLAG.ACK, 0))
    }
    this.wake()
  }

  private wake(): void {
    for (const w of [...this.waiters]) w()
  }
}

export function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':')
  return [address.slice(0, at).replace(/^\[|\]$/g, ''), Number(address.slice(at + 1))]
}
