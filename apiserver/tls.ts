/**
 * TLS for both listeners (HTTP/WebSocket and gRPC), from tlsCertFile / tlsKeyFile and, to require client
 * certificates, tlsClientCaFile. Half a configuration is an error at startup, not a silent plain listener.
 */
import { readFile } from 'node:fs/promises'
import { createSecureContext, type SecureContextOptions } from 'node:tls'
import type { Config } from '../config/index.js'
import { KvlogError } from '../log/errors.js'

export interface TlsFiles {
  cert: Buffer
  key: Buffer
  /** Present when client certificates are required. */
  ca?: Buffer
}

export async function loadTls(config: Config): Promise<TlsFiles | undefined> {
  const { tlsCertFile, tlsKeyFile, tlsClientCaFile } = config
  if (tlsCertFile === '' && tlsKeyFile === '') {
    if (tlsClientCaFile !== '') throw bad('tlsClientCaFile', 'needs tlsCertFile and tlsKeyFile')
    return undefined
  }
  if (tlsCertFile === '' || tlsKeyFile === '')
    throw bad(tlsCertFile === '' ? 'tlsCertFile' : 'tlsKeyFile', 'TLS needs both tlsCertFile and tlsKeyFile')
  const read = (path: string, field: string) =>
    readFile(path).catch((err: Error) => {
      throw bad(field, `cannot read ${path}: ${err.message}`)
    })
  return {
    cert: await read(tlsCertFile, 'tlsCertFile'),
    key: await read(tlsKeyFile, 'tlsKeyFile'),
    ...(tlsClientCaFile !== '' ? { ca: await read(tlsClientCaFile, 'tlsClientCaFile') } : {}),
  }
}

/** What a TLS listener is given: the files, and client certificates required when there is a CA. */
export function secureContextOptions(tls: TlsFiles): SecureContextOptions & { requestCert?: boolean; rejectUnauthorized?: boolean } {
  return { key: tls.key, cert: tls.cert, ...(tls.ca !== undefined ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}) }
}

/**
 * The certificate files read again (SIGHUP) and checked: a key that does not parse or does not match
 * the certificate throws here, before any listener is given it, so a bad file leaves the old one serving.
 */
export async function reloadTls(config: Config): Promise<TlsFiles | undefined> {
  const files = await loadTls(config)
  if (files === undefined) return undefined
  try {
    createSecureContext(secureContextOptions(files))
  } catch (err) {
    throw bad('tlsCertFile', `the certificate, key or CA does not load: ${(err as Error).message}`)
  }
  return files
}

function bad(field: string, message: string): KvlogError {
  return new KvlogError('INVALID_ARGUMENT', `${field}: ${message}`, { field })
}
