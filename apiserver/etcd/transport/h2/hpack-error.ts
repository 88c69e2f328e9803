/** A header block that cannot be decoded: the connection ends with COMPRESSION_ERROR (RFC 7540, 4.3). */
export class HpackError extends Error {
  constructor(message: string) {
    super(`hpack: ${message}`)
    this.name = 'HpackError'
  }
}
