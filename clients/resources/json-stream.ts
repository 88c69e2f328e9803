/**
 * Splits a watch stream (a chunked HTTP body of JSON objects, one after another, usually one per line but
 * not necessarily) into parsed objects. Chunks may cut an object, a string or a UTF-8 sequence anywhere:
 * feed the decoded text as it comes; each complete top-level object is returned once.
 *
 * The scan keeps its state (depth, inside a string, after a backslash) across chunks, so every character is
 * looked at once, and only a complete object is handed to JSON.parse.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/** The stream was not a sequence of JSON objects (a server or proxy bug, not a transient failure). */
export class MalformedStreamError extends Error {
  override readonly name = 'MalformedStreamError'
  readonly code = 'MALFORMED_STREAM'
}

export class JsonObjectStream {
  private buf = ''
  /** Where the scan is in buf. */
  private pos = 0
  /** Where the object being scanned starts in buf (meaningful when depth > 0). */
  private start = 0
  private depth = 0
  private inString = false
  private escaped = false

  /** Feeds decoded text; returns the objects completed by it, in order. */
  push(text: string): unknown[] {
    this.buf += text
    const out: unknown[] = []
    const buf = this.buf
    for (; this.pos < buf.length; this.pos++) {
      const c = buf.charCodeAt(this.pos)
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === BACKSLASH) this.escaped = true
        else if (c === QUOTE) this.inString = false
        continue
      }
      if (this.depth === 0) {
        if (isSpace(c)) continue
        if (c !== OPEN_BRACE)
          throw new MalformedStreamError(
            `expected a JSON object in the watch stream, got ${JSON.stringify(buf.slice(this.pos, this.pos + 20))}`,
          )
        this.start = this.pos
        this.depth = 1
        continue
      }
      if (c === QUOTE) this.inString = true
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--this.depth === 0) {
          const slice = buf.slice(this.start, this.pos + 1)
          try {
            out.push(JSON.parse(slice))
          } catch (err) {
            throw new MalformedStreamError(`malformed JSON in the watch stream: ${(err as Error).message}`)
          }
        }
      }
    }
    // Keep only the unfinished object.
    if (this.depth === 0) {
      this.buf = ''
      this.pos = 0
    } else if (this.start > 0) {
      this.buf = buf.slice(this.start)
      this.pos -= this.start
      this.start = 0
    }
    return out
  }

  /** True when the stream stopped inside an object (the connection was cut mid-event). */
  get partial(): boolean {
    return this.depth > 0
  }
}
