/**
 * What the HTTP address answers while a cluster member cannot open its log yet (NATS unreachable,
 * JetStream electing, catching up): GET /healthz 200 (the process is up), everything else 503
 * UNAVAILABLE, so a load balancer or an orchestrator sees "not ready" rather than a refused connection.
 * Closed, every connection cut, just before the real listener takes the address. Only for a fixed
 * port (port 0 would be an address nobody knows).
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { TlsFiles } from '../tls.js'
import { errorBody } from './errors.js'

export interface StartingListener {
  close(): Promise<void>
}

export async function listenWhileStarting(host: string, port: number, tls: TlsFiles | undefined): Promise<StartingListener> {
  if (port === 0) return { close: async () => undefined }
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]
    const ok = req.method === 'GET' && path === '/healthz'
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', connection: 'close' })
    res.end(JSON.stringify(ok ? { ok: true } : errorBody('UNAVAILABLE', 'starting: this member has not opened its log yet')))
  }
  const server: Server = tls
    ? createHttpsServer({ cert: tls.cert, key: tls.key, ...(tls.ca ? { ca: tls.ca } : {}) }, answer)
    : createHttpServer(answer)
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, host, () => resolve(true))
  })
  // The address is taken: the real listener will say so with its own error when it tries.
  if (!listening) return { close: async () => undefined }
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
