/**
 * One watch request of the resource API (GET ...?watch=true): a chunked stream of JSON events, iterated
 * as ResourceWatchEvents. It ends when the server ends the stream (timeoutSeconds) or close() is called;
 * it throws when the request is refused (StatusError), the connection fails or goes silent
 * (UnreachableError), or the stream is not JSON (MalformedStreamError). It does not reconnect: the
 * informer decides what to do next (rewatch from the last resourceVersion, or relist on Expired).
 *
 * "Too old" is not an HTTP error here: the server answers 200 with one ERROR event whose object is a
 * Status with code 410, reason Expired (as kube-apiserver answers a watch from a compacted revision). The iterator yields it like any other event.
 */
import { KvlogClientError, UnreachableError, errorFromBody } from '../errors.js'
import type { TokenSource } from '../auth.js'
import { jsonBody, requestUrl } from '../http.js'
import { JsonObjectStream, MalformedStreamError } from './json-stream.js'
import type { KubeObject, ResourceWatchEvent } from './types.js'

export interface ResourceWatchOptions {
  /** Changes after this version; unset or "0": synthetic ADDED events for the current objects first. */
  resourceVersion?: string
  allowWatchBookmarks?: boolean
  /** The server ends the stream after this many seconds. */
  timeoutSeconds?: number
  /** Client side: abort when nothing (not even a bookmark) arrived for this long, ms. Default: never. */
  stallTimeoutMs?: number
  /** Watch-list: ADDED for the current objects, then a BOOKMARK marking the end of the initial events. */
  sendInitialEvents?: boolean
  resourceVersionMatch?: 'NotOlderThan' | 'Exact'
}

export class ResourceWatch<T extends KubeObject = KubeObject> implements AsyncIterable<ResourceWatchEvent<T>> {
  /** Events received so far (all types). */
  received = 0
  private readonly abort = new AbortController()
  private stalled = false
  private closed = false
  private stallTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly endpoint: string,
    private readonly path: string,
    private readonly query: URLSearchParams,
    private readonly options: ResourceWatchOptions,
    /** Credentials: the token goes in the Authorization header (a 401 is thrown, not retried). */
    private readonly auth?: TokenSource,
  ) {}

  /** Ends the stream; an iterator returns normally. */
  close(): void {
    this.closed = true
    clearTimeout(this.stallTimer)
    this.abort.abort()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ResourceWatchEvent<T>> {
    const q = new URLSearchParams(this.query)
    const o = this.options
    q.set('watch', 'true')
    if (o.resourceVersion !== undefined) q.set('resourceVersion', o.resourceVersion)
    if (o.allowWatchBookmarks) q.set('allowWatchBookmarks', 'true')
    if (o.timeoutSeconds !== undefined) q.set('timeoutSeconds', String(o.timeoutSeconds))
    if (o.sendInitialEvents) q.set('sendInitialEvents', 'true')
    if (o.resourceVersionMatch) q.set('resourceVersionMatch', o.resourceVersionMatch)
    const url = requestUrl(this.endpoint, this.path, q)
    try {
      this.armStallTimer()
      const authorization = await this.auth?.header()
      const headers: Record<string, string> = authorization !== undefined ? { authorization } : {}
      const res = await fetch(url, { signal: this.abort.signal, headers })
      if (res.status === 401) this.auth?.invalidate()
      if (!res.ok) throw errorFromBody(res.status, await jsonBody(res))
      if (res.body === null) return
      const reader = res.body.getReader()
      const decoder = new TextDecoder()
      const parser = new JsonObjectStream()
      while (true) {
        const { value, done } = await reader.read()
        if (done) break
        this.armStallTimer()
        for (const event of parser.push(decoder.decode(value, { stream: true }))) {
          this.received++
          yield event as ResourceWatchEvent<T>
          if (this.closed) return
        }
      }
      if (parser.partial) throw new UnreachableError(`the watch stream ${this.path} ended inside an event`)
    } catch (err) {
      if (this.closed) return
      if (this.stalled) throw new UnreachableError(`the watch stream ${this.path} was silent for ${o.stallTimeoutMs} ms`, err)
      if (err instanceof MalformedStreamError || err instanceof KvlogClientError) throw err
      throw new UnreachableError(`the watch stream ${this.path} failed: ${String((err as Error).message ?? err)}`, err)
    } finally {
      clearTimeout(this.stallTimer)
      this.abort.abort()
    }
  }

  private armStallTimer(): void {
    const ms = this.options.stallTimeoutMs
    if (ms === undefined || this.closed) return
    clearTimeout(this.stallTimer)
    this.stallTimer = setTimeout(() => {
      this.stalled = true
      this.abort.abort()
    }, ms)
    this.stallTimer.unref()
  }
}
