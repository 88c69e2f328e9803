/**
 * Splits a streamed request body into consecutive JSON values (what grpc-gateway's decoder reads on a
 * streaming RPC: `{"create_request":{...}} {"progress_request":{}}`, with or without whitespace or
 * newlines between them). Only objects are expected; anything else is handed on as text and fails to
 * parse where it is used.
 */
export class JsonValueSplitter {
  private text = ''
  private depth = 0
  private inString = false
  private escaped = false
  private start = -1
  private scanned = 0

  /** Feeds bytes; returns the complete values seen so far, as text. */
  push(chunk: string): string[] {
    this.text += chunk
    const out: string[] = []
    for (let i = this.scanned; i < this.text.length; i++) {
      const c = this.text[i]
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === '\\') this.escaped = true
        else if (c === '"') this.inString = false
        continue
      }
      if (c === '"') {
        this.inString = true
        if (this.start < 0) this.start = i
      } else if (c === '{' || c === '[') {
        if (this.depth === 0) this.start = i
        this.depth++
      } else if (c === '}' || c === ']') {
        this.depth--
        if (this.depth <= 0) {
          out.push(this.text.slice(this.start, i + 1))
          this.depth = 0
          this.start = -1
        }
      } else if (this.depth === 0 && !/\s/.test(c)) {
        if (this.start < 0) this.start = i
      }
    }
    if (this.start < 0) {
      this.text = ''
    } else if (this.start > 0) {
      this.text = this.text.slice(this.start)
      this.start = 0
    }
    this.scanned = this.text.length
    return out
  }

  /** What is left at the end of the body (an incomplete value), '' if nothing. */
  rest(): string {
    return this.start < 0 ? '' : this.text.slice(this.start)
  }
}
