/**
 * One 'upgrade' listener per HTTP server, routing WebSocket upgrades by path to the front door that
 * serves it (the native watch at /v1/watch, resource watches under /api and /apis). A path nobody
 * claims gets 404 and the socket is closed. An upgrade the server's guard refuses (a foreign Origin or
 * Host: apiserver/browser-policy.ts) is answered with its status and error body before any route sees it.
 */
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { ERROR_STATUS } from '../errors.js'
import type { ErrorCode } from '../../log/errors.js'

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void

interface Route {
  matches(path: string): boolean
  handle: UpgradeHandler
}

const routers = new WeakMap<Server, Route[]>()

/** A refusal (its code and message), or undefined to let the upgrade through. */
export type UpgradeGuard = (request: IncomingMessage) => { code: ErrorCode; message: string } | undefined

const guards = new WeakMap<Server, UpgradeGuard>()

/** Every upgrade on `server` is first checked by `guard`. */
export function guardUpgrades(server: Server, guard: UpgradeGuard): void {
  guards.set(server, guard)
}

function refuse(socket: Duplex, code: ErrorCode, message: string): void {
  const body = JSON.stringify({ error: { code, message } })
  const status = ERROR_STATUS[code].http
  socket.end(
    `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Request'}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}

export function onUpgrade(server: Server, matches: (path: string) => boolean, handle: UpgradeHandler): void {
  let routes = routers.get(server)
  if (routes === undefined) {
    const list: Route[] = []
    routes = list
    routers.set(server, list)
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const refused = guards.get(server)?.(request)
      if (refused !== undefined) return refuse(socket, refused.code, refused.message)
      const path = (request.url ?? '').split('?')[0]
      const route = list.find((r) => r.matches(path))
      if (route === undefined) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n')
      else route.handle(request, socket, head)
    })
  }
  routes.push({ matches, handle })
}
