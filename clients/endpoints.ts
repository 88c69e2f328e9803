/**
 * The members a client may talk to, and which one it talks to now. A client sticks to one member while
 * it answers; a connection failure or a 503 from it moves every later request (and every watch's next
 * connection) to the next member in the list, round robin. Application errors (a 4xx with a code, a
 * COMPACTED, a failed compare) never move it: another member would answer the same.
 *
 * Members share revisions (one log), so a read or a watch resumed on another member continues exactly
 * where it stopped.
 */

/** `host:port` → `http://host:port` (as etcdctl accepts endpoints without a scheme); checks the URL. */
export function normalizeEndpoint(endpoint: string): string {
  const trimmed = endpoint.trim()
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    throw new TypeError(`not an endpoint: ${JSON.stringify(endpoint)} (expected http://host:port or host:port)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`not an endpoint: ${JSON.stringify(endpoint)} (the scheme must be http or https)`)
  }
  return withScheme.replace(/\/+$/, '')
}

/** A comma-separated list (`a:1,b:2`), as --endpoints and KVLOG_ENDPOINTS give it. */
export function parseEndpoints(list: string): string[] {
  const parts = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (parts.length === 0) throw new TypeError(`no endpoint in ${JSON.stringify(list)}`)
  return parts.map(normalizeEndpoint)
}

export class Endpoints {
  readonly list: readonly string[]
  private index = 0
  /** How many times the client moved to another member. */
  switches = 0

  constructor(endpoints: readonly string[]) {
    if (endpoints.length === 0) throw new TypeError('at least one endpoint is needed')
    this.list = endpoints.map(normalizeEndpoint)
  }

  get current(): string {
    return this.list[this.index]
  }

  /**
   * `endpoint` failed: when it is still the current one, move on to the next member (another request or
   * watch may already have moved on; then nothing changes). Returns the member to use now.
   */
  failed(endpoint: string): string {
    if (this.list.length > 1 && this.list[this.index] === endpoint) {
      this.index = (this.index + 1) % this.list.length
      this.switches++
    }
    return this.current
  }
}
