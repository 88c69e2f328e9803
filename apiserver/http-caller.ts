/**
 * Who is calling, for the doors on the HTTP listener (native API, WebSocket and NDJSON watches, resource
 * API): `Authorization: Bearer TOKEN` (a token from /v1/auth/authenticate or etcd's Authenticate, or a
 * line of tokenAuthFile), else, with clientCertAuth, the CN of the verified TLS client certificate.
 * A browser's WebSocket cannot set headers, so a WebSocket upgrade may carry the token as a subprotocol
 * instead: `base64url.bearer.kvlog.<token in base64url>`, offered next to `kvlog.watch` (the one the
 * server answers with, so the token is not echoed back).
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

/** The subprotocol prefix of a bearer token on a WebSocket upgrade (as Kubernetes' `base64url.bearer.authorization.k8s.io.`). */
export const TOKEN_PROTOCOL_PREFIX = 'base64url.bearer.kvlog.'

/** The bearer token of a request: its Authorization header, else a token subprotocol of an upgrade. */
function requestToken(request: IncomingMessage): string | undefined {
  const header = bearerToken(request.headers.authorization)
  if (header !== undefined) return header
  const offered = request.headers['sec-websocket-protocol']
  if (offered === undefined) return undefined
  for (const p of offered.split(',')) {
    const name = p.trim()
    if (name.startsWith(TOKEN_PROTOCOL_PREFIX)) return Buffer.from(name.slice(TOKEN_PROTOCOL_PREFIX.length), 'base64url').toString('utf8')
  }
  return undefined
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
  return auth.identify({ token: requestToken(request), certCn: peerCn(request) })
}

/**
 * What an anonymous write records of its client: the User-Agent (kubectl, a controller, curl look
 * different), else the address; cut to `max` characters (0: nothing).
 */
export function clientAgent(request: IncomingMessage, max: number): string | undefined {
  if (max === 0) return undefined
  const agent = request.headers['user-agent']?.trim() || request.socket.remoteAddress
  return agent === undefined ? undefined : agent.slice(0, max)
}

export function identifyRequests(app: FastifyInstance, auth: Authorizer, agentMaxChars: number): void {
  app.addHook('preHandler', (request, _reply, done) => {
    let who: Identity
    try {
      // Logging in needs no identity, and an expired token on it must not stand in the way.
      who = request.routeOptions.url === AUTHENTICATE_PATH ? auth.identify({}) : httpCaller(auth, request.raw)
    } catch (err) {
      done(err as Error)
      return
    }
    const agent = who.user === undefined ? clientAgent(request.raw, agentMaxChars) : undefined
    asCaller(who, () => done(), request.url.startsWith('/api') ? 'resources' : 'http', agent)
  })
}
