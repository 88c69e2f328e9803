/**
 * What `kvlog serve` warns about at start: a listener beyond loopback that serves without TLS (anyone on
 * the path reads every key and token) or without auth (anyone who reaches the port reads and writes every
 * key). Requiring client certificates (tlsClientCaFile) counts as auth: only their holders get in.
 */
import type { Config } from '../config/index.js'
import { isLoopback } from './ui-assets.js'

export interface Exposure {
  listener: 'listenHttp' | 'listenGrpc'
  address: string
  /** What it serves without: 'TLS', 'auth' or both. */
  without: Array<'TLS' | 'auth'>
}

export function exposures(config: Config, authEnabled: boolean): Exposure[] {
  const tls = config.tlsCertFile !== ''
  const auth = authEnabled || config.tlsClientCaFile !== ''
  const out: Exposure[] = []
  for (const listener of ['listenHttp', 'listenGrpc'] as const) {
    const address = config[listener]
    if (isLoopback(address.slice(0, address.lastIndexOf(':')))) continue
    const without: Exposure['without'] = []
    if (!tls) without.push('TLS')
    if (!auth) without.push('auth')
    if (without.length > 0) out.push({ listener, address, without })
  }
  return out
}

export function exposureMessage(e: Exposure): string {
  return `listening on ${e.address} beyond loopback without ${e.without.join(' and without ')}: ${
    e.without.includes('auth') ? 'anyone who reaches the port can read and write every key' : 'requests and tokens travel in clear text'
  }`
}
