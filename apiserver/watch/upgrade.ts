/**
 * One 'upgrade' listener per HTTP server, routing WebSocket upgrades by path to the front door that
 * serves it (the native watch at /v1/watch, resource watches under /api and /apis). A path nobody
 * claims gets 404 and the socket is closed.
 */
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void

interface Route {
  matches(path: string): boolean
  handle: UpgradeHandler
}

const routers = new WeakMap<Server, Route[]>()

export function onUpgrade(server: Server, matches: (path: string) => boolean, handle: UpgradeHandler): void {
  let routes = routers.get(server)
  if (routes === undefined) {
    const list: Route[] = []
    routes = list
    routers.set(server, list)
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (request.url ?? '').split('?')[0]
      const route = list.find((r) => r.matches(path))
      if (route === undefined) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n')
      else route.handle(request, socket, head)
    })
  }
  routes.push({ matches, handle })
}
