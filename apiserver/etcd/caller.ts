/**
 * Who is calling, for the etcd door: the `token` metadata (etcd's; the gateway's `authorization` header is
 * accepted too), else, with clientCertAuth, the CN of the verified client certificate. The authorizer
 * (apiserver/auth/) decides what that identity may do.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { Log } from '../../log/index.js'
import type { Authorizer, Identity } from '../auth/authorizer.js'
import type { CallerLogs } from '../auth/guarded-log.js'
import { authError } from '../auth/errors.js'

/** Request metadata as grpc-js offers it (and as headerMetadata adapts HTTP/2 and gateway headers). */
export interface MetadataLike {
  get(key: string): Array<string | Buffer>
}

export interface AuthContextLike {
  sslPeerCertificate?: { subject?: { CN?: string | string[] } }
}

/** The parts of a call (grpc-js's, or kvlog's own transport's) that carry credentials. */
export interface CredentialCarrier {
  metadata: MetadataLike
  getAuthContext?(): AuthContextLike
}

/** Request headers as call metadata (gRPC metadata are HTTP/2 headers). */
export function headerMetadata(headers: IncomingHttpHeaders): MetadataLike {
  return {
    get(key) {
      const v = headers[key.toLowerCase()]
      return v === undefined ? [] : Array.isArray(v) ? v : [v]
    },
  }
}

/** The verified client certificate of a TLS socket, as grpc-js's auth context gives it. */
export function socketAuthContext(socket: unknown): AuthContextLike {
  const tls = socket as Partial<TLSSocket> | undefined
  if (tls?.authorized !== true || typeof tls.getPeerCertificate !== 'function') return {}
  return { sslPeerCertificate: tls.getPeerCertificate() as AuthContextLike['sslPeerCertificate'] }
}

export function callerOf(auth: Authorizer, call: CredentialCarrier): Identity {
  if (!auth.enabled) return auth.identify({})
  const token = first(call.metadata.get('token')) ?? bearerOrRaw(first(call.metadata.get('authorization')))
  return auth.identify({ token, certCn: certCn(call) })
}

/**
 * What an anonymous write through this door records of its client: its gRPC user-agent (etcdctl's
 * `etcdctl/... grpc-go/...`, a Go client's `grpc-go/...`; the gateway's User-Agent), cut to `max`
 * characters (0: nothing).
 */
export function callerAgent(call: CredentialCarrier, max: number): string | undefined {
  if (max === 0) return undefined
  const agent = first(call.metadata.get('user-agent'))?.trim()
  return agent === undefined || agent === '' ? undefined : agent.slice(0, max)
}

/**
 * The log as each call's caller (`identify`: callerOf, or authenticated where etcd needs a user), its writes
 * recorded as made through `door` and, without a user, by the client's agent.
 */
export function logAsCaller(
  deps: { logs: CallerLogs; auth: Authorizer; config: { authorAgentMaxChars: number } },
  door: string,
  identify: (auth: Authorizer, call: CredentialCarrier) => Identity = callerOf,
): (call: CredentialCarrier) => Log {
  return (call) => deps.logs.as(identify(deps.auth, call), door, callerAgent(call, deps.config.authorAgentMaxChars))
}

/** The caller, who must be someone when auth is enabled (etcd's "user name is empty" otherwise). */
export function authenticated(auth: Authorizer, call: CredentialCarrier): Identity {
  const who = callerOf(auth, call)
  if (auth.enabled && who.user === undefined) throw authError('NO_IDENTITY')
  return who
}

/** The gateway's `authorization` header: etcd takes the token as is; `Bearer TOKEN` is accepted too. */
function bearerOrRaw(value: string | undefined): string | undefined {
  return value === undefined ? undefined : value.replace(/^Bearer\s+/i, '')
}

function first(values: Array<string | Buffer>): string | undefined {
  const v = values[0]
  return v === undefined ? undefined : String(v)
}

function certCn(call: CredentialCarrier): string | undefined {
  try {
    const cn = call.getAuthContext?.()?.sslPeerCertificate?.subject?.CN
    return Array.isArray(cn) ? cn[0] : cn
  } catch {
    return undefined // a plaintext connection has no TLS context
  }
}
