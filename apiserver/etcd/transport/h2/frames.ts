/** HTTP/2 frame types, flags, error codes and settings (RFC 7540, sections 6, 7 and 11), and framing. */

export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const

export const FLAG = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const

export const H2_ERROR = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const

export const SETTING = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const

export const FRAME_HEADER_BYTES = 9
/** The largest frame payload either side may send before the other raises it (SETTINGS_MAX_FRAME_SIZE). */
export const DEFAULT_MAX_FRAME_BYTES = 16_384
/** Every window starts at this size (RFC 7540 6.9.2). */
export const DEFAULT_WINDOW_BYTES = 65_535
export const MAX_WINDOW_BYTES = 2 ** 31 - 1
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')

/** Writes a frame header at `offset` of `out`. */
export function writeFrameHeader(out: Buffer, offset: number, length: number, type: number, flags: number, streamId: number): void {
  out[offset] = (length >>> 16) & 0xff
  out[offset + 1] = (length >>> 8) & 0xff
  out[offset + 2] = length & 0xff
  out[offset + 3] = type
  out[offset + 4] = flags
  out.writeUInt32BE(streamId & 0x7fffffff, offset + 5)
}

/** One frame: header and payload in one buffer. */
export function frame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const length = payload?.length ?? 0
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length)
  writeFrameHeader(out, 0, length, type, flags, streamId)
  if (payload !== undefined) out.set(payload, FRAME_HEADER_BYTES)
  return out
}

/** A frame whose payload is one 32-bit number (RST_STREAM's error code, WINDOW_UPDATE's increment). */
export function uint32Frame(type: number, streamId: number, value: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 4)
  writeFrameHeader(out, 0, 4, type, 0, streamId)
  out.writeUInt32BE(value, FRAME_HEADER_BYTES)
  return out
}

/**
 * A header block as HEADERS frames for one stream: one HEADERS frame, followed by CONTINUATION frames when
 * the block is larger than the peer's largest frame.
 */
export function headerFrames(streamId: number, block: Buffer, endStream: boolean, maxFrameBytes: number): Buffer {
  const end = endStream ? FLAG.END_STREAM : 0
  if (block.length <= maxFrameBytes) return frame(FRAME.HEADERS, FLAG.END_HEADERS | end, streamId, block)
  const parts: Buffer[] = []
  for (let at = 0; at < block.length; at += maxFrameBytes) {
    const piece = block.subarray(at, Math.min(block.length, at + maxFrameBytes))
    const last = at + maxFrameBytes >= block.length
    const type = at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION
    parts.push(frame(type, (last ? FLAG.END_HEADERS : 0) | (at === 0 ? end : 0), streamId, piece))
  }
  return Buffer.concat(parts)
}
