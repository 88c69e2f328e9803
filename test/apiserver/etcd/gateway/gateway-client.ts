/**
 * A small client for the JSON gateway as curl scripts and etcd3gw use it: POST a JSON body, read the
 * status and the JSON answer; or open a streaming call (watch, lease keep-alive) whose request body stays
 * open for more messages and whose answer is read line by line. Plain HTTP/1.1 (node:http).
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http'

export interface Answer {
  status: number
  body: unknown
  text: string
}

export function post(base: string, path: string, body: unknown | string, method = 'POST'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => {
        let parsed: unknown = text
        try {
          parsed = JSON.parse(text)
        } catch {
          // not JSON (404, 405 answers are text)
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text })
      })
    })
    req.on('error', reject)
    req.end(typeof body === 'string' ? body : JSON.stringify(body))
  })
}

export interface Stream {
  status: Promise<number>
  send(message: unknown): void
  /** Writes raw text into the (open) request body. */
  sendRaw(text: string): void
  /** The next line that satisfies `match` (earlier lines are kept in `seen`). */
  next(match?: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>
  seen: Array<Record<string, unknown>>
  close(): void
}

/**
 * Opens a streaming call whose body holds `messages`, then ends the body unless `keepOpen` (etcd 3.4's
 * gateway, on HTTP/1.1, reads a stream's messages only once the body is complete: clients send them all
 * in one body; the answer stream stays open after it).
 */
export function stream(base: string, path: string, messages: unknown[], keepOpen = false): Stream {
  const lines: Array<Record<string, unknown>> = []
  const seen: Array<Record<string, unknown>> = []
  let wake: (() => void) | undefined
  let res: IncomingMessage | undefined
  const req: ClientRequest = request(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } })
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (r) => {
      res = r
      resolve(r.statusCode ?? 0)
      let buffer = ''
      r.setEncoding('utf8')
      r.on('data', (c: string) => {
        buffer += c
        let nl: number
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim()
          buffer = buffer.slice(nl + 1)
          if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>)
        }
        wake?.()
      })
      r.on('error', () => undefined)
    })
    req.on('error', reject)
  })
  status.catch(() => undefined)
  req.flushHeaders()
  const body = messages.map((m) => JSON.stringify(m)).join('\n')
  if (keepOpen) req.write(body)
  else req.end(body)
  return {
    status,
    seen,
    send: (message) => void req.write(JSON.stringify(message)),
    sendRaw: (text) => void req.write(text),
    async next(match = () => true, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        while (lines.length > 0) {
          const line = lines.shift()!
          seen.push(line)
          if (match(line)) return line
        }
        if (Date.now() > deadline) throw new Error(`no matching line on ${path} within ${timeoutMs} ms; seen ${JSON.stringify(seen)}`)
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, 50)
        })
      }
    },
    close: () => {
      req.destroy()
      res?.destroy()
    },
  }
}
