/**
 * Who is calling, for the doors on the HTTP listener (native API, WebSocket and NDJSON watches, resource
 * API): `Authorization: Bearer TOKEN` (a token from /v1/auth/authenticate or etcd's Authenticate, or a
 * line of tokenAuthFile), else, with clientCertAuth, the CN of the verified TLS client certificate.
 *
 * `identifyRequests` runs every route's handler as its caller (auth/guarded-log.ts reads it). It does so
 * in preHandler, after the body is parsed: a request body's stream events do not carry the scope along.
 * A bad token fails the request with UNAUTHENTICATED before the handler runs.
 */
import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { FastifyInstance } from 'fastify'
import type { Authorizer, Identity } from './auth/authorizer.js'
import { asCaller } from './auth/guarded-log.js'

export const AUTHENTICATE_PATH = '/v1/auth/authenticate'

export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return m?.[1]
}

function peerCn(request: IncomingMessage): string | undefined {
  const socket = request.socket as Partial<TLSSocket>
  if (socket.authorized !== true || typeof socket.getPeerCertificate !== 'function') return undefined
  const cn = socket.getPeerCertificate().subject?.CN
  return Array.isArray(cn) ? (cn[0] as string | undefined) : cn
}

/** The identity of an HTTP request or WebSocket upgrade; throws UNAUTHENTICATED for a bad token. */
export function httpCaller(auth: Authorizer, request: IncomingMessage): Identity {
  if (!auth.enabled) return auth.identify({})
  return auth.identify({ token: bearerToken(request.headers.authorization), certCn: peerCn(request) })
}

export function identifyRequests(app: FastifyInstance, auth: Authorizer): void {
  app.addHook('preHandler', (request, _reply, done) => {
    let who: Identity
    try {
      // Logging in needs no identity, and an expired token on it must not stand in the way.
      who = request.routeOptions.url === AUTHENTICATE_PATH ? auth.identify({}) : httpCaller(auth, request.raw)
    } catch (err) {
      done(err as Error)
      return
    }
    asCaller(who, () => done(), request.url.startsWith('/api') ? 'resources' : 'http')
  })
}
