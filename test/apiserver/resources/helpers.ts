/**
 * Helpers for the resource API tests: a tiny client (JSON in, { status, body } out, any content type and
 * Accept), Status assertions (on code and reason, never on messages), and a watch stream reader for
 * `?watch=true` responses (one JSON event per line) and WebSocket watches (one event per frame).
 */
import { expect } from 'chai'
import WebSocket from 'ws'
import { queryString, type Query } from '../http/helpers.js'
import { jsonLines } from '../../support/json-lines.js'
import { wsUrl } from '../../support/watch-client.js'

export { useServer, type TestServer } from '../http/helpers.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are free-form JSON
export type Json = any

export interface Reply {
  status: number
  body: Json
}

export interface KubeRequest {
  query?: Query
  json?: unknown
  raw?: string | Uint8Array
  contentType?: string
  accept?: string
}

export class Kube {
  constructor(readonly base: string) {}

  async request(method: string, path: string, options: KubeRequest = {}): Promise<Reply> {
    const headers: Record<string, string> = {}
    const body = options.raw ?? (options.json === undefined ? undefined : JSON.stringify(options.json))
    if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json'
    if (options.accept !== undefined) headers.accept = options.accept
    const res = await fetch(`${this.base}${path}${queryString(options.query)}`, { method, headers, body })
    const text = await res.text()
    let parsed: Json = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed }
  }

  get(path: string, query?: Query): Promise<Reply> {
    return this.request('GET', path, { query })
  }

  post(path: string, json: unknown, query?: Query): Promise<Reply> {
    return this.request('POST', path, { json, query })
  }

  put(path: string, json: unknown): Promise<Reply> {
    return this.request('PUT', path, { json })
  }

  patch(path: string, json: unknown, contentType = 'application/merge-patch+json'): Promise<Reply> {
    return this.request('PATCH', path, { json, contentType })
  }

  delete(path: string, json?: unknown, query?: Query): Promise<Reply> {
    return this.request('DELETE', path, { json, query })
  }

  /** Creates and expects 201; returns the object. */
  async mustCreate(path: string, json: unknown): Promise<Json> {
    const r = await this.post(path, json)
    expect(r.status, JSON.stringify(r.body)).to.equal(201)
    return r.body
  }

  /** The store's current revision (through the native API). */
  async revision(): Promise<number> {
    const r = await this.get('/v1/status')
    return r.body.revision as number
  }
}

/** A ConfigMap body. */
export function configMap(name: string, labels?: Record<string, string>, data: Record<string, string> = { k: 'v' }): Json {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data }
}

/** Asserts a Kubernetes Status error and returns it. */
export function expectStatus(reply: Reply, code: number, reason: string): Json {
  expect(reply.status, JSON.stringify(reply.body)).to.equal(code)
  expect(reply.body.kind).to.equal('Status')
  expect(reply.body.apiVersion).to.equal('v1')
  expect(reply.body.status).to.equal('Failure')
  expect(reply.body.reason).to.equal(reason)
  expect(reply.body.code).to.equal(code)
  return reply.body
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'
  object: Json
}

export interface EventStream {
  status: number
  events: WatchEvent[]
  /** Resolves when the server ends the stream. */
  ended: Promise<void>
  isEnded(): boolean
  /** Waits until `until(events)` holds. */
  waitFor(until: (events: WatchEvent[]) => boolean, ms?: number, what?: string): Promise<void>
  close(): void
}

function eventStream(): { stream: EventStream; push(e: WatchEvent): void; end(): void } {
  const events: WatchEvent[] = []
  const waiters = new Set<() => void>()
  let done = false
  let endIt!: () => void
  const ended = new Promise<void>((resolve) => (endIt = resolve))
  const wake = () => {
    for (const w of [...waiters]) w()
  }
  const stream: EventStream = {
    status: 200,
    events,
    ended,
    isEnded: () => done,
    close: () => undefined,
    waitFor(until, ms = 10_000, what = 'events') {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (until(events)) {
            cleanup()
            resolve()
          } else if (done) {
            cleanup()
            reject(new Error(`stream ended before ${what}: ${JSON.stringify(events.map((e) => e.type))}`))
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`timed out waiting for ${what}: got ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name]))}`))
        }, ms)
        const cleanup = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
        check()
      })
    },
  }
  return {
    stream,
    push: (e) => {
      events.push(e)
      wake()
    },
    end: () => {
      done = true
      endIt()
      wake()
    },
  }
}

/** `GET path?watch=true&...` as a line-delimited JSON stream. A non-200 answer has its Status in `body`. */
export async function openWatch(
  base: string,
  path: string,
  query: Record<string, string | number | boolean> = {},
  accept?: string,
): Promise<EventStream & { body?: Json }> {
  const controller = new AbortController()
  const qs = new URLSearchParams(Object.entries({ watch: 'true', ...query }).map(([k, v]): [string, string] => [k, String(v)]))
  const res = await fetch(`${base}${path}?${qs}`, { signal: controller.signal, headers: accept ? { accept } : {} })
  const { stream, push, end } = eventStream()
  if (res.status !== 200) {
    const body = JSON.parse(await res.text()) as Json
    end()
    return { ...stream, status: res.status, body }
  }
  stream.close = () => controller.abort()
  void (async () => {
    try {
      for await (const event of jsonLines<WatchEvent>(res.body)) push(event)
    } catch {
      // aborted by the test
    } finally {
      end()
    }
  })()
  return stream
}

/** The same watch over WebSocket: one event per text frame. */
export async function openWsWatch(base: string, path: string, query: Record<string, string | number | boolean> = {}): Promise<EventStream> {
  const qs = new URLSearchParams(Object.entries({ watch: 'true', ...query }).map(([k, v]): [string, string] => [k, String(v)]))
  const ws = new WebSocket(`${wsUrl(base).replace(/\/v1\/watch$/, '')}${path}?${qs}`)
  const { stream, push, end } = eventStream()
  ws.on('message', (data) => push(JSON.parse(String(data)) as WatchEvent))
  ws.on('close', end)
  ws.on('error', end)
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)))
    ws.once('error', reject)
  })
  stream.close = () => ws.terminate()
  return stream
}

export const names = (events: WatchEvent[]): string[] => events.map((e) => `${e.type} ${e.object?.metadata?.name ?? ''}`.trim())
