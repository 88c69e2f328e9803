/**
 * The wire types of kvlog's native API that the store, the server, the TypeScript client and the history
 * browser all speak: an event's type, a write's author, and the JSON of a key-value and of an event
 * (docs/api.md). Types only, importing nothing, so every side may import it (eslint.config.js; a test
 * checks it compiles to no code).
 *
 * Byte fields travel as `name` (UTF-8) or `nameBase64` (bytes that are not UTF-8); lease ids as decimal
 * strings (64-bit ids do not fit a JSON number); revisions as JSON numbers.
 */

export type EventType = 'PUT' | 'DELETE'

/**
 * Who made a write: the front door it came through ('etcd', 'http', 'resources') and, when auth is
 * enabled, the authenticated user (a token's user or a client certificate's CN). No user = anonymous.
 * Writes the store makes itself (lease expiry) have no author.
 */
export interface Author {
  door: string
  user?: string
  /** Without a user: the client's User-Agent (cut to authorAgentMaxChars), else its address. */
  agent?: string
}

/** A key-value as JSON; `value` is absent with keysOnly, `lease` when the key has none. */
export interface KeyValueJson {
  key?: string
  keyBase64?: string
  value?: string
  valueBase64?: string
  createRevision: number
  modRevision: number
  version: number
  lease?: string
}

/** An event of a watch or of history as JSON; history events carry `time` (ISO 8601) and the author. */
export interface EventJson {
  type: EventType
  revision: number
  kv: KeyValueJson
  prevKv?: KeyValueJson
  time?: string
  author?: Author
}
