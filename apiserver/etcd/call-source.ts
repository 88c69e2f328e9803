/**
 * The client address of an etcd call, for the login throttle (auth/login-throttle.ts): grpc-js's and the
 * gateway's getPeer() ("host:port", "[v6]:port" or "ipv4:host:port"), else the call's HTTP/2 stream's socket
 * (kvlog's own transport). Undefined when neither is known.
 */
import type { Socket } from 'node:net'

interface CallLike {
  getPeer?: () => string
  stream?: { socket?: Socket | null }
}

/** "host" out of a peer string: the port and any "ipv4:"/"ipv6:" scheme removed, brackets dropped. */
export function peerHost(peer: string): string {
  const p = peer.replace(/^ipv[46]:/, '')
  const bracketed = /^\[([^\]]+)\]/.exec(p)
  if (bracketed) return bracketed[1]
  const colon = p.lastIndexOf(':')
  return colon > 0 && p.indexOf(':') === colon ? p.slice(0, colon) : p
}

export function callSource(call: unknown): string | undefined {
  const c = call as CallLike
  if (typeof c.getPeer === 'function') {
    const peer = c.getPeer()
    return peer === '' ? undefined : peerHost(peer)
  }
  return c.stream?.socket?.remoteAddress ?? undefined
}
